import type { Runtime } from './runtime';

/**
 * Waits that end with a request's deadline: every wait of the DynamoDB store is on the signal that
 * aborts at its request's deadline (lib/dynamodb/store.ts), so nothing outlives the request.
 */

/**
 * `work`'s result, or the signal's reason if the signal aborts first. The listener goes when
 * either settles: a request that waits many times on one signal does not pile listeners on it.
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    function stop() {
      reject(signal.reason as Error);
    }
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => {
      signal.removeEventListener('abort', stop);
    });
  });
}

/**
 * A signal that aborts with `reason()` once `ms` have passed on `runtime`'s clock: a deadline, or
 * a wait's own budget within one. `stop` cancels its timer, once what it bounds is done.
 */
export function timeLimit(
  ms: number,
  reason: () => Error,
  runtime: Runtime,
): { readonly signal: AbortSignal; readonly stop: () => void } {
  const controller = new AbortController();
  const stop = runtime.after(ms, () => {
    controller.abort(reason());
  });
  return { signal: controller.signal, stop };
}

/** A pause of `ms` on `runtime`'s clock, cut short with the signal's reason if the signal aborts. */
export function pause(ms: number, signal: AbortSignal, runtime: Runtime): Promise<void> {
  let cancel: (() => void) | undefined;
  const paused = new Promise<void>((resolve) => {
    cancel = runtime.after(ms, resolve);
  });
  return unlessAborted(paused, signal).finally(() => {
    cancel?.();
  });
}

/**
 * A random pause before the `attempt`th try again (0, 1, 2…), so that writers that met each other
 * do not meet again at once: "full jitter" (Brooker, "Exponential Backoff And Jitter", AWS
 * Architecture Blog), up to 10 ms doubled each time, at most 320 ms; cut short, with the signal's
 * reason, if the signal aborts.
 */
export function backoff(signal: AbortSignal, attempt: number, runtime: Runtime): Promise<void> {
  return pause(runtime.random() * Math.min(320, 10 * 2 ** attempt), signal, runtime);
}

/**
 * At most `size` requests in flight (the DynamoDB client's MAX_IN_FLIGHT, its sockets). A request
 * waiting for one of the pool's sockets would spend its attempt's timeouts waiting: under a burst,
 * a healthy DynamoDB would look unreachable. Waiting here instead, for a slot that comes with a
 * free socket, the timeouts measure the network only, and the wait itself is bounded by the
 * caller's deadline.
 */
export class Slots {
  #inFlight = 0;

  constructor(private readonly size: number) {}
  readonly #waiting: (() => void)[] = [];

  async acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#inFlight < this.size) {
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
      else this.release();
      throw error;
    }
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#inFlight--;
    else next();
  }
}
