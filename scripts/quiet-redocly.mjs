/**
 * Loaded into Redocly CLI by `npm run lint` (`node --import ./scripts/quiet-redocly.mjs …redocly lint`,
 * scripts/checks.ts). On Node 20, @redocly/cli 2.x prints an 11-line box, "Deprecation warning: Node.js 20
 * support is ending", on stderr at every start, before anything it was asked. Node 20.19 is supported here
 * (package.json's engines) and by @redocly/cli itself (its engines: >=20.19.0 <21), so the box asks nothing of
 * whoever runs the lint and only buries what the lint says. Redocly has no setting for it: it prints it
 * whenever Node's major version is 20 (node_modules/@redocly/cli/lib/index.js), and its
 * REDOCLY_SUPPRESS_NOTIFICATIONS covers only its update notice and announcements. So this drops that one
 * write, whole (the box is written at once), and nothing else: every other byte Redocly writes reaches
 * stderr as written. On Node 22 the box is never written and this does nothing.
 */

import process from 'node:process';

/** The box's title, which no line of a lint report contains. */
const NODE_20_NOTICE = 'Node.js 20 support is ending';

const write = process.stderr.write.bind(process.stderr);

/**
 * @param {string | Uint8Array} chunk
 * @param {BufferEncoding | ((error?: Error | null) => void)} [encodingOrCallback]
 * @param {(error?: Error | null) => void} [callback]
 */
function withoutNotice(chunk, encodingOrCallback, callback) {
  if (typeof chunk === 'string' && chunk.includes(NODE_20_NOTICE)) {
    // As a write that succeeded: its callback, when given, is called once it is "flushed".
    const done = typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
    if (done !== undefined) process.nextTick(done);
    return true;
  }
  return typeof encodingOrCallback === 'function'
    ? write(chunk, encodingOrCallback)
    : write(chunk, encodingOrCallback, callback);
}

process.stderr.write = withoutNotice;
