// @ts-check
'use strict';

// CommonJS, so that the project's serverless plugin (scripts/serverless-local.cjs) and the
// TypeScript scripts and harness share it.

const { createServer } = require('node:net');

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

module.exports = { freePort };
