import { writeSync } from 'node:fs';
import { inspect } from 'node:util';

/**
 * One JSON line per event on stdout, which Lambda sends to CloudWatch as it is.
 *
 * A few lines over stdout rather than Powertools' Logger: that logger is about 24 KB minified,
 * several times the service's own code in a function's bundle. Writing to stdout directly, not through console,
 * keeps Lambda from prefixing each line with its own text, so every line parses as JSON.
 */

/** In increasing order of severity; `silent` writes nothing. */
export const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;

export type LogLevel = (typeof LEVELS)[number];

/** `debug`, `info` (the default), `warn`, `error` or `silent`, in any case. */
export function logLevelFrom(value: string | undefined): LogLevel {
  const wanted = value?.toLowerCase();
  return LEVELS.find((level) => level === wanted) ?? 'info';
}

/** The index in LEVELS below which nothing is written; undefined until LOG_LEVEL is read. */
let threshold: number | undefined;

/**
 * Reads LOG_LEVEL: once per container, at its first log line (not at load, and not at every line:
 * a lookup in process.env costs about 0.5 µs, a quarter of a warm request). Call it again to take
 * a changed LOG_LEVEL, as the tests do.
 */
export function readLogLevel(): number {
  threshold = LEVELS.indexOf(logLevelFrom(process.env.LOG_LEVEL));
  return threshold;
}

export function log(level: Exclude<LogLevel, 'silent'>, fields: Record<string, unknown>): void {
  if (LEVELS.indexOf(level) < (threshold ?? readLogLevel())) return;
  // Epoch milliseconds, as pino writes them: Date.now() is cheap from the first call, where a
  // first `new Date().toISOString()` costs about 0.2 ms of a cold start.
  writeLine(`${JSON.stringify({ level, time: Date.now(), ...fields })}\n`);
}

/**
 * A synchronous write to fd 1, as pino's sonic-boom does: the first use of process.stdout
 * builds a stream, 1.5 to 2.5 ms of every cold start; writeSync costs about 0.2 ms. Where
 * stdout is a non-blocking pipe that is full (EAGAIN), or takes only part of the line, the
 * rest goes through process.stdout, which queues it.
 */
export function writeLine(line: string): void {
  const bytes = Buffer.from(line);
  let written = 0;
  try {
    written = writeSync(1, bytes);
  } catch {
    // Nothing was written; process.stdout takes all of it.
  }
  if (written < bytes.length) process.stdout.write(bytes.subarray(written));
}

/**
 * An error as plain JSON, with its stack and the chain of causes (the SDK's error sits in
 * `cause`), three deep at most. JSON.stringify leaves out the `cause: undefined` at the end.
 */
export function errorFields(error: unknown, depth = 0): unknown {
  if (error === undefined) return undefined;
  if (!(error instanceof Error)) return { message: typeof error === 'string' ? error : inspect(error) };
  return {
    name: error.name,
    message: error.message,
    stack: error.stack,
    cause: depth < 3 ? errorFields(error.cause, depth + 1) : undefined,
  };
}
