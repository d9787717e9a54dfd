import { ListFull, StoreUnavailable, type Refusal } from '../errors';
import { createTodo, listBytes, type IdempotencyClaim, type NewTodo, type Todo, type Written } from '../todos';
import { claimKey, claimPut, inFlightAtDeadline, replayOf } from './claims';
import { getItem } from './reads';
import { queuePost } from './queue';
import type { Pacing, QueueView } from './pacing';
import { counterAfter, counterMove, prepareCounter, readCounter, type Added } from './counter';
import { todoItem, written, type Counter, type ListTable, type TableAccess } from './table';
import { decide, decidingAt, type Settled, type Share } from './decisions';
import { Transaction, commit, type CommitWatch } from './transaction';
import { ITEM_IS_NEW } from './conditions';

/**
 * POSTs: ids have no gaps and follow creation order, so POSTs write records and move the counter from n to n + k in one
 * transaction, if it still says n (counter.ts): an id is used only with its record, whatever the containers, deletes or
 * restarts. That serializes all POSTs on one item, and DynamoDB cancels a transaction meeting another on it. So a
 * container alone writes from the counter as it last saw it, in one transaction; a new one, or one that saw others
 * write, queues (queue.ts): many POSTs a transaction (50 a second from 16 containers on AWS all answered, one
 * transaction each did not: docs/performance.md); one process's POSTs during a transaction go in the next (store.ts).
 */

/** A POST as the store takes it: what it asks for, and its key's claim. */
export interface Post {
  readonly request: NewTodo;
  readonly claim: IdempotencyClaim | undefined;
}

/** What became of a POST: its record, the answer its key replays, or a refusal (ListFull, KeyReused). */
export type Outcome = Written<Todo> | Refusal;

/** The POSTs of one transaction are told apart by their place in the batch. */
type Role = 'counter' | `record ${number}` | `claim ${number}`;

/** One POST's share of a transaction: its place in the batch, and its record with its bytes in the list. */
export interface PostWrite extends Added {
  readonly index: number;
}

/** What one transaction commits for the POSTs still open: each its record, with the next ids in turn. */
export function planPosts(counter: Counter, posts: readonly Post[], open: readonly number[]): PostWrite[] {
  return open.flatMap((index, j) => {
    const post = posts[index];
    if (post === undefined) return [];
    const todo = createTodo(post.request, counter.next + j);
    return [{ index, todo, bytes: listBytes(todo) }];
  });
}

export function postTransaction(
  table: ListTable,
  counter: Counter,
  posts: readonly Post[],
  writes: readonly PostWrite[],
  { token, now }: { token: string; now: number },
): Transaction<Role> {
  const transaction = new Transaction<Role>(token).add('counter', counterMove(table, counter, writes));
  for (const { index, todo, bytes } of writes) {
    transaction.add(`record ${index}`, {
      Put: {
        TableName: table.name,
        Item: todoItem(todo, bytes),
        ConditionExpression: ITEM_IS_NEW,
      },
    });
    const claim = posts[index]?.claim;
    if (claim !== undefined) transaction.add(`claim ${index}`, claimPut(table.name, claim, { todo }, now));
  }
  return transaction;
}

/** Each POST's share of a cancelled transaction, for `decide`: its place in the batch, its key, its bytes in the list. */
export function postShares(posts: readonly Post[], writes: readonly PostWrite[]): Share[] {
  return writes.map(({ index, todo }) => ({
    who: String(index),
    claim: posts[index]?.claim,
    bytes: (id) => listBytes({ ...todo, id }),
  }));
}

/** A settled POST's outcome: its key's replay (a record), KeyReused or ListFull. */
function postOutcome(settled: Settled): Outcome | undefined {
  if (settled instanceof Error) return settled;
  if (settled === 'done' || settled.value === undefined) return undefined;
  return { value: settled.value, replayed: true };
}

/** Writes these POSTs' records with the next ids: in one transaction when alone or a batch, in the queue otherwise. */
export async function createPosts(
  table: TableAccess,
  { view, pacing }: { view: QueueView; pacing: Pacing },
  posts: readonly Post[],
  signal: AbortSignal,
  deadline: number,
): Promise<Outcome[]> {
  // A batch is one process with many requests (the emulator): its one transaction writes them all, from the counter
  // as it is, rather than queue each. A POST alone queues when its pacing says so.
  const race = posts.length > 1;
  function queued(post: Post): Promise<Outcome> {
    return queuePost(table, view, pacing, post, signal, deadline);
  }
  if (!race && pacing.queues(view, table.runtime.now())) return Promise.all(posts.map(queued));
  const outcomes = await writeTogether(table, { view, pacing }, posts, signal, race);
  // Another container moved the counter: the POSTs not settled queue.
  return Promise.all(posts.map(async (post, index) => outcomes[index] ?? (await queued(post))));
}

/** The most transactions one call of `writeTogether` sends: past it (a counter always moving), a 503. */
const MAX_ROUNDS = 1_000;

/**
 * The POSTs in one transaction, from the counter as known. Moved by another container: a batch (`race`) goes on from
 * it; a single POST stops (outcome undefined), its container queuing a while. Key busy to the deadline: KeyInFlight.
 */
function writeTogether(
  table: TableAccess,
  { view, pacing }: { view: QueueView; pacing: Pacing },
  posts: readonly Post[],
  signal: AbortSignal,
  race: boolean,
): Promise<(Outcome | undefined)[]> {
  // Alone, and the counter moved under it: its pacing says whether it queues, or goes on from the counter as it is.
  function alone(): boolean {
    return !race && pacing.queues(view, table.runtime.now());
  }
  return inFlightAtDeadline(signal, async (contended) => {
    const outcomes: (Outcome | undefined)[] = posts.map(() => undefined);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const open = posts.flatMap((_post, index) => (outcomes[index] === undefined ? [index] : []));
      if (open.length === 0) return outcomes;
      const counter = view.counter ?? (await readCounter(table, signal));
      if (counter === undefined) throw new Error(`table ${table.name} has no id counter`);
      const writes = planPosts(counter, posts, open);
      const made = { token: table.runtime.uuid(), now: table.runtime.now() };
      const transaction = postTransaction(table, counter, posts, writes, made);
      const watch = watchPosts(table, view, counter, signal, contended);
      const committed = await commit(table, transaction, signal, watch);
      if (committed === 'superseded') {
        if (alone()) return outcomes;
        continue;
      }
      if (committed === 'applied') {
        view.counter = counterAfter(counter, writes);
        for (const { index, todo } of writes) outcomes[index] = { value: todo, replayed: false };
        continue;
      }
      const { meanings, codes } = committed.cancelled;
      const { settled, next } = decide(meanings, postShares(posts, writes), decidingAt(table));
      for (const [who, outcome] of settled) {
        const { claim } = posts[Number(who)] ?? {};
        const refused = outcome instanceof ListFull && !outcome.replayed && claim !== undefined;
        outcomes[Number(who)] = refused ? await keepRefusal(table, claim, signal) : postOutcome(outcome);
      }
      if (next.kind === 'size the list') {
        await prepareCounter(table, signal);
        view.counter = undefined;
        continue;
      }
      if (next.kind === 'again') {
        view.counter = next.counter ?? counter;
        continue;
      }
      if (next.kind !== 'moved' || next.counter === undefined) throw new Error(`POSTs cancelled for ${codes}`);
      othersWrite(table, view, next.counter);
      if (alone()) return outcomes;
    }
    throw new StoreUnavailable(`POSTs met a moving counter in ${MAX_ROUNDS} transactions`);
  });
}

/**
 * A keyed POST refused for a full list keeps its 409 under its key, as a PUT does (rewrite.ts): an earlier attempt's
 * copy on its way then finds the key claimed, not applying once a DELETE made room. Claimed first: its answer.
 */
async function keepRefusal(table: TableAccess, claim: IdempotencyClaim, signal: AbortSignal): Promise<Outcome> {
  // A claim found, then gone (expired) before it was read, again and again: a 503 after these many.
  for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
    const put = claimPut(table.name, claim, { listFull: true }, table.runtime.now()).Put;
    if (await written(table.dynamodb.putItem(put, signal))) return new ListFull();
    const kept = await getItem(table, claimKey(claim.key), signal);
    // A claim gone or expired since leaves the key free: claimed again.
    const answer = kept && postOutcome(replayOf(kept, claim, table.runtime.now()) ?? 'done');
    if (answer) return answer;
  }
  throw new StoreUnavailable(`a key's claim for a 409 came and went ${MAX_CLAIM_ROUNDS} times`);
}

/** Rounds of `keepRefusal`: a claim that expires between its put and its read is rare; three in a row, never seen. */
const MAX_CLAIM_ROUNDS = 3;

/** On resends: a conflict on a claim (another request holds the key); others moved the counter (it can't apply). */
function watchPosts(
  table: TableAccess,
  view: QueueView,
  counter: Counter,
  signal: AbortSignal,
  contended: () => void,
): CommitWatch<Role> {
  return {
    metOthers: (met) => {
      const claims = Object.entries(met).filter(([role]) => role.startsWith('claim'));
      if (claims.some(([, meaning]) => meaning?.kind === 'conflict')) contended();
    },
    superseded: async () => {
      const now = await readCounter(table, signal);
      if (now === undefined || now.next === counter.next) return false;
      othersWrite(table, view, now);
      return true;
    },
  };
}

/** Another container moved the counter: it is taken as it is now, and others are seen at work. */
function othersWrite(table: TableAccess, view: QueueView, counter: Counter): void {
  view.counter = counter;
  view.othersSeenAt = table.runtime.now();
}
