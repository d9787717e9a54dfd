// @ts-check
'use strict';

/**
 * What the commands build on disk, and how none of it outlives them.
 *
 * serverless-esbuild builds in a work folder, one per process here (`.esbuild/<command>-<pid>`):
 * `serverless package` deletes its folder when done, and with a shared one it would delete the
 * bundles of a server running beside it. serverless-esbuild leaves its folder behind after
 * `offline` and `invoke local`, so this removes it at exit, and removes the folders of processes
 * that are gone (a server killed, a package that failed).
 *
 * Its zip step stages each function in a folder of the system's temporary directory,
 * `<tmp>/<function>-<pid>-<ms>-<hex>/`, and never removes it: the removal is not recursive and its
 * error is swallowed (serverless-esbuild 1.57.2, `zip` in src/utils.ts; upstream,
 * floydspace/serverless-esbuild#589), and no option moves or skips the stage. So while it
 * packages, the temporary directory is a folder inside the work folder, which goes with it.
 */

const { mkdirSync, readdirSync, rmSync } = require('node:fs');
const path = require('node:path');

/** Where every command's work folder is, under the service. */
const WORK_ROOT = '.esbuild';

/**
 * The variables Node's os.tmpdir() reads: TMPDIR, TMP and TEMP on Linux and macOS, TEMP and TMP
 * on Windows.
 */
const TEMP_VARIABLES = ['TMPDIR', 'TMP', 'TEMP'];

/**
 * This process's work folder, relative to the service: `.esbuild/<command>-<pid>`.
 * @param {string[]} commands the framework's command, e.g. ['invoke', 'local']
 */
function workFolderOf(commands) {
  const name = commands[0] === 'invoke' ? 'invoke' : (commands[0] ?? 'command');
  return path.join(WORK_ROOT, `${name}-${process.pid}`);
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
 * Removes the work folders of processes that are gone.
 * @param {string} serviceDir
 */
function sweepWorkFolders(serviceDir) {
  const root = path.join(serviceDir, WORK_ROOT);
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

/**
 * Removes `folder` when this process exits, however it ends short of a kill.
 * @param {string} folder an absolute path
 */
function removeAtExit(folder) {
  process.once('exit', () => {
    rmSync(folder, { recursive: true, force: true });
  });
}

/**
 * Points the system's temporary directory at `folder` until the returned function is called,
 * which puts it back.
 * @param {string} folder an absolute path
 * @returns {() => void}
 */
function useTempFolder(folder) {
  mkdirSync(folder, { recursive: true });
  const saved = TEMP_VARIABLES.map((name) => /** @type {const} */ ([name, process.env[name]]));
  for (const name of TEMP_VARIABLES) process.env[name] = folder;
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) Reflect.deleteProperty(process.env, name);
      else process.env[name] = value;
    }
  };
}

module.exports = { workFolderOf, sweepWorkFolders, removeAtExit, useTempFolder };
