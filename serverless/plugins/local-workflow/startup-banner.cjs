// @ts-check
'use strict';

/**
 * What the local server prints at start about where it answers: every address in it works as
 * printed (test/system/local-commands.test.ts requests each one).
 *
 * serverless-offline prints a box of the routes in which each route has a second line,
 * `POST http://localhost:<PORT>/2015-03-31/functions/<function>/invocations`. Nothing answers there
 * but a 404: Lambda's Invoke API listens on LAMBDA_PORT, and takes the functions' full names.
 * It has no option to leave those lines out, so its box, printed once with console.log, is
 * replaced by the project's list of routes, and the invoke endpoint has a line of its own.
 */

/** What each of serverless-offline's invoke lines holds, and nothing else it prints does. */
const BOX_INVOKE_PATH = '/2015-03-31/functions/';

/**
 * @typedef {{ method: string, path: string }} Route
 * @typedef {{ httpApi?: string | { method: string, path: string } }} FunctionEvent
 */

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

/**
 * The HTTP API routes of the functions' events, in the order serverless.yml lists them.
 * @param {FunctionEvent[][]} events each function's events
 * @returns {Route[]}
 */
function httpApiRoutes(events) {
  return events.flat().flatMap(({ httpApi }) => {
    if (httpApi === undefined) return [];
    if (typeof httpApi !== 'string') return [{ method: httpApi.method.toUpperCase(), path: httpApi.path }];
    const [method = '', path = ''] = httpApi.split(' ');
    return [{ method: method.toUpperCase(), path }];
  });
}

/**
 * The API's routes, one line each, at the address the server listens on.
 * @param {number} httpPort
 * @param {Route[]} routes
 */
function routeLines(httpPort, routes) {
  const width = Math.max(...routes.map(({ method }) => method.length));
  return [
    'Routes:',
    ...routes.map(({ method, path }) => `   ${method.padEnd(width)} http://localhost:${httpPort}${path}`),
  ];
}

/**
 * Prints `lines` instead of serverless-offline's box of routes, the one time it prints it.
 * @param {string[]} lines
 */
function replaceRoutesBox(lines) {
  const print = console.log;
  console.log = (/** @type {unknown[]} */ ...args) => {
    const [text] = args;
    if (!(args.length === 1 && typeof text === 'string' && text.includes(BOX_INVOKE_PATH))) {
      print(...args);
      return;
    }
    console.log = print;
    print(lines.join('\n'));
  };
}

module.exports = { invokeEndpointLine, httpApiRoutes, routeLines, replaceRoutesBox };
