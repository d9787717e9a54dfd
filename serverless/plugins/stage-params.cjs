// @ts-check
'use strict';

/**
 * Every setting a command takes, and what each accepts: the stage parameters of serverless.yml
 * (`--param=<name>=<value>`, or `params:` in serverless.yml) and the environment variables the
 * local commands read. The local workflow plugin (local-workflow.cjs) checks them all here, before
 * the framework resolves or builds anything, and stops a command with one line per mistake; the
 * operations plugin checks its own again once serverless.yml's variables are resolved.
 *
 * The defaults stay in serverless.yml's `params.default`, beside what they configure; `store`
 * and `sourcemaps` have none there, as theirs depend on the command (local-workflow/variables.cjs).
 */

const { closest } = require('fastest-levenshtein');

/**
 * @typedef {{ accepts: string, check(value: string): boolean }} Rule
 * `accepts` completes "must be …" in the message.
 */

/**
 * @param {readonly string[]} values
 * @returns {Rule}
 */
function oneOf(values) {
  const quoted = values.map(String);
  return {
    accepts: quoted.length === 2 ? quoted.join(' or ') : `one of ${quoted.join(', ')}`,
    check: (value) => quoted.includes(value),
  };
}

/**
 * A number from `min` to `max`; whole when `whole`.
 * @param {number} min
 * @param {number} max
 * @param {boolean} whole
 * @returns {Rule}
 */
function number(min, max, whole) {
  const pattern = whole ? /^\d+$/ : /^\d+(\.\d+)?$/;
  return {
    accepts: `${whole ? 'a whole number' : 'a number'} from ${min} to ${max}`,
    check: (value) => pattern.test(value) && Number(value) >= min && Number(value) <= max,
  };
}

/**
 * @param {RegExp} pattern
 * @param {string} accepts
 * @returns {Rule}
 */
function matching(pattern, accepts) {
  return { accepts, check: (value) => pattern.test(value) };
}

const SWITCH = oneOf(['on', 'off']);
/** A function's reserved concurrency: Lambda's default for a whole account is 1,000, and 0 would stop the function. */
const CONCURRENCY = number(1, 1_000, true);
/** The values each named setting takes; test/unit/local-plugin.test.ts holds them to lib/ and serverless.yml. */
const STORES = ['memory', 'dynamodb'];
const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'];
/** The retention periods CloudWatch Logs offers, in days (AWS::Logs::LogGroup RetentionInDays). */
const RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

/** @type {Record<string, Rule>} */
const PARAMS = {
  // memory | dynamodb; without it, memory for the local commands and dynamodb for package and deploy.
  store: oneOf(STORES),
  // Source maps in the bundles; without it, on for the local commands and off for what ships.
  sourcemaps: SWITCH,
  mode: oneOf(['start', 'dev']),
  tracing: SWITCH,
  alarms: SWITCH,
  alarmEmail: matching(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'an email address'),
  // API Gateway's own bounds for a stage: 10,000 requests a second, bursts of 5,000, by default.
  throttleRate: number(1, 10_000, false),
  throttleBurst: number(1, 5_000, true),
  reservedConcurrency: CONCURRENCY,
  // off: no function's concurrency is capped (an account whose quota cannot set the caps aside).
  concurrencyCaps: SWITCH,
  // Each function's own cap; reservedConcurrency, when set, overrides all five.
  listTodosConcurrency: CONCURRENCY,
  getTodoConcurrency: CONCURRENCY,
  createTodoConcurrency: CONCURRENCY,
  updateTodoConcurrency: CONCURRENCY,
  deleteTodoConcurrency: CONCURRENCY,
  // read | written: whether lists answer from the list's version (docs/operations.md, two deploys from older code).
  listVersion: oneOf(['read', 'written']),
  logRetentionDays: oneOf(RETENTION_DAYS.map(String)),
  // DynamoDB's rule for table names.
  table: matching(/^[A-Za-z0-9_.-]{3,255}$/, 'a DynamoDB table name: 3 to 255 letters, digits, _, . or -'),
};

const PORT = number(1, 65_535, true);

/** @type {Record<string, Rule>} */
const ENVIRONMENT = {
  LOG_LEVEL: { accepts: `one of ${LOG_LEVELS.join(', ')}`, check: (value) => LOG_LEVELS.includes(value.toLowerCase()) },
  PORT,
  LAMBDA_PORT: PORT,
};

/**
 * The problem with one setting's value, as one line; undefined when there is none.
 * @param {string} name a stage parameter, or an environment variable
 * @param {unknown} value
 */
function problemWith(name, value) {
  const param = PARAMS[name];
  const rule = param ?? ENVIRONMENT[name];
  if (rule === undefined) throw new Error(`${name} is not a setting this project knows`);
  const text = String(value);
  if (rule.check(text)) return undefined;
  return `${param === undefined ? name : `--param=${name}`} must be ${rule.accepts}, not "${text}"`;
}

/**
 * @typedef {{
 *   cli: readonly string[],
 *   file: Readonly<Record<string, unknown>>,
 *   env: Readonly<Record<string, string | undefined>>,
 * }} Settings
 * `cli`: the `--param` options as given (`name=value`); `file`: serverless.yml's params for the
 * default and the command's stage, merged; `env`: the environment.
 */

/**
 * Every mistake in `settings`, one line each: unknown parameter names (with the closest known
 * name), values a parameter or variable does not take. Values serverless.yml builds from
 * variables (`${…}`) are the framework's to resolve, and not checked here.
 * @param {Settings} settings
 * @returns {string[]}
 */
function settingProblems({ cli, file, env }) {
  /** @type {string[]} */
  const problems = [];
  /** @param {string} name @param {string} where */
  function unknown(name, where) {
    const known = Object.keys(PARAMS);
    return `Unknown stage parameter "${name}" (${where}): did you mean "${closest(name, known)}"? Known: ${known.join(', ')}`;
  }
  for (const [name, value] of Object.entries(file)) {
    if (PARAMS[name] === undefined) problems.push(unknown(name, 'params in serverless.yml'));
    else if (!(typeof value === 'string' && value.includes('${'))) {
      const problem = problemWith(name, value);
      if (problem !== undefined) problems.push(`${problem} (params in serverless.yml)`);
    }
  }
  for (const option of cli) {
    const at = option.indexOf('=');
    const name = at < 0 ? option : option.slice(0, at);
    if (at < 0) problems.push(`--param=${option} needs a value: --param=${option}=<value>`);
    else if (PARAMS[name] === undefined) problems.push(unknown(name, `--param=${option}`));
    else {
      const problem = problemWith(name, option.slice(at + 1));
      if (problem !== undefined) problems.push(problem);
    }
  }
  for (const name of Object.keys(ENVIRONMENT)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    const problem = problemWith(name, value);
    if (problem !== undefined) problems.push(problem);
  }
  return problems;
}

module.exports = { PARAMS, STORES, LOG_LEVELS, RETENTION_DAYS, settingProblems, problemWith };
