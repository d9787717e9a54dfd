import { randomUUID } from 'node:crypto';

/**
 * Time and chance, as the DynamoDB store takes them: the real ones in production (REAL_RUNTIME),
 * the simulator's in harness/simulation/ (one fake clock that owns every timer, one seeded random
 * source), so that a simulated run of the store's own code is a function of its seed and replays
 * exactly. Code of the store that reads the time, sets a timer or draws a random number does it
 * through the Runtime it was given, never through Date, setTimeout, Math.random or node:crypto.
 */
export interface Runtime {
  /** Epoch milliseconds. */
  readonly now: () => number;
  /** Runs `run` after `ms`; returns what cancels it. */
  readonly after: (ms: number, run: () => void) => () => void;
  /** A number in [0, 1). */
  readonly random: () => number;
  /** A random UUID (a transaction's token, a queued POST's name). */
  readonly uuid: () => string;
}

export const REAL_RUNTIME: Runtime = {
  now: () => Date.now(),
  after: (ms, run) => {
    const timer = setTimeout(run, ms);
    return () => {
      clearTimeout(timer);
    };
  },
  random: () => Math.random(),
  uuid: () => randomUUID(),
};
