// @ts-check
'use strict';

/**
 * The local workflow plugin: what the commands need beyond serverless-offline and
 * serverless-esbuild, each part in its own module under local-workflow/.
 *
 * - Before the framework resolves or builds anything, for every command: its options, against those the
 *   command takes, and for the local server its `--help` (command-line.cjs); the stage parameters and
 *   the environment variables it reads (stage-params.cjs); for `invoke local`, its event
 *   (invoke-event.cjs) and for any command its `--function` (function-names.cjs); for the local
 *   server, its ports (ports.cjs). A mistake stops the command as the framework stops on a user's
 *   error (a ServerlessError: its `Error:` and the message, one line per mistake, no stack), with
 *   nothing built; a port, with its line alone, before anything else is printed; an unknown option, with its
 *   line alone and exit 2, as the project's scripts stop on a wrong command line.
 * - The `${local:…}` variables serverless.yml reads (variables.cjs).
 * - A work folder per process, removed with it; packaging leaves nothing in the system's temporary
 *   directory (work-folders.cjs).
 * - For the local commands: source maps in stack traces; at start, the invoke endpoint and the
 *   routes, each address working as printed (startup-banner.cjs); under `npm run dev`, every saved
 *   change served by the next request (dev-reload.cjs) and a typechecker in watch mode
 *   (typecheck.cjs).
 */

const path = require('node:path');
const { settingProblems } = require('./stage-params.cjs');
const { commandLineOf, localServerHelp, toolName, unknownOptionLine } = require('./local-workflow/command-line.cjs');
const { DevReload } = require('./local-workflow/dev-reload.cjs');
const { functionNameProblems } = require('./local-workflow/function-names.cjs');
const { invokeEventProblems } = require('./local-workflow/invoke-event.cjs');
const { portProblems } = require('./local-workflow/ports.cjs');
const {
  httpApiRoutes,
  invokeEndpointLine,
  replaceRoutesBox,
  routeLines,
} = require('./local-workflow/startup-banner.cjs');
const { startTypecheck } = require('./local-workflow/typecheck.cjs');
const { resolveLocalVariable } = require('./local-workflow/variables.cjs');
const { removeAtExit, sweepWorkFolders, useTempFolder, workFolderOf } = require('./local-workflow/work-folders.cjs');

/**
 * The parts of the Serverless Framework's instance that this plugin uses.
 * @typedef {{
 *   serviceDir?: string,
 *   config: { servicePath: string, serverlessPath: string },
 *   processedInput: { commands: string[], options: Record<string, unknown>, isHelpRequest: boolean },
 *   configurationInput?: {
 *     params?: Record<string, Record<string, unknown> | undefined>,
 *     functions?: Record<string, unknown>,
 *   },
 *   classes: { Error: import('./local-workflow/variables.cjs').ServerlessErrorClass },
 *   service: {
 *     provider: { name: string },
 *     custom: { watch?: string[], 'serverless-offline': { httpPort: number, lambdaPort: number } },
 *     getAllFunctions(): string[],
 *     getFunction(name: string): { name: string, events?: import('./local-workflow/startup-banner.cjs').FunctionEvent[] },
 *   },
 *   pluginManager: { plugins: object[], externalPlugins: Set<object> },
 * }} Serverless
 * @typedef {import('./local-workflow/dev-reload.cjs').EsbuildPlugin} EsbuildPlugin
 * @typedef {import('./local-workflow/dev-reload.cjs').Log} Log
 * @typedef {import('./local-workflow/variables.cjs').ResolveArgs} ResolveArgs
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
    /** @type {string[]} */
    this.commands = serverless.processedInput.commands;
    this.local = this.commands[0] === 'offline' || (this.commands[0] === 'invoke' && this.commands[1] === 'local');
    this.workFolder = workFolderOf(this.commands);
    /** @type {import('node:child_process').ChildProcess | undefined} */
    this.typecheck = undefined;
    /** @type {DevReload | undefined} */
    this.dev = undefined;
    /** Puts the system's temporary directory back, while a package points it into the work folder. @type {(() => void) | undefined} */
    this.restoreTempFolder = undefined;
    this.configurationVariablesSources = {
      local: {
        resolve: (/** @type {ResolveArgs} */ args) =>
          resolveLocalVariable(args, {
            local: this.local,
            workFolder: this.workFolder,
            ServerlessError: serverless.classes.Error,
          }),
      },
    };
    this.hooks = this.lifecycleHooks();
  }

  /** What the plugin does at each step of the framework's lifecycle, by the step's name. */
  lifecycleHooks() {
    return {
      initialize: () => {
        this.initialize();
      },
      'before:offline:start': () => {
        this.beforeOffline();
      },
      'before:offline:start:init': () => {
        this.beforeOffline();
      },
      // After serverless-esbuild's first build, before serverless-offline loads anything.
      'offline:start': () => {
        this.dev?.start();
      },
      'offline:start:init': () => {
        this.dev?.start();
      },
      // Around serverless-esbuild's zip step: before it, and after it (before it removes the work
      // folder, and the zips' stages with it).
      'before:package:createDeploymentArtifacts': () => {
        this.stageZipsInWorkFolder();
      },
      'after:package:createDeploymentArtifacts': () => {
        this.restoreTempFolder?.();
      },
      'before:deploy:function:packageFunction': () => {
        this.stageZipsInWorkFolder();
      },
      'after:deploy:function:packageFunction': () => {
        this.restoreTempFolder?.();
      },
    };
  }

  /**
   * Called by the framework once every plugin is constructed, before it resolves serverless.yml's
   * variables: a wrong value there would otherwise fail that resolution first, in a paragraph.
   */
  async asyncInit() {
    // `--help` (and `--version`) do nothing but print: no setting is checked, no port looked at.
    if (this.serverless.processedInput.isHelpRequest) {
      this.printLocalServerHelp();
      return;
    }
    this.stopOnUnknownOption();
    const problems = [...this.settingProblems(), ...this.functionProblems()];
    if (problems.length === 0 && this.commands[0] === 'offline') stopOnPortProblems(await portProblems(process.env));
    if (problems.length > 0) {
      throw new this.serverless.classes.Error(problems.join('\n'), 'TODO_INVALID_SETTINGS');
    }
  }

  /**
   * `npm start -- --help` and `npm run dev -- --help`: the project's usage, printed instead of the framework's
   * help, and the process ends. Any other command's help is the framework's.
   */
  printLocalServerHelp() {
    const { options } = this.serverless.processedInput;
    if (this.commands[0] !== 'offline' || options.help !== true) return;
    const { accepted = {} } = commandLineOf(this.serverless);
    const params = [options.param ?? []].flat().map(String);
    const dev = params.includes('mode=dev');
    process.stdout.write(localServerHelp({ tool: toolName(this.commands, process.env), dev, accepted }));
    process.exit(0);
  }

  /**
   * An option the command does not take stops it with one line on stderr and exit 2, nothing resolved or
   * built: the framework's own refusal would come later, boxed as its error, with no suggestion.
   */
  stopOnUnknownOption() {
    const { options, accepted } = commandLineOf(this.serverless);
    // A command the framework does not know: it says so itself, with the closest one.
    if (accepted === undefined) return;
    const line = unknownOptionLine({
      options,
      accepted,
      tool: toolName(this.commands, process.env),
      localServer: this.commands[0] === 'offline',
    });
    if (line === undefined) return;
    process.stderr.write(`${line}\n`);
    process.exit(2);
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

  /**
   * The function `--function` names, checked against serverless.yml for every command that takes
   * one; for `invoke local`, then its event, whose hint names the function's sample.
   */
  functionProblems() {
    const known = Object.keys(this.serverless.configurationInput?.functions ?? {});
    const nameProblems = functionNameProblems(this.options.function, known);
    if (nameProblems.length > 0) return nameProblems;
    const invokeLocal = this.commands[0] === 'invoke' && this.commands[1] === 'local';
    return invokeLocal ? invokeEventProblems(this.serviceDir, this.options) : [];
  }

  initialize() {
    sweepWorkFolders(this.serviceDir);
    if (!this.local) return;
    // Stack traces through the bundles' source maps, at .ts files and lines. The functions run
    // in this process (useInProcess, and invoke local), so this reaches them.
    process.setSourceMapsEnabled(true);
    // serverless-esbuild leaves its work folder behind after offline and invoke local.
    removeAtExit(path.join(this.serviceDir, this.workFolder));
    process.once('exit', () => {
      this.typecheck?.kill();
    });
    // The typecheck starts as soon as the command is known to watch (serverless.yml's variables
    // are resolved by now), ahead of esbuild's first build: its first result is what it takes longest to give.
    /** @type {string[]} */
    const folders = this.serverless.service.custom.watch ?? [];
    if (this.commands[0] === 'offline' && folders.length > 0) {
      this.typecheck = startTypecheck(this.serviceDir, folders, this.log);
    }
  }

  /** serverless-esbuild stages each zip in the system's temporary directory, and leaves it there (work-folders.cjs). */
  stageZipsInWorkFolder() {
    this.restoreTempFolder = useTempFolder(path.join(this.serviceDir, this.workFolder, 'zip-staging'));
  }

  /** Before serverless-esbuild's first build: the addresses printed, and under `npm run dev` the reloader made. */
  beforeOffline() {
    const { service } = this.serverless;
    const { httpPort, lambdaPort } = service.custom['serverless-offline'];
    const functions = service.getAllFunctions().map((name) => service.getFunction(name));
    this.log.notice(
      invokeEndpointLine(
        lambdaPort,
        functions.map((fn) => fn.name),
      ),
    );
    replaceRoutesBox(routeLines(httpPort, httpApiRoutes(functions.map((fn) => fn.events ?? []))));
    /** @type {string[]} */
    const folders = service.custom.watch ?? [];
    if (folders.length === 0) return;
    const esbuild = /** @type {EsbuildPlugin | undefined} */ (
      this.serverless.pluginManager.plugins.find((plugin) => plugin.constructor.name === 'EsbuildServerlessPlugin')
    );
    if (esbuild === undefined) {
      throw new this.serverless.classes.Error('serverless-esbuild is not loaded', 'TODO_NO_ESBUILD');
    }
    this.dev = new DevReload({ esbuild, log: this.log, serviceDir: this.serviceDir, folders });
  }
}

/**
 * A port the local server cannot have stops it with the lines that say so and nothing else, before
 * any other output: raised as the framework's error, they would come after its footer (its version
 * and where its docs are, which say nothing about a port), as if the framework had failed. Nothing
 * is running yet, and nothing built, so exiting here leaves nothing behind.
 * @param {string[]} problems
 */
function stopOnPortProblems(problems) {
  if (problems.length === 0) return;
  process.stderr.write(`${problems.join('\n')}\n`);
  process.exit(1);
}

module.exports = LocalWorkflowPlugin;
