// @ts-check
'use strict';

/**
 * What runs inside one container of the fleet (harness/container.ts): a stand-in for Lambda's
 * Node.js runtime. It runs on Lambda's Node major where the harness could install it
 * (harness/lambda-node.ts), in a process of its own, one invocation at a time:
 *
 * - init: the handler module (`_HANDLER`, from `LAMBDA_TASK_ROOT`) is loaded once, before the
 *   first invocation, as Lambda does on a cold start; a module that fails to load fails the
 *   container, and every invocation sent to it;
 * - invoke: the parent sends `{ type: 'invoke', id, event, deadline, requestId }`; the handler
 *   gets the event and a context whose getRemainingTimeInMillis() counts down to `deadline`; the
 *   answer goes back as `{ type: 'result' }` or `{ type: 'error' }`, with the process's peak RSS;
 * - console lines get Lambda's prefix (time, request id, level), as on AWS; a write straight to
 *   fd 1 (lib/log.ts) does not;
 * - a promise rejected with no handler ends the process, as Lambda's runtime does.
 *
 * Plain CommonJS, run without a TypeScript loader: it must start as fast as Lambda's runtime does.
 */

const path = require('node:path');
const util = require('node:util');

/** @param {unknown} error */
function errorFields(error) {
  if (error instanceof Error) return { errorType: error.name, errorMessage: error.message, stack: error.stack };
  return { errorType: 'Error', errorMessage: String(error) };
}

/** @param {unknown} message */
function send(message) {
  if (process.send) process.send(message);
}

let requestId = '';
for (const [method, level] of /** @type {const} */ ([
  ['log', 'INFO'],
  ['info', 'INFO'],
  ['warn', 'WARN'],
  ['error', 'ERROR'],
  ['debug', 'DEBUG'],
])) {
  console[method] = (/** @type {unknown[]} */ ...args) => {
    process.stdout.write(
      `${new Date().toISOString()}\t${requestId || 'undefined'}\t${level}\t${util.format(...args)}\n`,
    );
  };
}

const root = process.env.LAMBDA_TASK_ROOT ?? process.cwd();
const [modulePath = '', handlerName = 'handler'] = (process.env._HANDLER ?? '').split(/\.(?=[^.]+$)/);

/** @type {((event: unknown, context: object) => Promise<unknown>) | undefined} */
let handler;
const initStarted = process.hrtime.bigint();
try {
  /** @type {unknown} */
  const module_ = require(path.join(root, modulePath));
  const loaded = /** @type {Record<string, unknown>} */ (module_);
  const exported = loaded[handlerName];
  if (typeof exported !== 'function') throw new Error(`${process.env._HANDLER ?? ''} is undefined or not exported`);
  handler = /** @type {NonNullable<typeof handler>} */ (exported);
  send({ type: 'ready', initMs: Number(process.hrtime.bigint() - initStarted) / 1e6 });
} catch (error) {
  send({ type: 'init-error', error: { ...errorFields(error), errorType: 'Runtime.ImportModuleError' } });
  process.exitCode = 1;
}

/** The invocation in progress, so that an unhandled rejection can fail it. */
let current = /** @type {string | undefined} */ (undefined);

process.on('unhandledRejection', (reason) => {
  send({
    type: 'error',
    id: current,
    error: { ...errorFields(reason), errorType: 'Runtime.UnhandledPromiseRejection' },
  });
  process.exit(128);
});

process.on(
  'message',
  (/** @type {{ type: string, id: string, event: unknown, deadline: number, requestId: string }} */ message) => {
    if (message.type !== 'invoke' || handler === undefined) return;
    const { id, event, deadline } = message;
    current = id;
    requestId = message.requestId;
    const name = process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'function';
    const context = {
      callbackWaitsForEmptyEventLoop: true,
      functionName: name,
      functionVersion: '$LATEST',
      invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION}:123456789012:function:${name}`,
      memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '128',
      awsRequestId: message.requestId,
      logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME ?? `/aws/lambda/${name}`,
      logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME ?? 'stream',
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    };
    const started = process.hrtime.bigint();
    const run = handler;
    void Promise.resolve()
      .then(() => run(event, context))
      .then(
        (result) => ({ type: 'result', id, result }),
        (/** @type {unknown} */ error) => ({ type: 'error', id, error: errorFields(error) }),
      )
      .then((answer) => {
        current = undefined;
        send({
          ...answer,
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
          maxRssKb: process.resourceUsage().maxRSS,
        });
      });
  },
);
