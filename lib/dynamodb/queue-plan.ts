import { KeyReused, ListFull } from '../errors';
import { MAX_LIST_BYTES, listBytes } from '../list-size';
import type { IdempotencyClaim, Todo } from '../todos';
import { claimVerdict } from './claims';
import { counterVerdict } from './counter';
import { ITEM_OVERHEAD_BYTES, MAX_TRANSACTION_BYTES, type Counter } from './table';
import type { Reasons } from './transaction';

/**
 * The queue of POSTs' decisions, as pure functions (lib/dynamodb/queue.ts does the I/O): where a
 * POST stands in a look at the queue, what one commit writes, and what a commit's cancellation
 * means. docs/design.md tells the protocol.
 */

/** Intents one commit takes: up to four actions each (record, intent, outcome, key), and the counter. */
export const MAX_INTENTS = 24;
/** Intents older than this are from requests that have given up (the function's timeout): dropped. */
export const INTENT_LIFETIME_MS = 10_000;
/**
 * How far back the counter keeps the ids commits gave (Counter.recent): the latest commits'
 * POSTs, the ones still looking. It bounds the counter at a few KB, which every commit writes.
 */
export const RECENT_IDS = 32;

/** A POST waiting in the queue, as stored under the counter's partition, sorted by `id`. */
export interface Intent {
  /** Epoch ms × 1000 plus a random part: in arrival order, and two at one millisecond differ. */
  readonly id: number;
  readonly uuid: string;
  readonly title: string;
  readonly claim?: IdempotencyClaim;
}

/** The counter as a queue commit leaves it: with the ids it gave, by intent uuid. */
export interface QueueCounter extends Counter {
  readonly recent?: Readonly<Record<string, number>>;
}

/** What a commit leaves a queued POST to find: its record, a replay, or why it was not written. */
export interface StoredOutcome {
  readonly todo?: Todo;
  readonly replayed?: boolean;
  /** Not written: no room in the list; its key came with another request; its POST gave up. */
  readonly refused?: 'full' | 'reused' | 'withdrawn';
}

export function intentId(now: number, random: () => number = Math.random): number {
  return now * 1000 + Math.floor(random() * 1000);
}

/** A look at the queue: the counter, the first intents, and whether the page holds every intent. */
export interface Look {
  readonly counter: QueueCounter;
  readonly intents: readonly Pick<Intent, 'id' | 'uuid'>[];
  /** False when DynamoDB cut the page (its Limit or its 1 MB): intents past the last one are unseen. */
  readonly complete: boolean;
}

export type Place =
  /** Committed as a new record, with this id (the counter's `recent`). */
  | { readonly kind: 'committed'; readonly id: number }
  /** Its intent is gone, and its id aged out of `recent`, or it was not written: its outcome tells. */
  | { readonly kind: 'gone' }
  | { readonly kind: 'head' }
  /** Behind `head` (the first intent), or past the look's page. */
  | { readonly kind: 'waiting'; readonly head: Pick<Intent, 'id' | 'uuid'> | undefined };

/**
 * Where the POST with intent `mine` stands in `look`. Its intent missing from the look means it
 * left the queue only where the page covers its place: a page DynamoDB cut before it says nothing
 * of it. (Taking a cut page for the whole queue made POSTs still queued give up.)
 */
export function placeOf(look: Look, mine: Pick<Intent, 'id' | 'uuid'>): Place {
  const given = look.counter.recent?.[mine.uuid];
  if (given !== undefined) return { kind: 'committed', id: given };
  const [head] = look.intents;
  if (head?.uuid === mine.uuid) return { kind: 'head' };
  const seen = look.intents.some((intent) => intent.uuid === mine.uuid);
  const last = look.intents.at(-1);
  const covered = look.complete || (last !== undefined && last.id >= mine.id);
  if (!seen && covered) return { kind: 'gone' };
  return { kind: 'waiting', head };
}

/** One intent's share of a commit, and the record it gets unless refused. */
export interface QueueWrite {
  readonly intent: Intent;
  readonly todo: Todo;
}

/** What one commit does: write these, delete every intent it took, and leave these outcomes. */
export interface CommitPlan {
  readonly counter: QueueCounter;
  readonly writes: readonly QueueWrite[];
  /** Intents deleted unwritten, and with no outcome: stale, a second copy of one POST's, or done. */
  readonly drops: readonly Intent[];
  /** Outcomes of intents not written (refused, or a key's replay), by uuid, and those intents. */
  readonly settled: ReadonlyMap<string, StoredOutcome>;
  readonly settledIntents: readonly Intent[];
}

/** What committing an intent writes of its title: in its record, its outcome and, with a key, the claim. */
function committedBytes(intent: Intent): number {
  return (Buffer.byteLength(intent.title) + ITEM_OVERHEAD_BYTES) * (intent.claim ? 3 : 2);
}

/** Outcomes a commit decided before it could write: refusals and replays, and POSTs found done. */
export interface Decided {
  readonly settled: ReadonlyMap<string, StoredOutcome>;
  /** POSTs that have an outcome already (withdrawn, or committed by another): dropped unwritten. */
  readonly done: ReadonlySet<string>;
}

export const NOTHING_DECIDED: Decided = { settled: new Map(), done: new Set() };

/**
 * What a commit of `queue` (the intents in order, as read) writes: each POST once (a second copy
 * of one POST's intent is dropped), none older than a request lives, one per key (the others in a
 * later commit, which answers them with the key's replay), within a transaction's bytes, always
 * `mine`; the next ids in turn, to those not `decided` already.
 */
export function planCommit(
  counter: QueueCounter,
  queue: readonly Intent[],
  mine: string,
  now: number,
  decided: Decided = NOTHING_DECIDED,
): CommitPlan {
  const stale = now - INTENT_LIFETIME_MS;
  const uuids = new Set<string>();
  const keys = new Set<string>();
  const drops: Intent[] = [];
  const taken: Intent[] = [];
  let bytes = 0;
  for (const intent of queue.slice(0, MAX_INTENTS)) {
    const copy = uuids.has(intent.uuid);
    uuids.add(intent.uuid);
    if (copy || intent.id / 1000 < stale || decided.done.has(intent.uuid)) {
      drops.push(intent);
      continue;
    }
    if (intent.claim && keys.has(intent.claim.key)) continue;
    if (intent.claim) keys.add(intent.claim.key);
    bytes += committedBytes(intent);
    if (bytes > MAX_TRANSACTION_BYTES && intent.uuid !== mine) continue;
    taken.push(intent);
  }
  const written = taken.filter((intent) => !decided.settled.has(intent.uuid));
  return {
    counter,
    writes: written.map((intent, j) => ({
      intent,
      todo: { id: counter.next + j, title: intent.title, completed: false },
    })),
    drops,
    settled: new Map(
      taken.flatMap((intent) => {
        const outcome = decided.settled.get(intent.uuid);
        return outcome === undefined ? [] : [[intent.uuid, outcome] as const];
      }),
    ),
    settledIntents: taken.filter((intent) => decided.settled.has(intent.uuid)),
  };
}

/** Of the ids the counter keeps from earlier commits, those within RECENT_IDS of its next, and this commit's. */
export function recentAfter(plan: CommitPlan): Record<string, number> {
  const { next, recent = {} } = plan.counter;
  const kept = Object.entries(recent).filter(([, id]) => id >= next - RECENT_IDS);
  return Object.fromEntries([
    ...kept,
    ...plan.writes.map(({ intent, todo }): [string, number] => [intent.uuid, todo.id]),
  ]);
}

/** The roles of a commit's actions: the counter, and each intent's record, claim, intent and outcome by its uuid. */
export type CommitRole = 'counter' | `record ${string}` | `claim ${string}` | `intent ${number}` | `outcome ${string}`;

export type CommitVerdict =
  /** Someone else committed first, or took an intent: read the queue again. */
  | { readonly kind: 'reread' }
  /** Commit again from the same read, with these outcomes decided now. */
  | { readonly kind: 'again'; readonly decided: Decided }
  /** The list has no size yet: count it, then read the queue again. */
  | { readonly kind: 'unsized' }
  | { readonly kind: 'unexplained' };

/**
 * Reads a cancelled commit of `plan`, decided so far as `decided`. A key claimed before answers
 * its intent with the claim's replay (or refuses it); a list with no room refuses, in order, the
 * intents that do not fit; an intent whose POST has an outcome already (withdrawn, or committed
 * by another) is dropped unwritten; a counter that moved, or an intent gone, means another commit
 * came first.
 */
export function commitVerdict(reasons: Reasons<CommitRole>, plan: CommitPlan, decided: Decided): CommitVerdict {
  const counter = counterVerdict(reasons.counter, plan.counter.next);
  if (counter?.kind === 'unsized') return { kind: 'unsized' };
  if (counter?.kind === 'moved') return { kind: 'reread' };
  const settled = new Map(decided.settled);
  for (const { intent } of plan.writes) {
    const claimed = claimVerdict(reasons[`claim ${intent.uuid}`], intent.claim);
    if (claimed === undefined || claimed === 'expired') continue;
    if ('refused' in claimed) settled.set(intent.uuid, { refused: 'reused' });
    else if (claimed.replay.value !== undefined)
      settled.set(intent.uuid, { todo: claimed.replay.value, replayed: true });
  }
  const byKeys = settled.size > decided.settled.size;
  if (counter?.kind === 'full' && !byKeys) refuseWhatDoesNotFit(counter.counter, plan, settled);
  const taken = [...plan.writes.map(({ intent }) => intent), ...plan.settledIntents];
  const done = taken.filter(({ uuid }) => reasons[`outcome ${uuid}`]?.code === 'ConditionalCheckFailed');
  if (byKeys || done.length > 0 || counter?.kind === 'full') {
    for (const { uuid } of done) settled.delete(uuid);
    return { kind: 'again', decided: { settled, done: new Set([...decided.done, ...done.map(({ uuid }) => uuid)]) } };
  }
  const intentGone = [...taken, ...plan.drops].some(
    ({ id }) => reasons[`intent ${id}`]?.code === 'ConditionalCheckFailed',
  );
  return intentGone ? { kind: 'reread' } : { kind: 'unexplained' };
}

/** With the list as `counter` has it, refuses (full), in order, each intent that would not fit. */
function refuseWhatDoesNotFit(counter: Counter, plan: CommitPlan, settled: Map<string, StoredOutcome>): void {
  let room = MAX_LIST_BYTES - (counter.bytes ?? 0);
  let id = counter.next;
  for (const { intent } of plan.writes) {
    const size = listBytes({ id, title: intent.title });
    if (size <= room) {
      room -= size;
      id++;
    } else {
      settled.set(intent.uuid, { refused: 'full' });
    }
  }
}

/** A stored outcome as the POST's answer. */
export function outcomeOf(
  stored: StoredOutcome,
): { value: Todo; replayed: boolean } | ListFull | KeyReused | 'withdrawn' {
  if (stored.refused === 'full') return new ListFull();
  if (stored.refused === 'reused') return new KeyReused();
  if (stored.refused === 'withdrawn' || stored.todo === undefined) return 'withdrawn';
  const { id, title, completed } = stored.todo;
  // DynamoDB keeps a map's fields in no order: the record is rebuilt as it was answered.
  return { value: { id, title, completed }, replayed: stored.replayed === true };
}

/**
 * The pause before a waiting POST's next look: about as long as a commit takes here (every look is
 * a request of every waiting container), longer while the head stays put (a stalled head is not
 * looked at every few milliseconds until its lease ends).
 */
export function pauseBeforeLook(commitMs: number, headStillFor: number): number {
  return Math.max(2, Math.min(500, Math.max(commitMs, headStillFor / 4)));
}
