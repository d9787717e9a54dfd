import { KeyReused, ListFull } from '../errors';
import { MAX_LIST_BYTES, listBytes } from '../list-size';
import type { IdempotencyClaim, Todo, Written } from '../todos';
import { claimPut, claimVerdict, inFlightAtDeadline } from './claims';
import { bytesOf, counterMove, counterVerdict, readCounter, sizeList } from './counter';
import { TODO_PARTITION, type Counter, type TableAccess } from './table';
import { Transaction, commit, type Reasons } from './transaction';

/**
 * How POSTs get their ids and their records written. Ids have no gaps and follow creation order,
 * so POSTs write their records and move the counter from n to n + k in one transaction, on
 * condition that the counter still says n (lib/dynamodb/counter.ts). An id is used up only
 * together with its record: no gaps, never reused, whatever the number of containers, deletes or
 * restarts.
 *
 * A container writes with the counter as it last saw it. If another container moved it meanwhile,
 * the cancellation carries the counter as it is now, and the container tries again from there,
 * with a new transaction; a transaction that only met another on the counter (a conflict, a
 * throttle) is sent again as it is, with its own token (lib/dynamodb/transaction.ts), so that a
 * copy of it that lands late is never a second record.
 *
 * That condition serializes every POST of every container on one item, and real DynamoDB cancels
 * a transaction that meets another in progress on it: POSTs a second are bounded by how long one
 * transaction holds the counter (docs/scale.md). A queue of POSTs written together by one
 * container for all was measured against this on DynamoDB as AWS runs it, and did not earn its
 * place (docs/performance.md).
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
    if (claim !== undefined) transaction.add(`claim ${index}`, claimPut(table, claim, todo));
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
 * The counter as this container last saw or left it: where its next POST starts from, unless
 * other containers were moving it lately (`othersUntil`, epoch ms). Then it is read first: a
 * transaction from a stale counter is cancelled, and holds the counter while it is, which makes
 * every other POST wait too.
 */
export interface KnownCounter {
  counter: Counter | undefined;
  othersUntil: number;
}

/** After a sign that other containers are writing too, read the counter before each POST for this long. */
export const OTHERS_WRITING_MS = 1_000;

/**
 * Writes these POSTs' records with the next ids, in one transaction; each gets its outcome, in
 * order. At the deadline, a key that another request with it kept busy to the end is a
 * KeyInFlight: the other's answer is not known yet.
 */
export function createPosts(
  table: TableAccess,
  known: KnownCounter,
  posts: readonly NewTodo[],
  signal: AbortSignal,
): Promise<Outcome[]> {
  return inFlightAtDeadline(signal, async (contended) => {
    const outcomes: (Outcome | undefined)[] = posts.map(() => undefined);
    for (;;) {
      const open = posts.flatMap((_post, index) => (outcomes[index] === undefined ? [index] : []));
      if (open.length === 0) return outcomes.filter((outcome) => outcome !== undefined);
      const counter =
        known.counter !== undefined && Date.now() >= known.othersUntil
          ? known.counter
          : await readCounter(table, signal);
      if (counter === undefined) throw new Error(`table ${table.name} has no id counter`);
      const writes = planPosts(counter, posts, open);
      const reasons = await commit(
        table.dynamo,
        table.db,
        postTransaction(table.name, counter, posts, writes),
        signal,
        {
          metOthers: (met) => {
            const claims = Object.entries(met).filter(([role]) => role.startsWith('claim'));
            if (claims.some(([, reason]) => reason?.code === 'TransactionConflict')) contended();
          },
          // Met on the counter, most likely by another container's POST: once that one has moved
          // the counter, this transaction can never be applied, and sending it again only waits.
          superseded: async () => {
            const now = await readCounter(table, signal);
            if (now === undefined || now.next === counter.next) return false;
            known.counter = now;
            known.othersUntil = Date.now() + OTHERS_WRITING_MS;
            return true;
          },
        },
      );
      if (reasons === 'superseded') continue;
      if (reasons === undefined) {
        const todos = writes.map(({ todo }) => todo);
        known.counter = { next: counter.next + todos.length, bytes: (counter.bytes ?? 0) + bytesOf(todos) };
        for (const { index, todo } of writes) outcomes[index] = { value: todo, replayed: false };
        continue;
      }
      const verdict = postVerdict(reasons, counter, posts, writes);
      for (const [index, outcome] of verdict.settled) outcomes[index] = outcome;
      if (verdict.next.kind === 'unexplained') throw new Error(`POSTs cancelled for ${JSON.stringify(reasons)}`);
      if (verdict.next.kind === 'unsized') {
        await sizeList(table, signal);
        known.counter = undefined;
      } else {
        if (verdict.next.counter.next !== counter.next) known.othersUntil = Date.now() + OTHERS_WRITING_MS;
        known.counter = verdict.next.counter;
      }
    }
  });
}
