import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { log } from '../log';

/**
 * How this service talks to DynamoDB: the SDK's retries and timeouts, how many requests are in
 * flight at once, and what is logged at `debug`.
 */

/** Requests in flight at once, and sockets in the client's pool: the same number, see `DynamoDbSender`. */
export const MAX_IN_FLIGHT = 50;
/** How long one attempt may take to connect, and to be answered once connected. */
export const CONNECT_TIMEOUT_MS = 1_000;
export const REQUEST_TIMEOUT_MS = 2_000;

/**
 * The SDK's retries, set on purpose: three attempts with its standard backoff, each with a 1 s
 * connect and 2 s request timeout, so that an unreachable, hanging or throttling DynamoDB is a
 * 503 in seconds. Without throwOnRequestTimeout the SDK only logs a warning when requestTimeout
 * passes and goes on waiting. Every call is also bounded by its request's deadline (an abort
 * signal), whatever the attempts have left.
 */
export function dynamoDbClientConfig(endpoint: string | undefined): DynamoDBClientConfig {
  return {
    maxAttempts: 3,
    retryMode: 'standard',
    requestHandler: {
      connectionTimeout: CONNECT_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      throwOnRequestTimeout: true,
      httpAgent: { keepAlive: true, maxSockets: MAX_IN_FLIGHT },
      httpsAgent: { keepAlive: true, maxSockets: MAX_IN_FLIGHT },
    },
    ...(endpoint === undefined ? {} : { endpoint }),
  };
}

export function documentClient(config: DynamoDBClientConfig): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient(config));
}

/** What every SDK answer carries: how many attempts it took. */
interface Answer {
  readonly $metadata: { readonly attempts?: number };
}

/**
 * Refusals of a request that DynamoDB did not apply, and that may well go through a moment later:
 * a plain write that met a transaction in progress on its item (which the SDK does not retry),
 * and throughput past a partition's (which the SDK retries three times, in about a second, while
 * a request may wait for its deadline). Sent again here, after a pause, until the deadline.
 */
const NOT_APPLIED = [
  'TransactionConflictException',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
];

/**
 * `work`'s result, or the signal's reason if the signal aborts first. The listener goes when
 * either settles: a request that waits many times on one signal does not pile listeners on it.
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const stop = () => {
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => {
      signal.removeEventListener('abort', stop);
    });
  });
}

/** A pause of `ms`, cut short with the signal's reason if the signal aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return unlessAborted(new Promise<void>((resolve) => setTimeout(resolve, ms)), signal);
}

/**
 * Sends commands with at most MAX_IN_FLIGHT in flight. The SDK starts its connect and request
 * timers when it creates a request, and a request waiting for one of the pool's sockets would
 * spend them waiting: under a burst, a healthy DynamoDB would look unreachable. Waiting here
 * instead, for a slot that comes with a free socket, the SDK's timers measure the network only,
 * and the wait itself is bounded by the caller's deadline.
 */
export class DynamoDbSender {
  #inFlight = 0;
  readonly #waiting: (() => void)[] = [];

  /**
   * Sends one request: `operation` names it in the log, and `request` sends it with the abort
   * signal it is given. Gives up with the signal's reason once the signal aborts.
   */
  async send<T extends Answer>(
    operation: string,
    signal: AbortSignal,
    request: (abortSignal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    await this.#acquire(signal);
    const started = Date.now();
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          const output = await request(signal);
          log('debug', {
            message: 'dynamodb',
            operation,
            attempts: output.$metadata.attempts,
            durationMs: Date.now() - started,
          });
          return output;
        } catch (error) {
          log('debug', {
            message: 'dynamodb',
            operation,
            error: error instanceof Error ? error.name : String(error),
            durationMs: Date.now() - started,
          });
          if (!(error instanceof Error) || !NOT_APPLIED.includes(error.name)) throw error;
          await backoff(signal, attempt);
        }
      }
    } finally {
      this.#release();
    }
  }

  async #acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#inFlight < MAX_IN_FLIGHT) {
      this.#inFlight++;
      return;
    }
    let grant: () => void = () => undefined;
    const granted = new Promise<void>((resolve) => {
      grant = resolve;
    });
    this.#waiting.push(grant);
    try {
      await unlessAborted(granted, signal);
    } catch (error) {
      // Given up while waiting: pass a slot granted meanwhile on, or leave the queue.
      const index = this.#waiting.indexOf(grant);
      if (index >= 0) this.#waiting.splice(index, 1);
      else this.#release();
      throw error;
    }
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#inFlight--;
    else next();
  }
}

/**
 * A random pause before the `attempt`th try again (0, 1, 2…), so that writers that met each other
 * do not meet again at once: "full jitter" (Brooker, "Exponential Backoff And Jitter", AWS
 * Architecture Blog), up to 10 ms doubled each time, at most 320 ms; cut short, with the signal's
 * reason, if the signal aborts.
 */
export function backoff(signal: AbortSignal, attempt = 0): Promise<void> {
  return pause(Math.random() * Math.min(320, 10 * 2 ** attempt), signal);
}
