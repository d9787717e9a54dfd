// @ts-check
'use strict';

/**
 * The framework's commands in this service (`npm start`, `npm run dev`, `npm run package`, `npm run deploy`,
 * `npx serverless …`) held to the project's command-line convention (scripts/command-line.ts), as the
 * project's own scripts are:
 * - `npm start -- --help` and `npm run dev -- --help` print the project's usage, then every option the
 *   command takes, and do nothing else. serverless-offline's own help says nothing of PORT and LAMBDA_PORT,
 *   and gives the invoke endpoint's port as 3002, where here it is LAMBDA_PORT or a free one.
 * - An option the command does not take is one line, with the closest one it takes, and exit 2, before
 *   anything is resolved, built or deployed (so before any credentials are looked for). The framework
 *   would say "Detected unrecognized CLI options" a moment later, with no suggestion. What a command takes
 *   is what the framework would check it against: its schema of commands, with the options every loaded
 *   plugin declares, resolved by the framework's own code.
 */

const path = require('node:path');
const { distance } = require('fastest-levenshtein');
const { LOG_LEVELS, PARAMS } = require('../stage-params.cjs');

/**
 * @typedef {{ usage?: string, shortcut?: string, type?: string }} OptionSchema
 * @typedef {Record<string, OptionSchema>} OptionsSchema
 * @typedef {{ options: Record<string, unknown>, accepted: OptionsSchema | undefined }} CommandLine
 * `options`: as the framework reads the command line; `accepted`: what the command takes, undefined
 * for a command the framework does not know (it says so itself).
 * @typedef {(plugins: Set<object>, context: { providerName: string }) => unknown} ResolveFinalSchema
 * @typedef {(schema: unknown) => { options: Record<string, unknown>, commandSchema?: { options?: OptionsSchema } }} ResolveInput
 * The framework's node_modules/serverless/lib/cli/commands-schema/resolve-final.js and
 * node_modules/serverless/lib/cli/resolve-input.js.
 */

/**
 * The command line as the framework will read it once every plugin is loaded, and what its command takes.
 * These are the framework's own functions, from the copy that runs (osls: serverless.config.serverlessPath
 * is its lib/); the framework calls them itself right after every plugin's asyncInit, then refuses any
 * option outside `accepted`.
 * @param {{
 *   config: { serverlessPath: string },
 *   service: { provider: { name: string } },
 *   pluginManager: { externalPlugins: Set<object> },
 * }} serverless
 * @returns {CommandLine}
 */
function commandLineOf(serverless) {
  const lib = serverless.config.serverlessPath;
  /** @type {unknown} */
  const resolveFinalSchema = require(path.join(lib, 'cli/commands-schema/resolve-final'));
  /** @type {unknown} */
  const resolveInput = require(path.join(lib, 'cli/resolve-input'));
  const schema = /** @type {ResolveFinalSchema} */ (resolveFinalSchema)(serverless.pluginManager.externalPlugins, {
    providerName: serverless.service.provider.name,
  });
  const input = /** @type {ResolveInput} */ (resolveInput)(schema);
  return { options: input.options, accepted: input.commandSchema?.options };
}

/**
 * How the user ran the command, for the lines that answer them: `npm start`, `npm run dev`, or, when npm's
 * script is not this command (or it was typed without npm), `serverless <command>`.
 * @param {readonly string[]} commands
 * @param {Readonly<Record<string, string | undefined>>} env
 */
function toolName(commands, env) {
  const command = commands.join(' ');
  const script = env.npm_lifecycle_script ?? '';
  const event = env.npm_lifecycle_event;
  // The script runs this very command (`serverless offline`, or serverless.js offline under `npm run debug`):
  // not, say, a test that npm test started, which runs serverless in its turn.
  const runsIt = new RegExp(`\\bserverless(?:\\.js)? ${command}(?: |$)`).test(script);
  if (event === undefined || !runsIt) return `serverless ${command}`;
  return event === 'start' ? 'npm start' : `npm run ${event}`;
}

/**
 * The settings that the local server takes from the environment, which a user may have tried to give as
 * options (`--port 4000`): each is suggested as the variable, with the value given.
 */
const LOCAL_SERVER_VARIABLES = ['PORT', 'LAMBDA_PORT'];

/**
 * `--name`, or `-n` for a one-letter name, as a user types it.
 * @param {string} name
 */
function asTyped(name) {
  return name.length === 1 ? `-${name}` : `--${name}`;
}

/**
 * How to see a command's usage: after npm's `--`, for an npm script.
 * @param {string} tool
 */
function helpOf(tool) {
  return tool.startsWith('npm ') ? `${tool} -- --help` : `${tool} --help`;
}

/**
 * The first option in `options` that `accepted` does not hold, as the one line that says so and names the
 * closest the command takes; undefined when there is none. A one-letter option is compared with the
 * options' one-letter shortcuts, a longer one with their names, without case, dashes or underscores; for
 * the local server PORT and LAMBDA_PORT are among the names, suggested as the variable with the value
 * given (`--prot 4000`: did you mean "PORT=4000 npm start"?).
 * @param {{ options: Record<string, unknown>, accepted: OptionsSchema, tool: string, localServer: boolean }} commandLine
 * @returns {string | undefined}
 */
function unknownOptionLine({ options, accepted, tool, localServer }) {
  const unknown = Object.keys(options).find((name) => !(name in accepted));
  if (unknown === undefined) return undefined;
  const given = options[unknown];
  /** @type {{ compared: string, suggested: string }[]} */
  const candidates = [];
  if (unknown.length === 1) {
    for (const { shortcut } of Object.values(accepted)) {
      if (shortcut !== undefined) candidates.push({ compared: shortcut, suggested: asTyped(shortcut) });
    }
  } else {
    if (localServer) {
      const value = typeof given === 'string' && given !== '' ? given : '<port>';
      for (const variable of LOCAL_SERVER_VARIABLES) {
        candidates.push({ compared: variable, suggested: `${variable}=${value} ${tool}` });
      }
    }
    for (const name of Object.keys(accepted)) candidates.push({ compared: name, suggested: asTyped(name) });
  }
  const wanted = comparable(unknown);
  /** @param {{ compared: string }} candidate */
  function away(candidate) {
    return distance(wanted, comparable(candidate.compared));
  }
  // The first of the nearest: for the local server, a variable, where an option is as near.
  const closest = candidates.reduce(
    (best, candidate) => (best === undefined || away(candidate) < away(best) ? candidate : best),
    /** @type {{ compared: string, suggested: string } | undefined} */ (undefined),
  );
  const hint = closest === undefined ? 'it takes none' : `did you mean "${closest.suggested}"?`;
  return `Unknown option "${asTyped(unknown)}" for ${tool}: ${hint} (${helpOf(tool)})`;
}

/**
 * A name as it is compared with another: without case, dashes or underscores (`--lambda-port`, `LAMBDA_PORT`).
 * @param {string} name
 */
function comparable(name) {
  return name.toLowerCase().replace(/[-_]/g, '');
}

/**
 * What the help says of the options whose value serverless.yml takes from the environment, in place of
 * serverless-offline's words (its defaults are not this project's).
 * @type {Record<string, string>}
 */
const SET_BY_VARIABLE = {
  httpPort: "The API's port: set PORT instead, which is checked before anything is built and printed with the routes.",
  lambdaPort:
    "The Lambda invoke endpoint's port: set LAMBDA_PORT instead, which is checked before anything is built and printed.",
};

/** The help's width, where its own words are wrapped. */
const LINE_WIDTH = 100;

/** The stage parameters the local server reads, and what each is for; the others shape what is deployed. */
const LOCAL_PARAMS = {
  store: 'where the data is kept (default memory; npm run start:dynamodb for DynamoDB)',
  sourcemaps: 'stack traces at the .ts lines (default on)',
  mode: 'dev reloads every saved change, as npm run dev (default start)',
};

/**
 * Rows of two columns, the first padded to the widest.
 * @param {readonly (readonly [string, string])[]} rows
 */
function columns(rows) {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}   ${right}\n`).join('');
}

/**
 * `text` in lines of at most LINE_WIDTH characters, each after `indent`, broken between words.
 * @param {string} text
 * @param {string} indent
 */
function wrapped(text, indent) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > LINE_WIDTH) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return [...lines, line].map((each) => `${indent}${each}\n`).join('');
}

/**
 * The usage `npm start -- --help` and `npm run dev -- --help` print: what the command does, the settings
 * the project adds, then every option the command takes (`accepted`, the framework's and its plugins').
 * @param {{ tool: string, dev: boolean, accepted: OptionsSchema }} command
 */
function localServerHelp({ tool, dev, accepted }) {
  const what = dev
    ? 'Serves the API as npm start does, and serves every change saved under functions/ or lib/ from the next\n' +
      'request, printing each reload, a change that does not build, and type errors as you go.'
    : 'Serves the API with serverless offline: the five functions in this process, sharing one in-memory store.';
  const otherParams = Object.keys(PARAMS).filter((name) => !(name in LOCAL_PARAMS));
  const options = Object.entries(accepted).map(([name, option]) => {
    const typed = option.shortcut === undefined ? `--${name}` : `--${name}, -${option.shortcut}`;
    return /** @type {const} */ ([typed, SET_BY_VARIABLE[name] ?? option.usage ?? '']);
  });
  // npm hands a script's options on after its own `--`.
  const usage = tool.startsWith('npm ') ? `${tool} [-- <option> ...]` : `${tool} [<option> ...]`;
  return `Usage: ${usage}

${what}
Settings are checked before anything is built: a mistake stops it with one line.

Environment:
${columns([
  ['PORT=<port>', "the API's port (default 3000), http://localhost:<port>/todos"],
  ['LAMBDA_PORT=<port>', "the Lambda invoke endpoint's port, printed at start (default: a free port, never PORT's)"],
  ['LOG_LEVEL=<level>', `${LOG_LEVELS.join(', ')} (default info)`],
])}
Stage parameters, --param=<name>=<value>:
${columns(Object.entries(LOCAL_PARAMS).map(([name, says]) => [`--param=${name}=<${name}>`, `${PARAMS[name]?.accepts ?? ''}: ${says}`]))}${wrapped(`and those that shape a deploy (docs/contributing.md#settings): ${otherParams.join(', ')}`, '  ')}
Options:
${columns(options)}`;
}

module.exports = { commandLineOf, localServerHelp, toolName, unknownOptionLine };
