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

/** A pause of `ms`, cut short with the signal's reason if the signal aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const paused = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return unlessAborted(paused, signal).finally(() => {
    clearTimeout(timer);
  });
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
