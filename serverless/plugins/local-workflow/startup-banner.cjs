// @ts-check
'use strict';

/** What the local server prints at start about where it answers, beyond serverless-offline's own lines. */

/**
 * The line that says where Lambda's Invoke API is, and by which names it knows the functions.
 * @param {number} lambdaPort
 * @param {string[]} names the functions' full names
 */
function invokeEndpointLine(lambdaPort, names) {
  return (
    `Lambda invoke endpoint: http://localhost:${lambdaPort}/2015-03-31/functions/<name>/invocations, ` +
    `with <name> one of ${names.join(', ')} (see README, "Invoking a function")`
  );
}

module.exports = { invokeEndpointLine };
