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
 */

const { readdirSync, rmSync } = require('node:fs');
const path = require('node:path');

/** Where every command's work folder is, under the service. */
const WORK_ROOT = '.esbuild';

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

module.exports = { workFolderOf, sweepWorkFolders, removeAtExit };
