// @ts-check
'use strict';

/**
 * `npm run dev`: lets serverless-offline serve the code serverless-esbuild has just rebuilt,
 * without a restart and without losing the in-memory store.
 *
 * Why it is needed: with `useInProcess` (which the shared store requires) serverless-offline
 * loads each function's bundle with require(), and Node's module cache then keeps serving the
 * old code. serverless-esbuild rebuilds on change and then announces
 * `offline:functionsUpdated`; on that event this plugin drops the bundles from the module
 * cache, so the next request loads the new ones. The store's state lives on globalThis, not in
 * a module, so it outlives the reload.
 *
 * In `npm start` nothing is rebuilt (serverless.yml watches no files in that mode), so this
 * plugin never fires there.
 */

const path = require('node:path');

class DevReloadPlugin {
  /**
   * @param {{ serviceDir?: string, config: { servicePath: string } }} serverless
   * @param {unknown} _options
   * @param {{ log: { notice: (message: string) => void } }} utils
   */
  constructor(serverless, _options, utils) {
    const serviceDir = serverless.serviceDir ?? serverless.config.servicePath;
    this.buildRoot = path.join(serviceDir, '.esbuild') + path.sep;
    this.log = utils.log;
    this.hooks = {
      'offline:functionsUpdated:cleanup': () => {
        this.forgetBundles();
      },
    };
  }

  forgetBundles() {
    const stale = Object.keys(require.cache).filter((file) => file.startsWith(this.buildRoot));
    for (const file of stale) Reflect.deleteProperty(require.cache, file);
    this.log.notice(
      `Reloaded: the next request runs the rebuilt code (${stale.length} bundles dropped from the cache).`,
    );
  }
}

module.exports = DevReloadPlugin;
