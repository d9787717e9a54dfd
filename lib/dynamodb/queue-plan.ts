import { KeyReused, ListFull } from '../errors';
import { numbered, recordOf, type IdempotencyClaim, type NewTodo, type Todo, type TodoDraft } from '../todos';
import type { Settled, Share } from './decisions';
import type { Counter } from './table';
import { invariant } from './invariant';

/** The queue's decisions as pure functions (I/O: lib/dynamodb/queue.ts; protocol: docs/design.md): places, commits. */

/**
 * Intents one commit takes: up to four actions each (record, intent, outcome, key), and the counter. Their records need
 * no count of bytes: with titles capped (MAX_TITLE_LENGTH), 24 of the largest, about 6 KB of JSON each, are some 300
 * write units in a transaction, within the records' partition's 1,000 a second, and far within its 4 MB.
 */
export const MAX_INTENTS = 24;
/** Intents older than this are from requests that have given up (the function's timeout): dropped. */
export const INTENT_LIFETIME_MS = 10_000;
/** Ids the counter keeps (`recent`) for the latest commits' POSTs: it bounds the counter, which every commit writes. */
export const RECENT_IDS = 32;

/** A queued POST, sorted by `id`. */
export interface Intent {
  /** Epoch ms × 1000 plus a random part: in arrival order, and two at one millisecond differ. */
  readonly id: number;
  readonly uuid: string;
}

/**
 * A queued POST's ask and key. Commits write the record its version made (`draft`, told by how it differs from
 * `request`: lib/todos.ts, draftOf), what it answers whatever the head's version.
 */
export interface Payload {
  readonly request: NewTodo;
  readonly draft: TodoDraft;
  readonly claim?: IdempotencyClaim;
}

/** An intent as a look or a commit reads it: with its payload, which rides in it (titles are capped: it is small). */
export interface QueuedIntent extends Intent {
  readonly payload: Payload;
}

/** The counter as a queue commit leaves it: with the ids it gave, by intent uuid. */
export interface QueueCounter extends Counter {
  readonly recent?: Readonly<Record<string, number>>;
}

/** What a commit leaves a queued POST to find: its record, a replay, or why it was not written. */
export interface StoredOutcome {
  readonly todo?: Todo;
  /** The answer an earlier request with its key got: that record, or that 409. */
  readonly replayed?: boolean;
  /** Not written: no room in the list; its key came with another request; its POST gave up. */
  readonly refused?: 'full' | 'reused' | 'withdrawn';
}

export function intentId(now: number, random: () => number): number {
  return now * 1000 + Math.floor(random() * 1000);
}

/** A look at the queue: the counter, the first intents, and whether the page holds every intent. */
export interface Look {
  readonly counter: QueueCounter;
  readonly intents: readonly QueuedIntent[];
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
  | { readonly kind: 'waiting'; readonly head: Intent | undefined };

/** Where `mine` stands in `look`: gone only if the page covers it (taking a cut page for all made POSTs give up). */
export function placeOf(look: Look, mine: Intent): Place {
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

/** One intent's share of a commit: the record it gets unless refused, and its bytes in the list. */
export interface QueueWrite {
  readonly intent: QueuedIntent;
  readonly todo: Todo;
  readonly bytes: number;
}

/** The record a taken intent gets with `id`, as its POST's version made it. */
function recordFor({ payload }: QueuedIntent, id: number): { todo: Todo; bytes: number } {
  return numbered(payload.draft, payload.request, id);
}

/** What one commit does: write these, delete every intent it took, and leave these outcomes. */
export interface CommitPlan {
  readonly counter: QueueCounter;
  readonly writes: readonly QueueWrite[];
  /** Intents deleted unwritten, and with no outcome: stale, a second copy of one POST's, or done. */
  readonly drops: readonly Intent[];
  /** Outcomes of intents not written (refused, or a key's replay), by uuid, and those intents. */
  readonly settled: ReadonlyMap<string, StoredOutcome>;
  readonly settledIntents: readonly QueuedIntent[];
}

/** An intent older than a request lives: its POST has given up, and it is dropped unwritten. */
export function isStale(intent: Intent, now: number): boolean {
  return intent.id / 1000 < now - INTENT_LIFETIME_MS;
}

/** Outcomes a commit decided before it could write: refusals and replays, and POSTs found done. */
export interface Decided {
  readonly settled: ReadonlyMap<string, StoredOutcome>;
  /** POSTs that have an outcome already (withdrawn, or committed by another): dropped unwritten. */
  readonly done: ReadonlySet<string>;
}

export const NOTHING_DECIDED: Decided = { settled: new Map(), done: new Set() };

/**
 * A commit of `queue` (intents in order, as read): each POST once, none older than a request lives, one per key (others
 * later, with its replay); next ids in turn, to those not `decided`.
 */
export function planCommit(
  counter: QueueCounter,
  queue: readonly QueuedIntent[],
  now: number,
  decided: Decided = NOTHING_DECIDED,
): CommitPlan {
  const uuids = new Set<string>();
  const keys = new Set<string>();
  const drops: Intent[] = [];
  const taken: QueuedIntent[] = [];
  for (const intent of queue.slice(0, MAX_INTENTS)) {
    const copy = uuids.has(intent.uuid);
    uuids.add(intent.uuid);
    if (copy || isStale(intent, now) || decided.done.has(intent.uuid)) {
      drops.push(intent);
      continue;
    }
    const { claim } = intent.payload;
    if (claim && keys.has(claim.key)) continue;
    if (claim) keys.add(claim.key);
    taken.push(intent);
  }
  const written = taken.filter((intent) => !decided.settled.has(intent.uuid));
  for (const { uuid } of written) {
    invariant(!decided.done.has(uuid), 'a POST with an outcome (withdrawn, or written) is never written again', () => ({
      uuid,
    }));
  }
  return {
    counter,
    writes: written.map((intent, j) => ({ intent, ...recordFor(intent, counter.next + j) })),
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

/** Whether the next commit takes `mine`, as `queue` (from the head) shows: among the intents one commit takes. */
export function takenNext(queue: readonly QueuedIntent[], mine: Intent): boolean {
  return queue.slice(0, MAX_INTENTS).some(({ uuid }) => uuid === mine.uuid);
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

/**
 * Each intent's share of a cancelled commit, for `decide`: its uuid and its key; a written one's bytes in the list. A
 * settled one with a key is there too, with no bytes: its claim of a 409 may meet the claim of its own twin, a copy of
 * its request sent again meanwhile, whose answer it then replays (without it, `decide` read that claim as no one's,
 * and the same commit went again and again, at once, to its deadline).
 */
export function commitShares(plan: CommitPlan): Share[] {
  return [
    ...plan.writes.map(({ intent }) => ({
      who: intent.uuid,
      claim: intent.payload.claim,
      bytes: (id: number) => recordFor(intent, id).bytes,
    })),
    ...plan.settledIntents.flatMap(({ uuid, payload: { claim } }) => (claim ? [{ who: uuid, claim }] : [])),
  ];
}

/** After a cancellation (decisions.ts): settled POSTs' outcomes for the next commit from that read; done, dropped. */
export function decidedAfter(decided: Decided, settled: ReadonlyMap<string, Settled>): Decided {
  const outcomes = new Map(decided.settled);
  const done = new Set(decided.done);
  for (const [uuid, outcome] of settled) {
    if (outcome === 'done') done.add(uuid);
    else if (outcome instanceof KeyReused) outcomes.set(uuid, { refused: 'reused' });
    else if (outcome instanceof ListFull)
      outcomes.set(uuid, { refused: 'full', ...(outcome.replayed && { replayed: true }) });
    else if ('value' in outcome && outcome.value !== undefined)
      outcomes.set(uuid, { todo: outcome.value, replayed: true });
  }
  for (const uuid of done) outcomes.delete(uuid);
  return { settled: outcomes, done };
}

export function outcomeOf(
  stored: StoredOutcome,
): { value: Todo; replayed: boolean } | ListFull | KeyReused | 'withdrawn' {
  if (stored.refused === 'full') return new ListFull({ replayed: stored.replayed === true });
  if (stored.refused === 'reused') return new KeyReused();
  if (stored.refused === 'withdrawn' || stored.todo === undefined) return 'withdrawn';
  return { value: recordOf(stored.todo), replayed: stored.replayed === true };
}
