import { KeyReused, ListFull } from '../errors';
import { MAX_LIST_BYTES, listBytes } from '../list-size';
import type { IdempotencyClaim, Todo, Written } from '../todos';
import { claimPut, claimVerdict, inFlightAtDeadline } from './claims';
import { HEAD_LEASE_MS, queuePost, type PostState } from './queue';
import { bytesOf, counterMove, counterVerdict, readCounter, sizeList } from './counter';
import { TODO_PARTITION, type Counter, type TableAccess } from './table';
import { Transaction, commit, type CommitWatch, type Reasons } from './transaction';

/**
 * How POSTs get their ids and their records written. Ids have no gaps and follow creation order,
 * so POSTs write their records and move the counter from n to n + k in one transaction, on
 * condition that the counter still says n (lib/dynamodb/counter.ts). An id is used up only
 * together with its record: no gaps, never reused, whatever the number of containers, deletes or
 * restarts.
 *
 * That condition serializes every POST of every container on one item, and real DynamoDB cancels
 * a transaction that meets another in progress on it. So:
 *
 * - a container alone writes straight away, from the counter as it last saw it: one transaction;
 * - once another container moved the counter, its POSTs queue for a while (lib/dynamodb/queue.ts),
 *   and are written with the others', many in one transaction;
 * - within one process (serverless-offline runs every request in one), POSTs that arrive while a
 *   transaction is in flight go together in the next one (lib/dynamodb/store.ts), which goes on
 *   from the counter as it is.
 *
 * docs/performance.md has the measurement that kept the queue: at 50 POSTs a second over 16
 * containers, on DynamoDB as AWS runs it, it answered every POST, where one transaction a POST
 * did not.
 */

/** A POST as the store takes it. */
export interface NewTodo {
  readonly title: string;
  readonly claim: IdempotencyClaim | undefined;
}

/** What became of a POST: its record, the answer its key replays, or a refusal. */
export type Outcome = Written<Todo> | ListFull | KeyReused;

/** The POSTs of one transaction are told apart by their place in the batch. */
type Role = 'counter' | `record ${number}` | `claim ${number}`;

/** One POST's share of a transaction: its place in the batch, and its record. */
export interface PostWrite {
  readonly index: number;
  readonly todo: Todo;
}

/** What one transaction commits for the POSTs still open: each its record, with the next ids in turn. */
export function planPosts(counter: Counter, posts: readonly NewTodo[], open: readonly number[]): PostWrite[] {
  return open.map((index, j) => ({
    index,
    todo: { id: counter.next + j, title: posts[index]?.title ?? '', completed: false },
  }));
}

export function postTransaction(
  table: string,
  counter: Counter,
  posts: readonly NewTodo[],
  writes: readonly PostWrite[],
): Transaction<Role> {
  const transaction = new Transaction<Role>().add(
    'counter',
    counterMove(
      table,
      counter,
      writes.map(({ todo }) => todo),
    ),
  );
  for (const { index, todo } of writes) {
    transaction.add(`record ${index}`, {
      Put: { TableName: table, Item: { pk: TODO_PARTITION, ...todo }, ConditionExpression: 'attribute_not_exists(pk)' },
    });
    const claim = posts[index]?.claim;
    if (claim !== undefined) transaction.add(`claim ${index}`, claimPut(table, claim, { todo }));
  }
  return transaction;
}

/** What a cancellation of POSTs means: the POSTs it settles, and what to do next. */
export interface PostVerdict {
  /** Answers for some POSTs: their key's replay, KeyReused, or ListFull. */
  readonly settled: ReadonlyMap<number, Outcome>;
  readonly next:
    | { readonly kind: 'again'; readonly counter: Counter }
    | { readonly kind: 'unsized' }
    | { readonly kind: 'unexplained' };
}

/**
 * Reads a cancellation of `writes` (made from `counter`). A key claimed before settles its POST
 * with its replay (or KeyReused); a counter that moved sends the others again from where it is;
 * a list with no room refuses, in order, those that do not fit. A claim that expired just now is
 * claimed anew by the next attempt.
 */
export function postVerdict(
  reasons: Reasons<Role>,
  counter: Counter,
  posts: readonly NewTodo[],
  writes: readonly PostWrite[],
): PostVerdict {
  const settled = new Map<number, Outcome>();
  let expired = false;
  for (const { index } of writes) {
    const claimed = claimVerdict(reasons[`claim ${index}`], posts[index]?.claim);
    if (claimed === 'expired') expired = true;
    else if (claimed !== undefined && 'refused' in claimed) settled.set(index, claimed.refused);
    else if (claimed?.replay.value !== undefined) settled.set(index, { value: claimed.replay.value, replayed: true });
  }
  const verdict = counterVerdict(reasons.counter, counter.next);
  if (verdict?.kind === 'unsized') return { settled, next: { kind: 'unsized' } };
  if (verdict?.kind === 'moved') return { settled, next: { kind: 'again', counter: verdict.counter } };
  if (verdict?.kind === 'full') {
    // Those settled by their keys take no room: the others may fit now.
    if (settled.size === 0) refuseWhatDoesNotFit(verdict.counter, writes, settled);
    return { settled, next: { kind: 'again', counter: verdict.counter } };
  }
  if (settled.size > 0 || expired) return { settled, next: { kind: 'again', counter } };
  return { settled, next: { kind: 'unexplained' } };
}

/** With the list as `counter` has it, refuses (ListFull) each POST, in order, that would not fit. */
function refuseWhatDoesNotFit(counter: Counter, writes: readonly PostWrite[], settled: Map<number, Outcome>): void {
  let room = MAX_LIST_BYTES - (counter.bytes ?? 0);
  let id = counter.next;
  for (const { index, todo } of writes) {
    const size = listBytes({ id, title: todo.title });
    if (size <= room) {
      room -= size;
      id++;
    } else {
      settled.set(index, new ListFull());
    }
  }
}

/**
 * Writes these POSTs' records with the next ids: in one transaction when this container writes
 * alone or for a batch, in the queue otherwise. Each gets its outcome, in order.
 */
export async function createPosts(
  table: TableAccess,
  state: PostState,
  posts: readonly NewTodo[],
  signal: AbortSignal,
  deadline: number,
): Promise<Outcome[]> {
  // A batch of several is one process with many requests at once (the emulator): its one
  // transaction writes them all, so it goes on from the counter as it is rather than queue each.
  const batch = posts.length > 1;
  if (!batch && (state.counter === undefined || Date.now() < state.othersUntil)) {
    return Promise.all(posts.map((post) => queuePost(table, state, post, signal, deadline)));
  }
  const outcomes = await writeTogether(table, state, posts, signal, batch);
  // Another container moved the counter: the POSTs not settled queue.
  return Promise.all(
    posts.map(async (post, index) => outcomes[index] ?? (await queuePost(table, state, post, signal, deadline))),
  );
}

/**
 * The POSTs in one transaction, from the counter as this container knows it. When another
 * container moved the counter: a batch (`race`) goes on from the counter as it is now; a single
 * POST stops, its outcome left undefined, and the container queues its POSTs for a while. At the
 * deadline, a key that another request with it kept busy to the end is a KeyInFlight: the other's
 * answer is not known yet.
 */
function writeTogether(
  table: TableAccess,
  state: PostState,
  posts: readonly NewTodo[],
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
      const transaction = postTransaction(table.name, counter, posts, writes);
      const watch = watchPosts(table, state, counter, signal, contended);
      const reasons = await commit(table, transaction, signal, watch);
      if (reasons === 'superseded') {
        if (race) continue;
        return outcomes;
      }
      if (reasons === undefined) {
        const todos = writes.map(({ todo }) => todo);
        state.counter = { next: counter.next + todos.length, bytes: (counter.bytes ?? 0) + bytesOf(todos) };
        for (const { index, todo } of writes) outcomes[index] = { value: todo, replayed: false };
        continue;
      }
      const verdict = postVerdict(reasons, counter, posts, writes);
      for (const [index, outcome] of verdict.settled) outcomes[index] = outcome;
      if (verdict.next.kind === 'unexplained') throw new Error(`POSTs cancelled for ${JSON.stringify(reasons)}`);
      if (verdict.next.kind === 'unsized') {
        await sizeList(table, signal);
        state.counter = undefined;
        continue;
      }
      if (verdict.next.counter.next === counter.next) {
        state.counter = verdict.next.counter;
        continue;
      }
      othersWrite(state, verdict.next.counter);
      if (!race) return outcomes;
    }
  });
}

/**
 * What POSTs listen for while their transaction is sent again: a conflict on a key's claim (another
 * request with the key holds it), and a counter that another container's POST moved meanwhile
 * (then this transaction can never be applied, and sending it again would only wait).
 */
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
      if (claims.some(([, reason]) => reason?.code === 'TransactionConflict')) contended();
    },
    superseded: async () => {
      const now = await readCounter(table, signal);
      if (now === undefined || now.next === counter.next) return false;
      othersWrite(state, now);
      return true;
    },
  };
}

/** Another container moved the counter: it is taken as it is now, and this container's POSTs queue for a while. */
function othersWrite(state: PostState, counter: Counter): void {
  state.counter = counter;
  state.othersUntil = Date.now() + HEAD_LEASE_MS;
}
