import { ListFull, type Refusal } from '../errors';
import { createTodo, listBytes, type IdempotencyClaim, type NewTodo, type Todo, type Written } from '../todos';
import { claimKey, claimPut, inFlightAtDeadline, replayOf } from './claims';
import { getItem } from './reads';
import { HEAD_LEASE_MS, queuePost, queues, type PostState } from './queue';
import { added, counterMove, prepareCounter, readCounter } from './counter';
import { conditionFailed, todoItem, type Counter, type ListTable, type TableAccess } from './table';
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

/** One POST's share of a transaction: its place in the batch, and its record. */
export interface PostWrite {
  readonly index: number;
  readonly todo: Todo;
}

/** What one transaction commits for the POSTs still open: each its record, with the next ids in turn. */
export function planPosts(counter: Counter, posts: readonly Post[], open: readonly number[]): PostWrite[] {
  return open.flatMap((index, j) => {
    const post = posts[index];
    return post === undefined ? [] : [{ index, todo: createTodo(post.request, counter.next + j) }];
  });
}

export function postTransaction(
  table: ListTable,
  counter: Counter,
  posts: readonly Post[],
  writes: readonly PostWrite[],
  { token, now }: { token: string; now: number },
): Transaction<Role> {
  const transaction = new Transaction<Role>(token).add(
    'counter',
    counterMove(table, counter, added(writes.map(({ todo }) => todo))),
  );
  for (const { index, todo } of writes) {
    transaction.add(`record ${index}`, {
      Put: {
        TableName: table.name,
        Item: todoItem(todo, listBytes(todo)),
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
  state: PostState,
  posts: readonly Post[],
  signal: AbortSignal,
  deadline: number,
): Promise<Outcome[]> {
  // A batch is one process with many requests (the emulator): its one transaction writes them all, from the counter
  // as it is, rather than queue each; without the queue (`queuePosts: false`), a POST alone races so too.
  const race = posts.length > 1 || !state.queue;
  if (!race && queues(state, table.runtime.now())) {
    return Promise.all(posts.map((post) => queuePost(table, state, post, signal, deadline)));
  }
  const outcomes = await writeTogether(table, state, posts, signal, race);
  // Another container moved the counter: the POSTs not settled queue.
  return Promise.all(
    posts.map(async (post, index) => outcomes[index] ?? (await queuePost(table, state, post, signal, deadline))),
  );
}

/**
 * The POSTs in one transaction, from the counter as known. Moved by another container: a batch (`race`) goes on from
 * it; a single POST stops (outcome undefined), its container queuing a while. Key busy to the deadline: KeyInFlight.
 */
function writeTogether(
  table: TableAccess,
  state: PostState,
  posts: readonly Post[],
  signal: AbortSignal,
  race: boolean,
): Promise<(Outcome | undefined)[]> {
  return inFlightAtDeadline(signal, async (contended) => {
    const outcomes: (Outcome | undefined)[] = posts.map(() => undefined);
    for (;;) {
      const open = posts.flatMap((_post, index) => (outcomes[index] === undefined ? [index] : []));
      if (open.length === 0) return outcomes;
      const counter = state.counter ?? (await readCounter(table, signal));
      if (counter === undefined) throw new Error(`table ${table.name} has no id counter`);
      const writes = planPosts(counter, posts, open);
      const made = { token: table.runtime.uuid(), now: table.runtime.now() };
      const transaction = postTransaction(table, counter, posts, writes, made);
      const watch = watchPosts(table, state, counter, signal, contended);
      const committed = await commit(table, transaction, signal, watch);
      if (committed === 'superseded') {
        if (race) continue;
        return outcomes;
      }
      if (committed === 'applied') {
        const { records, bytes } = added(writes.map(({ todo }) => todo));
        state.counter = { next: counter.next + records, bytes: (counter.bytes ?? 0) + bytes };
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
        state.counter = undefined;
        continue;
      }
      if (next.kind === 'again') {
        state.counter = next.counter ?? counter;
        continue;
      }
      if (next.kind !== 'moved' || next.counter === undefined) throw new Error(`POSTs cancelled for ${codes}`);
      othersWrite(table, state, next.counter);
      if (!race) return outcomes;
    }
  });
}

/**
 * A keyed POST refused for a full list keeps its 409 under its key, as a PUT does (rewrite.ts): an earlier attempt's
 * copy on its way then finds the key claimed, not applying once a DELETE made room. Claimed first: its answer.
 */
async function keepRefusal(table: TableAccess, claim: IdempotencyClaim, signal: AbortSignal): Promise<Outcome> {
  for (;;) {
    try {
      await table.dynamodb.putItem(claimPut(table.name, claim, { listFull: true }, table.runtime.now()).Put, signal);
      return new ListFull();
    } catch (error) {
      if (!conditionFailed(error)) throw error;
    }
    const kept = await getItem(table, claimKey(claim.key), signal);
    // A claim gone or expired since leaves the key free: claimed again.
    const answer = kept && postOutcome(replayOf(kept, claim, table.runtime.now()) ?? 'done');
    if (answer) return answer;
  }
}

/** On resends: a conflict on a claim (another request holds the key); others moved the counter (it can't apply). */
function watchPosts(
  table: TableAccess,
  state: PostState,
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
      othersWrite(table, state, now);
      return true;
    },
  };
}

/** Another container moved the counter: it is taken as it is now, and this container's POSTs queue for a while. */
function othersWrite(table: TableAccess, state: PostState, counter: Counter): void {
  state.counter = counter;
  state.othersUntil = table.runtime.now() + HEAD_LEASE_MS;
}
