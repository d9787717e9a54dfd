/**
 * Each container's clock, as each Lambda container reads its host's: the world's time, off by a
 * skew, running a little fast or slow (a drift). Only what a container reads moves: its timers
 * fire on the world's schedule (a drift of 0.1 % would move a 2 s timeout by 2 ms).
 *
 * The bound the store relies on, and why it holds with room to spare (docs/design.md):
 *
 * - An intent older than INTENT_LIFETIME_MS (10 s, lib/dynamodb/queue-plan.ts) by the committing
 *   container's clock is dropped unwritten; its POST is waiting still unless it gave up, at most
 *   9 s (the request's budget, lib/http.ts) less RETRACT_BEFORE_MS (300 ms) after its own clock
 *   stamped the intent. So two containers' clocks may differ by less than 10 − 9 + 0.3 = 1.3 s
 *   (less the drift over those 10 s): ±500 ms each, and ±0.1 % drift (10 ms over 10 s), leave
 *   about 280 ms. Past it, a waiting POST's intent may be dropped as stale, and the POST answers
 *   503 (it withdraws itself: nothing is written twice).
 * - A key's claim (lib/dynamodb/claims.ts) and a queued POST's outcome expire after 24 hours and
 *   an hour: a clock wrong by that much replays nothing; within the bound, nothing.
 * - A head's lease (HEAD_LEASE_MS, lib/dynamodb/queue.ts) is measured on the waiting POST's own
 *   clock; a take-over's mark compares another container's stamp, where a skew only lets two
 *   POSTs commit the same head (the commit's conditions keep it exactly once).
 *
 * AWS keeps Lambda's hosts on the Amazon Time Sync Service, to well under a millisecond: the bound
 * is a margin for the design, not a figure of AWS's.
 */

export interface ClockBound {
  /** Each container's clock is off the world's by a skew drawn within ±skewMs. */
  readonly skewMs: number;
  /** …and gains or loses up to this share of the time since it started: 0.001 is 1 ms a second. */
  readonly drift: number;
}

/** The bound the store relies on (see above). */
export const CLOCK_BOUND: ClockBound = { skewMs: 500, drift: 0.001 };

/** One container's clock: how far off the world's time it is at its start, and how fast it drifts. */
export interface ContainerClock {
  readonly skewMs: number;
  readonly drift: number;
}

/** A container's clock drawn within `bound`, from `random` (a source apart, so that the store's draws do not shift). */
export function drawClock(bound: ClockBound, random: () => number): ContainerClock {
  return { skewMs: (2 * random() - 1) * bound.skewMs, drift: (2 * random() - 1) * bound.drift };
}

/**
 * What a container with `clock`, started now, reads: the world's time `worldNow()` off by its
 * skew and drift, in whole milliseconds, as Date.now() gives them.
 */
export function readingOf(clock: ContainerClock, worldNow: () => number): () => number {
  const startedAt = worldNow();
  return () => {
    const now = worldNow();
    return Math.floor(now + clock.skewMs + clock.drift * (now - startedAt));
  };
}
