// @ts-check
'use strict';

/**
 * `npm run dev`'s typechecker: `tsc --watch` beside the server. esbuild strips types without
 * checking them, so a type error would otherwise be served without a word.
 */

const { spawn } = require('node:child_process');

/** The errors, and the count after each check; not the "Starting compilation…" chatter. */
const FINDING = /error TS\d+|Found \d+ errors?/;

/**
 * Starts `tsc --noEmit --watch` in `serviceDir` and prints its findings as they come.
 * @param {string} serviceDir
 * @param {{ notice(message: string): void }} log
 * @returns {import('node:child_process').ChildProcess}
 */
function startTypecheck(serviceDir, log) {
  const tsc = require.resolve('typescript/bin/tsc', { paths: [serviceDir] });
  const child = spawn(process.execPath, [tsc, '--noEmit', '--watch', '--preserveWatchOutput', '--pretty', 'false'], {
    cwd: serviceDir,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let pending = '';
  child.stdout.on('data', (/** @type {Buffer} */ chunk) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (FINDING.test(line)) log.notice(`typecheck: ${line.replace(/^.*? - /, '')}`);
    }
  });
  return child;
}

module.exports = { startTypecheck };
