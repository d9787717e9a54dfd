// @ts-check
'use strict';

/**
 * `npm run dev`'s typechecker: `tsc --watch` beside the server. esbuild strips types without
 * checking them, so a type error would otherwise be served without a word.
 *
 * It checks what the server serves, the folders it watches (functions/ and lib/, and what they
 * import), not the whole project: the tests, the harness and the bench are three times as many
 * lines, and `npm test` checks them. On a busy 2-core machine the whole project's first check took
 * 30 to 80 s, the served folders' 8 to 11 s. Its incremental state (a .tsbuildinfo) is kept between
 * runs in node_modules/.cache, so a restart checks again only what changed since.
 */

const { createHash } = require('node:crypto');
const { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

/** The errors, and the count after each check; not the "Starting compilation…" chatter. */
const FINDING = /error TS\d+|Found \d+ errors?/;

/** Where each project folder's tsconfig and build info are kept, one folder per project folder. */
const CACHE = path.join('node_modules', '.cache', 'todo-api-typecheck');

/**
 * The project tsconfig that a cached tsconfig extends; undefined when there is none.
 * @param {string} config
 * @returns {string | undefined}
 */
function extendedConfig(config) {
  if (!existsSync(config)) return undefined;
  /** @type {unknown} */
  const parsed = JSON.parse(readFileSync(config, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || !('extends' in parsed)) return undefined;
  return typeof parsed.extends === 'string' ? parsed.extends : undefined;
}

/**
 * The tsconfig of the served folders, written in the cache: it extends the project's, so every
 * compiler option stays in tsconfig.json. A project folder has its own cache folder (scratch
 * copies of the project share node_modules through a link); those of folders gone are removed.
 * @param {string} serviceDir
 * @param {readonly string[]} folders the folders the server watches, relative to serviceDir
 * @returns {string} the tsconfig's path
 */
function writeServedTsconfig(serviceDir, folders) {
  const cache = path.join(serviceDir, CACHE);
  const projectConfig = path.join(serviceDir, 'tsconfig.json');
  const own = path.join(cache, createHash('sha256').update(serviceDir).digest('hex').slice(0, 16));
  for (const entry of existsSync(cache) ? readdirSync(cache) : []) {
    const extended = extendedConfig(path.join(cache, entry, 'tsconfig.json'));
    if (extended === undefined || !existsSync(extended)) {
      rmSync(path.join(cache, entry), { recursive: true, force: true });
    }
  }
  mkdirSync(own, { recursive: true });
  const config = path.join(own, 'tsconfig.json');
  writeFileSync(
    config,
    JSON.stringify({
      extends: projectConfig,
      include: folders.map((folder) => path.join(serviceDir, folder)),
      compilerOptions: { incremental: true, tsBuildInfoFile: path.join(own, 'tsconfig.tsbuildinfo') },
    }),
  );
  return config;
}

/**
 * Starts `tsc --watch` on the served folders of `serviceDir` and prints its findings as they come.
 * @param {string} serviceDir
 * @param {readonly string[]} folders the folders the server watches, relative to serviceDir
 * @param {{ notice(message: string): void }} log
 * @returns {import('node:child_process').ChildProcess}
 */
function startTypecheck(serviceDir, folders, log) {
  const tsc = require.resolve('typescript/bin/tsc', { paths: [serviceDir] });
  const config = writeServedTsconfig(serviceDir, folders);
  const child = spawn(
    process.execPath,
    [tsc, '--project', config, '--watch', '--preserveWatchOutput', '--pretty', 'false'],
    { cwd: serviceDir, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let pending = '';
  child.stdout.on('data', (/** @type {Buffer} */ chunk) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      // tsc names files relative to the working directory, the project folder, as before.
      if (FINDING.test(line)) log.notice(`typecheck: ${line.replace(/^.*? - /, '')}`);
    }
  });
  return child;
}

module.exports = { startTypecheck };
