import { setTimeout as delay } from 'node:timers/promises';

/** Waits `ms` milliseconds. For pacing only: a wait for a condition is `eventually`. */
export function sleep(ms: number): Promise<void> {
  return delay(ms);
}

export interface EventuallyOptions {
  /** The bound, in ms, derived from what is awaited; past it the wait fails, saying what it waited for. */
  within: number;
  /** What is awaited, for the failure message. */
  what: string;
  /** How often to look, in ms. */
  every?: number;
}

/**
 * Looks at `check` until it gives a value (anything but undefined or false), and returns that
 * value; throws once `within` ms have passed without one.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { within, what, every = 50 }: EventuallyOptions,
): Promise<T> {
  const deadline = Date.now() + within;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${within} ms`);
    await sleep(every);
  }
}
