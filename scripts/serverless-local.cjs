// @ts-check
'use strict';

/**
 * The project's serverless plugin: what the local commands (`npm start`, `npm run dev`,
 * `serverless invoke local`) need beyond serverless-offline and serverless-esbuild, and the
 * checks that keep a misconfigured command from going any further.
 *
 * It adds the `${local:…}` variables that serverless.yml reads:
 * - `store`: `--param=store=memory|dynamodb`; without it, `memory` for the local commands (the
 *   service of SPEC.md keeps its data in memory) and `dynamodb` for package and deploy (on AWS the
 *   memory store is not shared between functions). Any other value stops the command.
 * - `sourcemaps`: `--param=sourcemaps=on|off`; without it, on for the local commands (stack traces
 *   point at .ts lines) and off for package and deploy (what ships stays as small as it was).
 * - `logLevel`: LOG_LEVEL from the shell, checked; `info` when unset.
 * - `workFolder`: serverless-esbuild's work folder, one per process (`.esbuild/<command>-<pid>`):
 *   `serverless package` deletes its folder when done, and with a shared one it would delete the
 *   bundles of a server running beside it.
 * - `lambdaPort`: LAMBDA_PORT, or a free port, so that the invoke endpoint can be printed.
 *
 * And, for the local commands: source maps in stack traces, the invoke endpoint printed at start,
 * the process's work folder removed at exit (and those of processes gone), and under
 * `npm run dev` rebuilds on every saved change, answers that say so while a change does not
 * build, and a typechecker in watch mode.
 */

const { spawn } = require('node:child_process');
const { readdirSync, rmSync, watch, writeFileSync } = require('node:fs');
const path = require('node:path');
const { freePort } = require('./ports.cjs');

/** The values each checked setting takes; test/unit/local-plugin.test.ts holds them to lib/. */
const STORES = ['memory', 'dynamodb'];
const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'];
const SWITCHES = ['on', 'off'];

/** @param {string[]} commands */
const isLocal = (commands) => commands[0] === 'offline' || (commands[0] === 'invoke' && commands[1] === 'local');

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
 *   processedInput: { commands: string[] },
 *   classes: { Error: new (message: string, code?: string) => Error },
 *   service: {
 *     custom: { watch?: string[], 'serverless-offline': { lambdaPort: number } },
 *     functions: Record<string, unknown>,
 *     getFunction(name: string): { name: string },
 *   },
 *   pluginManager: { plugins: object[], spawn(event: string): Promise<void> },
 * }} Serverless
 * The parts of serverless-esbuild's plugin that rebuilding uses.
 * @typedef {{ bundle(): Promise<void>, buildDirPath: string, functionEntries: { entry: string }[] }} EsbuildPlugin
 * @typedef {{ notice(message: string): void, error(message: string): void }} Log
 * @typedef {{ resolveVariable(variable: string): Promise<unknown>, address?: string }} ResolveArgs
 */

class LocalWorkflowPlugin {
  /**
   * @param {Serverless} serverless
   * @param {Record<string, unknown>} _options
   * @param {{ log: Log }} utils
   */
  constructor(serverless, _options, utils) {
    this.serverless = serverless;
    this.log = utils.log;
    /** @type {string} */
    this.serviceDir = serverless.serviceDir ?? serverless.config.servicePath;
    /** @type {import('node:child_process').ChildProcess | undefined} */
    this.typecheck = undefined;
    /** The error last reported for a failed rebuild, so that one is reported once. */
    this.lastFailure = '';
    this.configurationVariablesSources = {
      local: { resolve: (/** @type {ResolveArgs} */ args) => this.resolve(args) },
    };
    this.hooks = {
      initialize: () => {
        this.initialize();
      },
      'before:offline:start': () => {
        this.beforeOffline();
      },
      'before:offline:start:init': () => {
        this.beforeOffline();
      },
      'offline:functionsUpdated:cleanup': () => {
        this.forgetBundles();
      },
    };
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

  /** @param {ResolveArgs} args */
  async resolve(args) {
    switch (args.address) {
      case 'store':
        return { value: await this.choice(args, 'store', STORES, this.local ? 'memory' : 'dynamodb') };
      case 'sourcemaps':
        return { value: (await this.choice(args, 'sourcemaps', SWITCHES, this.local ? 'on' : 'off')) === 'on' };
      case 'logLevel':
        return { value: this.logLevel() };
      case 'workFolder':
        return { value: this.workFolder };
      case 'lambdaPort':
        return { value: process.env.LAMBDA_PORT === undefined ? await freePort() : Number(process.env.LAMBDA_PORT) };
      default:
        throw new this.serverless.classes.Error(`Unknown variable \${local:${args.address ?? ''}}`);
    }
  }

  /**
   * The stage parameter `name`, one of `allowed`, or `fallback` when it is not given.
   * @param {ResolveArgs} args
   * @param {string} name
   * @param {string[]} allowed
   * @param {string} fallback
   */
  async choice(args, name, allowed, fallback) {
    const given = await args.resolveVariable(`param:${name}, '${fallback}'`);
    const value = String(given);
    if (!allowed.includes(value)) {
      throw new this.serverless.classes.Error(
        `--param=${name} must be ${allowed.join(' or ')}, not "${value}"`,
        'TODO_INVALID_PARAM',
      );
    }
    return value;
  }

  logLevel() {
    const value = process.env.LOG_LEVEL;
    if (value === undefined || value === '') return 'info';
    if (!LOG_LEVELS.includes(value.toLowerCase())) {
      throw new this.serverless.classes.Error(
        `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not "${value}"`,
        'TODO_INVALID_LOG_LEVEL',
      );
    }
    return value.toLowerCase();
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

  beforeOffline() {
    const service = this.serverless.service;
    const port = service.custom['serverless-offline'].lambdaPort;
    const names = Object.keys(service.functions).map((name) => service.getFunction(name).name);
    this.log.notice(
      `Lambda invoke endpoint: http://localhost:${port}/2015-03-31/functions/<name>/invocations, ` +
        `with <name> one of ${names.join(', ')} (see README, "Invoking a function")`,
    );
    /** @type {string[]} */
    const folders = service.custom.watch ?? [];
    if (folders.length === 0) return;
    this.watchSources(folders);
    this.startTypecheck();
  }

  /**
   * `npm run dev`: rebuilds on every saved change under `folders`, one build at a time, and
   * again if a change was saved while one ran. (esbuild answers a rebuild asked for during
   * another with that other's result, so a save in the middle of a build would be lost.)
   * @param {string[]} folders
   */
  watchSources(folders) {
    const esbuild = /** @type {EsbuildPlugin | undefined} */ (
      this.serverless.pluginManager.plugins.find((plugin) => plugin.constructor.name === 'EsbuildServerlessPlugin')
    );
    if (esbuild === undefined) throw new this.serverless.classes.Error('serverless-esbuild is not loaded');
    const state = { running: false, again: false };
    /** @type {NodeJS.Timeout | undefined} */
    let settle;
    /** @returns {Promise<void>} */
    const rebuild = async () => {
      if (state.running) {
        state.again = true;
        return;
      }
      state.running = true;
      try {
        await esbuild.bundle();
        this.lastFailure = '';
        await this.serverless.pluginManager.spawn('offline:functionsUpdated');
      } catch (error) {
        this.answerWithFailure(esbuild, error);
      } finally {
        state.running = false;
      }
      if (state.again) {
        state.again = false;
        await rebuild();
      }
    };
    for (const folder of folders) {
      watch(path.join(this.serviceDir, folder), { recursive: true }, () => {
        // An editor's save is often several events; one build follows them.
        clearTimeout(settle);
        settle = setTimeout(() => void rebuild(), 25);
      });
    }
  }

  /**
   * While the last build failed, each function's bundle is one that answers every request with
   * a JSON 500 naming the error in one line, paths relative to the project: the server would
   * otherwise go on serving code that no longer matches the files. The error is printed once.
   * @param {EsbuildPlugin} esbuild
   * @param {unknown} error what its bundle() threw
   */
  answerWithFailure(esbuild, error) {
    const message = buildFailure(error, this.serviceDir);
    if (message !== this.lastFailure) {
      this.lastFailure = message;
      this.log.error(`Build failed: ${message}. Every route answers 500 until a saved change builds again.`);
    }
    const body = JSON.stringify({ error: `Build failed: ${message}` });
    for (const { entry } of esbuild.functionEntries) {
      const bundle = path.join(esbuild.buildDirPath, entry.replace(/\.ts$/, '.js'));
      writeFileSync(
        bundle,
        `// Written by scripts/serverless-local.cjs while the last build failed.\n` +
          `exports.handler = async () => ({ statusCode: 500, headers: { 'content-type': 'application/json; charset=utf-8' }, body: ${JSON.stringify(body)} });\n`,
      );
      Reflect.deleteProperty(require.cache, bundle);
    }
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

  /**
   * `npm run dev`: with `useInProcess` (which the shared store requires) serverless-offline
   * loads each function's bundle with require(), and Node's module cache would go on serving
   * the old code. serverless-esbuild rebuilds on change and then announces
   * `offline:functionsUpdated`; here the bundles leave the cache, so the next request loads the
   * new ones. The store's state lives on globalThis, not in a module, so it outlives the reload.
   */
  forgetBundles() {
    const root = path.join(this.serviceDir, this.workFolder) + path.sep;
    const stale = Object.keys(require.cache).filter((file) => file.startsWith(root));
    for (const file of stale) Reflect.deleteProperty(require.cache, file);
    this.log.notice(
      `Reloaded: the next request runs the rebuilt code (${stale.length} bundles dropped from the cache).`,
    );
  }
}

/**
 * An esbuild failure as one line: the first error's place, relative to the project, and text.
 * @param {unknown} error
 * @param {string} serviceDir
 */
function buildFailure(error, serviceDir) {
  /** @type {{ errors?: { text: string, location: { file: string, line: number, column: number } | null }[] }} */
  const failure = typeof error === 'object' && error !== null ? error : {};
  const [first] = failure.errors ?? [];
  if (first === undefined) return String(error instanceof Error ? error.message : error).split('\n')[0] ?? '';
  const { location } = first;
  const where =
    location === null
      ? ''
      : `${path.relative(serviceDir, path.resolve(serviceDir, location.file))}:${location.line}:${location.column + 1}: `;
  const more = (failure.errors?.length ?? 0) > 1 ? ` (and ${(failure.errors?.length ?? 1) - 1} more)` : '';
  return `${where}${first.text}${more}`.replaceAll(serviceDir + path.sep, '').replaceAll('\n', ' ');
}

module.exports = LocalWorkflowPlugin;
module.exports.STORES = STORES;
module.exports.LOG_LEVELS = LOG_LEVELS;
