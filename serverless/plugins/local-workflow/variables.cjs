// @ts-check
'use strict';

/**
 * The `${local:…}` variables that serverless.yml reads, whose values depend on the command or the
 * shell:
 * - `store`: `--param=store=memory|dynamodb`; without it, `memory` for the local commands (the
 *   specification's service keeps its data in memory) and `dynamodb` for package and deploy (on
 *   AWS the memory store is not shared between functions).
 * - `sourcemaps`: `--param=sourcemaps=on|off`; without it, on for the local commands (stack traces
 *   point at .ts lines) and off for package and deploy (what ships stays as small as it was).
 * - `logLevel`: LOG_LEVEL from the shell; `info` when unset.
 * - `httpPort`: PORT from the shell; 3000 when unset.
 * - `lambdaPort`: LAMBDA_PORT, or a free port, so that the invoke endpoint can be printed.
 * - `workFolder`: serverless-esbuild's work folder, one per process (work-folders.cjs).
 */

const { problemWith } = require('../stage-params.cjs');
const { freePort, requestedPorts } = require('./ports.cjs');

/**
 * @typedef {{ resolveVariable(variable: string): Promise<unknown>, address?: string }} ResolveArgs
 * @typedef {new (message: string, code?: string) => Error} ServerlessErrorClass
 * @typedef {{ local: boolean, workFolder: string, ServerlessError: ServerlessErrorClass }} Command
 * `local`: offline or invoke local; `workFolder`: this process's, relative to the service.
 */

/**
 * @param {ResolveArgs} args
 * @param {Command} command
 * @returns {Promise<{ value: unknown }>}
 */
async function resolveLocalVariable(args, { local, workFolder, ServerlessError }) {
  switch (args.address) {
    case 'store':
      return { value: await checkedParam(args, 'store', local ? 'memory' : 'dynamodb', ServerlessError) };
    case 'sourcemaps':
      return { value: (await checkedParam(args, 'sourcemaps', local ? 'on' : 'off', ServerlessError)) === 'on' };
    case 'logLevel': {
      // Unset or empty: info. (Anything else was checked.)
      const level = process.env.LOG_LEVEL ?? '';
      return { value: level === '' ? 'info' : level.toLowerCase() };
    }
    case 'httpPort':
      return { value: requestedPorts(process.env).http };
    case 'lambdaPort':
      return { value: requestedPorts(process.env).lambda ?? (await freePort()) };
    case 'workFolder':
      return { value: workFolder };
    default:
      throw new ServerlessError(`Unknown variable \${local:${args.address ?? ''}}`, 'TODO_UNKNOWN_VARIABLE');
  }
}

/**
 * The stage parameter `name`, or `fallback` when it is not given; checked (the settings were
 * checked before the framework resolved anything, but a value serverless.yml builds from
 * variables is known only now).
 * @param {ResolveArgs} args
 * @param {string} name
 * @param {string} fallback
 * @param {ServerlessErrorClass} ServerlessError
 */
async function checkedParam(args, name, fallback, ServerlessError) {
  const value = String(await args.resolveVariable(`param:${name}, '${fallback}'`));
  const problem = problemWith(name, value);
  if (problem !== undefined) throw new ServerlessError(problem, 'TODO_INVALID_PARAM');
  return value;
}

module.exports = { resolveLocalVariable };
