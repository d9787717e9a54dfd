// @ts-check
'use strict';

/**
 * The local server's two ports, and what stops them: the API's (PORT, or 3000) and Lambda's
 * Invoke API's (LAMBDA_PORT, or a free one). CommonJS, so that the plugin, the TypeScript scripts
 * (`npm run start:dynamodb` checks them before it starts DynamoDB Local) and the harness share it.
 */

const { createServer } = require('node:net');

/** The API's port when PORT is not set. */
const DEFAULT_HTTP_PORT = 3000;

/**
 * A port the OS says is free on loopback right now.
 * @returns {Promise<number>}
 */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1');
    server.on('error', reject);
    server.on('listening', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port from the OS'));
      });
    });
  });
}

/**
 * The ports the environment asks for; `lambda` is undefined when LAMBDA_PORT is not set (a free
 * one is chosen then). Unset and empty are the same, as for every setting (stage-params.cjs
 * checked that the others are whole numbers).
 * @param {Readonly<Record<string, string | undefined>>} env
 * @returns {{ http: number, lambda: number | undefined }}
 */
function requestedPorts(env) {
  return {
    http: env.PORT ? Number(env.PORT) : DEFAULT_HTTP_PORT,
    lambda: env.LAMBDA_PORT ? Number(env.LAMBDA_PORT) : undefined,
  };
}

/**
 * Why the local server could not listen on the ports `env` asks for, one line each; none when it
 * can. serverless-offline would find out only after building and printing its routes, with an
 * error object and its stack. Each line names a port to choose instead that is free now and
 * none of the others: neither port asked for, nor a port another line names.
 * @param {Readonly<Record<string, string | undefined>>} env
 * @returns {Promise<string[]>}
 */
async function portProblems(env) {
  const { http, lambda } = requestedPorts(env);
  /** Ports a line may not name: those asked for, and those named already. */
  const taken = [http];
  if (lambda === http) {
    const httpSetting = env.PORT ? 'PORT' : "PORT's default";
    return [
      `Port ${http} is both ${httpSetting} and LAMBDA_PORT, but the API and the Lambda invoke endpoint need one ` +
        `each: choose another, e.g. LAMBDA_PORT=${await freePortAfter(http, taken)}`,
    ];
  }
  if (lambda !== undefined) taken.push(lambda);
  const httpError = await listenError(http);
  const lambdaError = lambda === undefined ? undefined : await listenError(lambda);
  const problems = [];
  if (httpError !== undefined) {
    problems.push(busyProblem(http, 'PORT', 'the API', httpError, await freePortAfter(http, taken)));
  }
  if (lambda !== undefined && lambdaError !== undefined) {
    problems.push(
      busyProblem(lambda, 'LAMBDA_PORT', 'the Lambda invoke endpoint', lambdaError, await freePortAfter(lambda, taken)),
    );
  }
  return problems;
}

/** How many ports after a busy one are tried before the OS is asked for any free one. */
const NEARBY_PORTS = 20;

/**
 * A port to name instead of `port`: the first after it that can be listened on now and is not
 * `taken` (then taken too), or, when none nearby is, one the OS says is free.
 * @param {number} port
 * @param {number[]} taken
 * @returns {Promise<number>}
 */
async function freePortAfter(port, taken) {
  for (let candidate = port + 1; candidate <= Math.min(port + NEARBY_PORTS, 65_535); candidate += 1) {
    if (!taken.includes(candidate) && (await listenError(candidate)) === undefined) {
      taken.push(candidate);
      return candidate;
    }
  }
  for (;;) {
    const candidate = await freePort();
    if (!taken.includes(candidate)) {
      taken.push(candidate);
      return candidate;
    }
  }
}

/**
 * Why `port` cannot be listened on as the server would listen on it (`EADDRINUSE`); undefined
 * when it can.
 * @param {number} port
 * @returns {Promise<string | undefined>}
 */
function listenError(port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (/** @type {NodeJS.ErrnoException} */ error) => {
      resolve(error.code ?? error.message);
    });
    probe.listen({ port, host: 'localhost', exclusive: true }, () => {
      probe.close(() => {
        resolve(undefined);
      });
    });
  });
}

/**
 * The line that says `port` cannot be listened on, naming `instead`.
 * @param {number} port
 * @param {string} variable what sets it
 * @param {string} what listens there
 * @param {string} error why it cannot be listened on
 * @param {number} instead
 * @returns {string}
 */
function busyProblem(port, variable, what, error, instead) {
  return error === 'EADDRINUSE'
    ? `Port ${port} (${variable}) is in use, so ${what} cannot listen there: stop what runs on it, or choose another, e.g. ${variable}=${instead}`
    : `Port ${port} (${variable}) cannot be listened on (${error}): choose another, e.g. ${variable}=${instead}`;
}

module.exports = { freePort, requestedPorts, portProblems };
