// @ts-check
'use strict';

/**
 * The project's serverless plugin: what the local commands (`npm start`, `npm run dev`,
 * `serverless invoke local`) need beyond serverless-offline and serverless-esbuild, and the
 * checks that stop a mistaken command at once, in one line, with nothing left behind.
 *
 * Before anything else, for every command: every stage parameter and environment variable it
 * reads (scripts/stage-params.cjs); for the local server, that its port is free; for
 * `invoke local`, that it was given an API Gateway event.
 *
 * It adds the `${local:…}` variables that serverless.yml reads:
 * - `store`: `--param=store=memory|dynamodb`; without it, `memory` for the local commands (the
 *   service of docs/spec.md keeps its data in memory) and `dynamodb` for package and deploy (on AWS the
 *   memory store is not shared between functions).
 * - `sourcemaps`: `--param=sourcemaps=on|off`; without it, on for the local commands (stack traces
 *   point at .ts lines) and off for package and deploy (what ships stays as small as it was).
 * - `logLevel`: LOG_LEVEL from the shell; `info` when unset.
 * - `httpPort`: PORT from the shell; 3000 when unset.
 * - `workFolder`: serverless-esbuild's work folder, one per process (`.esbuild/<command>-<pid>`):
 *   `serverless package` deletes its folder when done, and with a shared one it would delete the
 *   bundles of a server running beside it.
 * - `lambdaPort`: LAMBDA_PORT, or a free port, so that the invoke endpoint can be printed.
 *
 * And, for the local commands: source maps in stack traces, the invoke endpoint printed at start,
 * the process's work folder removed at exit (and those of processes gone), and under
 * `npm run dev` every saved change served by the next request (scripts/dev-reload.cjs) and a
 * typechecker in watch mode.
 */

const { spawn } = require('node:child_process');
const { readFileSync, readdirSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const path = require('node:path');
const { DevReload } = require('./dev-reload.cjs');
const { freePort } = require('./ports.cjs');
const { problemWith, settingProblems } = require('./stage-params.cjs');

/** Where the sample events of `invoke local` are, one per function. */
const EVENTS = 'events';

/**
 * Stops the command with these lines, and nothing else: the framework would frame an error in a
 * banner, and serverless-offline would print a busy port's error object with its stack.
 * @param {string[]} lines
 * @returns {never}
 */
function stop(lines) {
  process.stderr.write(lines.map((line) => `${line}\n`).join(''));
  process.exit(1);
}

/** @param {string[]} commands */
const isLocal = (commands) => commands[0] === 'offline' || (commands[0] === 'invoke' && commands[1] === 'local');

/**
 * The shape of an API Gateway HTTP API event (payload 2.0), as far as the handlers rely on it.
 * @param {unknown} event
 */
function isHttpApiEvent(event) {
  if (typeof event !== 'object' || event === null) return false;
  const { version, requestContext } =
    /** @type {{ version?: unknown, requestContext?: { http?: { method?: unknown, path?: unknown } } }} */ (event);
  return (
    version === '2.0' &&
    typeof requestContext?.http?.method === 'string' &&
    typeof requestContext.http.path === 'string'
  );
}

/** @param {number} pid */
function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

/**
 * The parts of the Serverless Framework's instance that this plugin uses.
 * @typedef {{
 *   serviceDir?: string,
 *   config: { servicePath: string },
 *   processedInput: { commands: string[], options: Record<string, unknown> },
 *   configurationInput?: { params?: Record<string, Record<string, unknown> | undefined> },
 *   classes: { Error: new (message: string, code?: string) => Error },
 *   service: {
 *     custom: { watch?: string[], 'serverless-offline': { httpPort: number, lambdaPort: number } },
 *     functions: Record<string, unknown>,
 *     getFunction(name: string): { name: string },
 *   },
 *   pluginManager: { plugins: object[], spawn(event: string): Promise<void> },
 * }} Serverless
 * @typedef {import('./dev-reload.cjs').EsbuildPlugin} EsbuildPlugin
 * @typedef {import('./dev-reload.cjs').Log} Log
 * @typedef {{ resolveVariable(variable: string): Promise<unknown>, address?: string }} ResolveArgs
 */

class LocalWorkflowPlugin {
  /**
   * @param {Serverless} serverless
   * @param {Record<string, unknown>} options
   * @param {{ log: Log }} utils
   */
  constructor(serverless, options, utils) {
    this.serverless = serverless;
    this.options = options;
    this.log = utils.log;
    /** @type {string} */
    this.serviceDir = serverless.serviceDir ?? serverless.config.servicePath;
    /** @type {import('node:child_process').ChildProcess | undefined} */
    this.typecheck = undefined;
    /** @type {DevReload | undefined} */
    this.dev = undefined;
    this.configurationVariablesSources = {
      local: { resolve: (/** @type {ResolveArgs} */ args) => this.resolve(args) },
    };
    this.hooks = {
      initialize: () => {
        this.initialize();
      },
      'before:offline:start': () => this.beforeOffline(),
      'before:offline:start:init': () => this.beforeOffline(),
      // After serverless-esbuild's first build, before serverless-offline loads anything.
      'offline:start': () => {
        this.dev?.start();
      },
      'offline:start:init': () => {
        this.dev?.start();
      },
    };
    const problems = [...this.settingProblems(), ...this.eventProblems()];
    if (problems.length > 0) stop(problems);
  }

  /** @returns {string[]} */
  get commands() {
    return this.serverless.processedInput.commands;
  }

  /** @returns {boolean} */
  get local() {
    return isLocal(this.commands);
  }

  /** The work folder of this process, relative to the service: `.esbuild/<command>-<pid>`. */
  get workFolder() {
    const name = this.commands[0] === 'invoke' ? 'invoke' : (this.commands[0] ?? 'command');
    return path.join('.esbuild', `${name}-${process.pid}`);
  }

  /** Every stage parameter given (on the command line, or in serverless.yml for this stage) and variable read, checked. */
  settingProblems() {
    const given = this.options.param ?? [];
    const cli = (Array.isArray(given) ? given : [given]).map(String);
    const params = this.serverless.configurationInput?.params ?? {};
    const stage = typeof this.options.stage === 'string' ? this.options.stage : 'dev';
    const env = { ...process.env };
    // Only the local server reads the ports.
    if (this.commands[0] !== 'offline') {
      delete env.PORT;
      delete env.LAMBDA_PORT;
    }
    return settingProblems({ cli, file: { ...params.default, ...params[stage] }, env });
  }

  /** `invoke local` with no event, or one that is not an API Gateway HTTP API event: the handlers take no other. */
  eventProblems() {
    if (!(this.commands[0] === 'invoke' && this.commands[1] === 'local')) return [];
    const name = typeof this.options.function === 'string' ? this.options.function : '<function>';
    const samples = readdirSync(path.join(this.serviceDir, EVENTS)).filter((file) => file.endsWith('.json'));
    const hint = `start from its sample, --path ${EVENTS}/${samples.includes(`${name}.json`) ? name : '<function>'}.json (${EVENTS}/ has ${samples.join(', ')})`;
    const { path: file, data } = this.options;
    if (file === undefined && data === undefined) return [`invoke local needs an API Gateway event: ${hint}`];
    /** @type {unknown} */
    let event;
    try {
      event = JSON.parse(
        typeof file === 'string' ? readFileSync(path.resolve(this.serviceDir, file), 'utf8') : String(data),
      );
    } catch (error) {
      const reason = /** @type {Error} */ (error).message.split('\n')[0] ?? '';
      return [`invoke local: ${typeof file === 'string' ? file : '--data'} is not a JSON event (${reason}): ${hint}`];
    }
    if (isHttpApiEvent(event)) return [];
    return [
      `invoke local: ${typeof file === 'string' ? file : '--data'} is not an API Gateway HTTP API event (version "2.0", requestContext.http.method and .path): ${hint}`,
    ];
  }

  /** @param {ResolveArgs} args */
  async resolve(args) {
    switch (args.address) {
      case 'store':
        return { value: await this.param(args, 'store', this.local ? 'memory' : 'dynamodb') };
      case 'sourcemaps':
        return { value: (await this.param(args, 'sourcemaps', this.local ? 'on' : 'off')) === 'on' };
      case 'logLevel': {
        // Unset or empty: info. (Anything else was checked.)
        const level = process.env.LOG_LEVEL ?? '';
        return { value: level === '' ? 'info' : level.toLowerCase() };
      }
      case 'httpPort':
        return { value: Number(process.env.PORT ?? '') || 3000 };
      case 'workFolder':
        return { value: this.workFolder };
      case 'lambdaPort':
        return { value: process.env.LAMBDA_PORT ? Number(process.env.LAMBDA_PORT) : await freePort() };
      default:
        throw new this.serverless.classes.Error(`Unknown variable \${local:${args.address ?? ''}}`);
    }
  }

  /**
   * The stage parameter `name`, or `fallback` when it is not given; checked (the constructor
   * checked what it could see, but a value serverless.yml builds from variables is known only now).
   * @param {ResolveArgs} args
   * @param {string} name
   * @param {string} fallback
   */
  async param(args, name, fallback) {
    const value = String(await args.resolveVariable(`param:${name}, '${fallback}'`));
    const problem = problemWith(name, value);
    if (problem !== undefined) throw new this.serverless.classes.Error(problem, 'TODO_INVALID_PARAM');
    return value;
  }

  initialize() {
    this.sweepWorkFolders();
    if (!this.local) return;
    // Stack traces through the bundles' source maps, at .ts files and lines. The functions run
    // in this process (useInProcess, and invoke local), so this reaches them.
    process.setSourceMapsEnabled(true);
    // serverless-esbuild leaves its work folder behind after offline and invoke local.
    const workFolder = path.join(this.serviceDir, this.workFolder);
    process.once('exit', () => {
      this.typecheck?.kill();
      rmSync(workFolder, { recursive: true, force: true });
    });
  }

  /** Removes the work folders of processes that are gone (a server killed, a package that failed). */
  sweepWorkFolders() {
    const root = path.join(this.serviceDir, '.esbuild');
    let entries;
    try {
      entries = readdirSync(root);
    } catch {
      return;
    }
    for (const entry of entries) {
      const pid = Number(/-(\d+)$/.exec(entry)?.[1]);
      if (!(pid > 0 && isRunning(pid))) rmSync(path.join(root, entry), { recursive: true, force: true });
    }
  }

  /** Before serverless-esbuild's first build: the ports checked, the invoke endpoint printed, and under `npm run dev` the reloader made. */
  async beforeOffline() {
    const service = this.serverless.service;
    const offline = service.custom['serverless-offline'];
    await portFree(offline.httpPort, 'PORT', 'the API');
    if (process.env.LAMBDA_PORT) await portFree(offline.lambdaPort, 'LAMBDA_PORT', 'the Lambda invoke endpoint');
    const names = Object.keys(service.functions).map((name) => service.getFunction(name).name);
    this.log.notice(
      `Lambda invoke endpoint: http://localhost:${offline.lambdaPort}/2015-03-31/functions/<name>/invocations, ` +
        `with <name> one of ${names.join(', ')} (see README, "Invoking a function")`,
    );
    /** @type {string[]} */
    const folders = service.custom.watch ?? [];
    if (folders.length === 0) return;
    const esbuild = /** @type {EsbuildPlugin | undefined} */ (
      this.serverless.pluginManager.plugins.find((plugin) => plugin.constructor.name === 'EsbuildServerlessPlugin')
    );
    if (esbuild === undefined) throw new this.serverless.classes.Error('serverless-esbuild is not loaded');
    this.dev = new DevReload({ esbuild, log: this.log, serviceDir: this.serviceDir, folders });
    this.startTypecheck();
  }

  /**
   * `tsc --watch` beside the server: esbuild strips types without checking them, so a type
   * error would otherwise be served without a word. Its findings are printed as they come.
   */
  startTypecheck() {
    const tsc = require.resolve('typescript/bin/tsc', { paths: [this.serviceDir] });
    const child = spawn(process.execPath, [tsc, '--noEmit', '--watch', '--preserveWatchOutput', '--pretty', 'false'], {
      cwd: this.serviceDir,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.typecheck = child;
    let pending = '';
    child.stdout.on('data', (/** @type {Buffer} */ chunk) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        // The errors, and the count after each check; not the "Starting compilation…" chatter.
        if (/error TS\d+|Found \d+ errors?/.test(line)) this.log.notice(`typecheck: ${line.replace(/^.*? - /, '')}`);
      }
    });
  }
}

/**
 * Stops the command in one line when `port` is taken, as serverless-offline would find out only
 * after printing its routes, with an error object and its stack.
 * @param {number} port
 * @param {string} variable what sets it
 * @param {string} what
 * @returns {Promise<void>}
 */
function portFree(port, variable, what) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (/** @type {NodeJS.ErrnoException} */ error) => {
      const next = port < 65_535 ? port + 1 : port - 1;
      stop([
        error.code === 'EADDRINUSE'
          ? `Port ${port} (${variable}) is in use, so ${what} cannot listen there: stop what runs on it, or choose another, e.g. ${variable}=${next}`
          : `Port ${port} (${variable}) cannot be listened on (${error.code ?? error.message}): choose another, e.g. ${variable}=${next}`,
      ]);
    });
    probe.listen({ port, host: 'localhost', exclusive: true }, () => {
      probe.close(() => {
        resolve();
      });
    });
  });
}

module.exports = LocalWorkflowPlugin;
