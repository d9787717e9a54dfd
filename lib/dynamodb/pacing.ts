import type { Counter } from './table';
import { MAX_INTENTS, type Intent } from './queue-plan';

/**
 * The queue's pacing: every decision about *when* (when a container queues its POST, how long a waiting POST pauses
 * before its next look, when it takes over a stalled head, when it takes itself back), apart from the protocol that
 * decides *what* is written (queue.ts, queue-plan.ts; docs/design.md, "The queue as a state machine"). The protocol is
 * exact whatever its pacing decides: the simulator explores it under an adversarial pacing too. A latency change
 * touches this file and the bench; a correctness change touches the protocol and the simulator.
 */
export interface Pacing {
  /** Whether POSTs arriving while a transaction is in flight go together in the next (one process: the emulator). */
  readonly batchPosts: boolean;
  /**
   * Whether a container's POST queues, rather than be written alone from the counter `view` knows; asked again when
   * the counter moved under a POST alone (no: it writes again from the counter as it is now).
   */
  readonly queues: (view: QueueView, now: number) => boolean;
  /** How long before its deadline a queued POST takes itself back, so as to answer in time. */
  readonly retractBeforeMs: number;
  /**
   * How long a head may stay still before the POSTs behind it take over its commit; the mark a taker writes holds others
   * off for as long (queue.ts, takeOver).
   */
  readonly headLeaseMs: number;
  /** A waiting POST's pace once a look shows it behind `head`: what its later decisions read. */
  readonly afterLook: (pace: QueuePace | undefined, head: Intent, counter: Counter, now: number) => QueuePace;
  /**
   * Whether, at that pace, `mine` can be written within `msLeft`: it stays; it looks closer first (reads the queue's
   * first intents: `QueuePace.inNextCommit` then says whether the next commit takes it); or it is out of reach and
   * takes itself back now rather than at its deadline.
   */
  readonly reach: (pace: QueuePace, mine: Intent, msLeft: number) => 'stays' | 'look closer' | 'out of reach';
  /** The pause before a waiting POST's next look, with the head still for `headStillForMs`. */
  readonly pauseBeforeLook: (
    view: QueueView,
    pace: QueuePace | undefined,
    mine: Intent,
    headStillForMs: number,
  ) => number;
  /** How long a commit takes here, as known after one that took `tookMs`. */
  readonly commitMs: (view: QueueView, tookMs: number) => number;
}

/** What a container knows of the queue between its POSTs: the facts its pacing decides from. */
export interface QueueView {
  /** The counter as this container last saw it; none before its first look or write (a seed cannot see the queue). */
  counter: Counter | undefined;
  /** When this container last saw another's POST at work: a head ahead of its own, or the counter moved under it. */
  othersSeenAt: number | undefined;
  /** How long a commit of the queue takes here, from the head's read to its answer. */
  commitMs: number;
}

/** A new container's view: it knows no counter, and so queues its first POST. */
export function newQueueView(): QueueView {
  return { counter: undefined, othersSeenAt: undefined, commitMs: 20 };
}

/**
 * How fast the queue goes, as a POST waits: ids given per unit of intent id (`density`; ids are arrival times) between
 * two heads, the last head and counter. Commits take from the head in order: ids given as it moved ≈ intents between.
 */
export interface QueuePace {
  readonly head: number;
  readonly next: number;
  readonly density: number | undefined;
  /** When the POST looked (epoch ms), first and last, and the counter's next at its first look: the queue's speed. */
  readonly first: { readonly at: number; readonly next: number };
  readonly at: number;
  /**
   * Whether a closer look (the queue's first intents) showed it among what the next commit takes (`takenNext`): seen
   * so, it stays so, and is never out of reach; seen not, it is out of reach (`reach`); undefined until it looks closer.
   */
  readonly inNextCommit?: boolean | undefined;
}

export function paceAfter(pace: QueuePace | undefined, head: Intent, counter: Counter, now: number): QueuePace {
  const moved = pace !== undefined && head.id > pace.head && counter.next > pace.next;
  const density = moved ? (counter.next - pace.next) / (head.id - pace.head) : pace?.density;
  const first = pace?.first ?? { at: now, next: counter.next };
  return { head: head.id, next: counter.next, density, first, at: now, inNextCommit: pace?.inNextCommit };
}

/** About how many intents stand between the head and `mine`: none known till the head moved, nor in the next commit. */
export function intentsAhead(pace: QueuePace, mine: Intent): number {
  return pace.inNextCommit ? 0 : (pace.density ?? 0) * (mine.id - pace.head);
}

/**
 * Whether, at the pace seen, the intents ahead of `mine` take longer than `ms` to write (60 KB titles at 256 containers
 * waited 8.6 s at the median for a 503 before this, docs/scale.md). An estimate: ids read a burst then a gap as a long
 * queue, so a POST so estimated looks closer before it is taken back (`reach`).
 */
export function outOfReach(pace: QueuePace, mine: Intent, ms: number): boolean {
  const { first, at, next } = pace;
  if (next <= first.next || at <= first.at) return false;
  return intentsAhead(pace, mine) > ((next - first.next) / (at - first.at)) * ms;
}

/**
 * The pause before a waiting POST's next look: about a commit's time (every waiting container looks); longer while the
 * head stays put (no polling a stalled head till its lease ends); for a POST over a commit's intents behind, a commit
 * per further commit's intents ahead: it cannot be written before, and 256 POSTs looking every commit read the
 * counter's partition past its 3,000 units a second (docs/scale.md). POSTs near the head look as before.
 */
export function pauseBeforeLook(commitMs: number, headStillFor: number, ahead = 0): number {
  const commitsFirst = ahead / MAX_INTENTS - 1;
  return Math.max(MIN_PAUSE_MS, Math.min(MAX_PAUSE_MS, Math.max(commitMs, commitMs * commitsFirst, headStillFor / 4)));
}

/** How long before its deadline a queued POST takes itself back: time to write its withdrawal, and answer. */
export const RETRACT_BEFORE_MS = 300;
/** How long a head may stay still before a POST behind it takes over its commit. */
export const HEAD_LEASE_MS = 1_000;
/** The shortest and longest pause between a waiting POST's looks. */
export const MIN_PAUSE_MS = 2;
const MAX_PAUSE_MS = 500;
/** How a commit's time is learnt: each commit weighs this much against what was known. */
const COMMIT_MS_WEIGHT = 0.2;

/** The pacing the store runs with (the scale model's figures: docs/scale.md). */
export const PACING: Pacing = {
  batchPosts: true,
  // Queue if no counter is known (a seed cannot see POSTs waiting) or others wrote within a lease: alone it would race
  // the head. Not for a `recent` seen last: at 16 busy containers every POST then paid a queued POST's four requests.
  queues: (view, now) =>
    view.counter === undefined || (view.othersSeenAt !== undefined && now < view.othersSeenAt + HEAD_LEASE_MS),
  retractBeforeMs: RETRACT_BEFORE_MS,
  headLeaseMs: HEAD_LEASE_MS,
  afterLook: paceAfter,
  reach(pace, mine, msLeft) {
    // Its closer look decides: seen in the next commit, it stays so (intents ahead only leave); not, it is out of reach,
    // as its pace said before it looked closer (the pace after that look is not weighed again).
    if (pace.inNextCommit !== undefined) return pace.inNextCommit ? 'stays' : 'out of reach';
    return outOfReach(pace, mine, msLeft) ? 'look closer' : 'stays';
  },
  pauseBeforeLook: (view, pace, mine, headStillForMs) =>
    pauseBeforeLook(view.commitMs, headStillForMs, pace === undefined ? 0 : intentsAhead(pace, mine)),
  commitMs: (view, tookMs) => (1 - COMMIT_MS_WEIGHT) * view.commitMs + COMMIT_MS_WEIGHT * tookMs,
};
