// @ts-check
'use strict';

/**
 * `serverless invoke local` checked before it builds anything: the handlers take an API Gateway
 * HTTP API event (payload 2.0) and nothing else, so a missing event, or another kind, stops the
 * command with one line that points at the function's sample in events/.
 */

const { readFileSync, readdirSync } = require('node:fs');
const path = require('node:path');

/** Where the sample events are, one per function. */
const EVENTS = 'events';

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

/**
 * What is wrong with the event `invoke local` was given, as one line; none when it is an API
 * Gateway HTTP API event.
 * @param {string} serviceDir
 * @param {{ function?: unknown, path?: unknown, data?: unknown }} options the command's options
 * @returns {string[]}
 */
function invokeEventProblems(serviceDir, options) {
  const name = typeof options.function === 'string' ? options.function : '<function>';
  const samples = readdirSync(path.join(serviceDir, EVENTS)).filter((file) => file.endsWith('.json'));
  const sample = samples.includes(`${name}.json`) ? name : '<function>';
  const hint = `start from its sample, --path ${EVENTS}/${sample}.json (${EVENTS}/ has ${samples.join(', ')})`;
  const { path: file, data } = options;
  if (file === undefined && data === undefined) return [`invoke local needs an API Gateway event: ${hint}`];
  const source = typeof file === 'string' ? file : '--data';
  /** @type {unknown} */
  let event;
  try {
    event = JSON.parse(typeof file === 'string' ? readFileSync(path.resolve(serviceDir, file), 'utf8') : String(data));
  } catch (error) {
    const reason = /** @type {Error} */ (error).message.split('\n')[0] ?? '';
    return [`invoke local: ${source} is not a JSON event (${reason}): ${hint}`];
  }
  if (isHttpApiEvent(event)) return [];
  return [
    `invoke local: ${source} is not an API Gateway HTTP API event (version "2.0", requestContext.http.method and .path): ${hint}`,
  ];
}

module.exports = { invokeEventProblems };
