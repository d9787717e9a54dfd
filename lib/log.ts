/**
 * One JSON line per event on stdout, which Lambda sends to CloudWatch as it is.
 *
 * A few lines over process.stdout rather than Powertools' Logger: that logger is about 24 KB
 * minified, ten times a whole function bundle here. Writing to stdout directly, not through
 * console, keeps Lambda from prefixing each line with its own text, so every line parses as JSON.
 */

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: Number.POSITIVE_INFINITY } as const;

export type LogLevel = keyof typeof LEVELS;

function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(LEVELS, value);
}

/** LOG_LEVEL, read once per container: `debug`, `info` (the default), `warn`, `error` or `silent`. */
export function logLevelFrom(value: string | undefined): LogLevel {
  const level = value?.toLowerCase() ?? 'info';
  return isLogLevel(level) ? level : 'info';
}

const threshold = LEVELS[logLevelFrom(process.env.LOG_LEVEL)];

export function log(level: Exclude<LogLevel, 'silent'>, fields: Record<string, unknown>): void {
  if (LEVELS[level] < threshold) return;
  process.stdout.write(`${JSON.stringify({ level, time: new Date().toISOString(), ...fields })}\n`);
}

/** An error as plain JSON, with its stack and the chain of causes (the SDK's error sits in `cause`). */
export function errorFields(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error)) return { message: String(error) };
  return {
    name: error.name,
    message: error.message,
    stack: error.stack,
    ...(error.cause !== undefined && depth < 3 ? { cause: errorFields(error.cause, depth + 1) } : {}),
  };
}
