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
 * error object and its stack.
 * @param {Readonly<Record<string, string | undefined>>} env
 * @returns {Promise<string[]>}
 */
async function portProblems(env) {
  const { http, lambda } = requestedPorts(env);
  if (lambda === http) {
    const httpSetting = env.PORT ? 'PORT' : "PORT's default";
    return [
      `Port ${http} is both ${httpSetting} and LAMBDA_PORT, but the API and the Lambda invoke endpoint need one ` +
        `each: choose another, e.g. LAMBDA_PORT=${otherPort(http)}`,
    ];
  }
  const problems = [await busyProblem(http, 'PORT', 'the API')];
  if (lambda !== undefined) problems.push(await busyProblem(lambda, 'LAMBDA_PORT', 'the Lambda invoke endpoint'));
  return problems.filter((problem) => problem !== undefined);
}

/** @param {number} port */
function otherPort(port) {
  return port < 65_535 ? port + 1 : port - 1;
}

/**
 * The line that says `port` cannot be listened on, as the server would listen on it; undefined
 * when it can.
 * @param {number} port
 * @param {string} variable what sets it
 * @param {string} what listens there
 * @returns {Promise<string | undefined>}
 */
function busyProblem(port, variable, what) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (/** @type {NodeJS.ErrnoException} */ error) => {
      const instead = `${variable}=${otherPort(port)}`;
      resolve(
        error.code === 'EADDRINUSE'
          ? `Port ${port} (${variable}) is in use, so ${what} cannot listen there: stop what runs on it, or choose another, e.g. ${instead}`
          : `Port ${port} (${variable}) cannot be listened on (${error.code ?? error.message}): choose another, e.g. ${instead}`,
      );
    });
    probe.listen({ port, host: 'localhost', exclusive: true }, () => {
      probe.close(() => {
        resolve(undefined);
      });
    });
  });
}

module.exports = { freePort, requestedPorts, portProblems };
