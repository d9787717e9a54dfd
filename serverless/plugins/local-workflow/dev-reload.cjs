// @ts-check
'use strict';

/**
 * `npm run dev`: every saved change is served by the next request, with the data kept.
 *
 * A file watcher alone cannot promise that: its event comes some time after the save, and
 * editors save in ways watchers miss (a temporary file renamed over the old one, as vim, sed -i
 * and JetBrains' "safe write" do; a delete, then a create; a branch switch that rewrites many
 * files at once). So each request first compares the sources with those of the last build
 * (their contents, hashed: a few dozen small files) and, if they differ, waits for a rebuild.
 * The watcher (chokidar, which follows atomic saves) starts that rebuild as soon as a file is
 * saved, so a request seldom waits, and a save is reported even when no request follows.
 *
 * How a request reaches the new code: serverless-offline, in-process (the shared store needs
 * it), require()s each function's bundle. Each bundle's file is replaced by a small gate, kept in
 * require's cache, that awaits the check and then requires the real bundle (`<name>.build.js`),
 * dropped from the cache after each rebuild. The store's state lives on globalThis, not in a
 * module, so it outlives the reload.
 */

const { createHash } = require('node:crypto');
const { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const chokidar = require('chokidar');

/** How the gates find the reloader: one per process, as there is one server. */
const GATE = Symbol.for('todo-api.dev-reload');
const GATE_MARK = '// todo-api dev gate';
/** An editor's save is often several events: one rebuild follows them. */
const SETTLE_MS = 25;
/**
 * What esbuild may read: scripts and modules of every flavour, and JSON. Editors' swap, backup and
 * temporary files (dotfiles, `~`, `4913`, `___jb_tmp___`) are not.
 */
const SOURCE = /^[^.].*\.([cm]?[jt]sx?|json)$/;
/**
 * Dotfiles and dot-folders: editors' swap and backup files, and no source of ours.
 * @param {string} name
 */
function ignored(name) {
  return name.startsWith('.');
}

/**
 * @typedef {{ bundle(): Promise<void>, buildDirPath: string, functionEntries: { entry: string }[] }} EsbuildPlugin
 * @typedef {{ notice(message: string): void, error(message: string): void }} Log
 * @typedef {{ handler: (event: unknown, context: unknown) => Promise<unknown> }} HandlerModule
 */

class DevReload {
  /**
   * @param {{ esbuild: EsbuildPlugin, log: Log, serviceDir: string, folders: string[] }} options
   */
  constructor({ esbuild, log, serviceDir, folders }) {
    this.esbuild = esbuild;
    this.log = log;
    this.serviceDir = serviceDir;
    this.roots = folders.map((folder) => path.join(serviceDir, folder));
    /** The sources the current bundles were built from, taken before esbuild's first build. */
    this.built = this.sources();
    /** @type {Promise<void> | undefined} */
    this.building = undefined;
    /** The last build's error, in one line, while it stands; printed once. @type {string | undefined} */
    this.failure = undefined;
    /** @type {import('chokidar').FSWatcher | undefined} */
    this.watcher = undefined;
  }

  /** Once esbuild's first build is written: the gates in place, and the watcher started. */
  start() {
    Reflect.set(globalThis, GATE, this);
    this.installGates();
    /** @type {NodeJS.Timeout | undefined} */
    let settle;
    this.watcher = chokidar
      .watch(this.roots, {
        ignoreInitial: true,
        ignored: (file, stats) =>
          ignored(path.basename(file)) || (stats?.isFile() === true && !SOURCE.test(path.basename(file))),
      })
      .on('all', () => {
        clearTimeout(settle);
        settle = setTimeout(() => {
          this.fresh().catch((/** @type {unknown} */ error) => {
            this.log.error(`Reload failed: ${String(error)}`);
          });
        }, SETTLE_MS);
      });
  }

  async close() {
    await this.watcher?.close();
  }

  /** Every source file under the watched folders, relative to the project, with a digest of its contents. */
  sources() {
    /** @type {Map<string, string>} */
    const files = new Map();
    const { serviceDir } = this;
    /** @param {string} dir */
    function walk(dir) {
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const file = path.join(dir, entry.name);
        if (ignored(entry.name)) continue;
        if (entry.isDirectory()) walk(file);
        else if (SOURCE.test(entry.name)) {
          try {
            files.set(path.relative(serviceDir, file), createHash('sha1').update(readFileSync(file)).digest('hex'));
          } catch {
            // Gone between the listing and the read: the next look sees it gone.
          }
        }
      }
    }
    for (const root of this.roots) walk(root);
    return files;
  }

  /**
   * The files that differ between the last build's sources and `now`: changed, added or removed.
   * @param {Map<string, string>} now
   */
  changes(now) {
    const names = new Set([...this.built.keys(), ...now.keys()]);
    return [...names].filter((name) => this.built.get(name) !== now.get(name)).sort();
  }

  /** Resolves once the bundles are built from the sources as they are now. */
  fresh() {
    if (this.building === undefined && this.changes(this.sources()).length === 0) return Promise.resolve();
    this.building ??= this.rebuild().finally(() => {
      this.building = undefined;
    });
    return this.building;
  }

  /** Builds until a build starts from sources that no save changed before it ended. */
  async rebuild() {
    for (;;) {
      const sources = this.sources();
      const changed = this.changes(sources);
      if (changed.length === 0) return;
      try {
        await this.esbuild.bundle();
        this.failure = undefined;
        this.installGates();
        const which =
          changed.length > 3 ? `${changed.slice(0, 3).join(', ')} and ${changed.length - 3} more` : changed.join(', ');
        this.log.notice(`Reloaded (${which}): the next request runs the rebuilt code.`);
      } catch (error) {
        const message = buildFailure(error, this.serviceDir);
        if (message !== this.failure) {
          this.log.error(`Build failed: ${message}. Every route answers 500 until a saved change builds again.`);
        }
        this.failure = message;
        // A failed build deletes the bundle it failed on: the gate goes back.
        this.installGates();
      }
      this.built = sources;
    }
  }

  /** Moves each bundle esbuild wrote to `<name>.build.js`, drops the old one from require's cache, and puts the gate in its place. */
  installGates() {
    for (const { entry } of this.esbuild.functionEntries) {
      const file = path.join(this.esbuild.buildDirPath, entry.replace(/\.ts$/, '.js'));
      const real = file.replace(/\.js$/, '.build.js');
      // esbuild may leave an output it did not change as it was: then the gate is still there.
      if (existsSync(file) && !readFileSync(file, 'utf8').startsWith(GATE_MARK)) renameSync(file, real);
      Reflect.deleteProperty(require.cache, real);
      /** @type {unknown} */
      const cached = require.cache[file]?.exports;
      const gate = /** @type {Record<symbol, unknown> | undefined} */ (cached);
      // On disk too: serverless-offline looks for the file before it requires it.
      writeFileSync(file, gateSource(real));
      if (gate?.[GATE] !== true) {
        Reflect.deleteProperty(require.cache, file);
        require(file);
      }
    }
  }

  /**
   * What a gate runs: the real bundle, once the sources are built; or, while the last build
   * failed, an answer that says so.
   * @param {string} real
   * @returns {Promise<HandlerModule>}
   */
  async load(real) {
    await this.fresh();
    if (this.failure !== undefined) return failureModule(this.failure);
    /** @type {unknown} */
    const bundle = require(real);
    return /** @type {HandlerModule} */ (bundle);
  }
}

/**
 * A gate's source: a bundle that waits for fresh code, then runs it.
 * @param {string} real
 */
function gateSource(real) {
  return (
    `${GATE_MARK}: written by serverless/plugins/local-workflow/dev-reload.cjs; the build itself is ${path.basename(real)}.\n` +
    `const gate = Symbol.for('todo-api.dev-reload');\n` +
    `exports[gate] = true;\n` +
    `exports.handler = async (event, context) =>\n` +
    `  (await globalThis[gate].load(${JSON.stringify(real)})).handler(event, context);\n`
  );
}

/**
 * A bundle that answers every request with a JSON 500 naming the build's error in one line, paths
 * relative to the project: the server would otherwise go on serving code that no longer matches
 * the files.
 * @param {string} message
 * @returns {HandlerModule}
 */
function failureModule(message) {
  return {
    handler: () =>
      Promise.resolve({
        statusCode: 500,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ error: `Build failed: ${message}` }),
      }),
  };
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

module.exports = { DevReload };
