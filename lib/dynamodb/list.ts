import { etagOf, listTag } from '../conditional';
import { StoreUnavailable } from '../errors';
import type { Todo, TodoList } from '../todos';
import { EDIT_SLOTS, prepareCounter, raiseSizes, readCounter } from './counter';
import { getItem, todoItems } from './reads';
import { toTodo, todoKey, type Counter, type TableAccess } from './table';

/**
 * GET /todos on DynamoDB (docs/design.md, "What a list shows"): every write that changes the list moves the counter's
 * `version`, so a list starts with one small read, the counter, and its tag comes from the version: a 304 reads no
 * record. A container holds the list it read; later it reads only what the counter says changed (ids POSTs added,
 * records PUTs and DELETEs noted in its slots), or else the whole list. One snapshot at any size: the counter is read
 * again after the records; the records edited between are read again, then the counter, until a round finds no write
 * since its counter: the list at that last read, never a state that did not exist.
 */

/** The list as of one version: the counter read before its records, and the records by id, in id order. */
export interface HeldList {
  readonly counter: Counter & { readonly version: number; readonly listId: string };
  readonly todos: ReadonlyMap<number, Todo>;
}

/**
 * A bound on a list's rounds, past which it is a 503, never a list that did not exist. Under a steady stream of
 * writes a round finds none since its counter only now and then (16 clients writing on one process: 377 of 3,000
 * answers were 503 at 10 rounds), so in practice the request's deadline ends the rounds first.
 */
export const MAX_ROUNDS = 1_000;

export interface ListOptions {
  /** Asked the list's tag before any record is read: true when the caller holds the list with it (If-None-Match). */
  readonly unchanged?: ((tag: string) => boolean) | undefined;
  readonly pageSize?: number | undefined;
  /**
   * False while code from before list versions may still write (`--param=listVersion=written`, docs/operations.md):
   * its writes move no version, so a list reads it whole and is tagged by its content.
   */
  readonly versionTrusted?: boolean | undefined;
  /** The counter as this request read it already (the container's seed did): the list's first read. */
  readonly counter?: Counter | undefined;
}

/** The whole list, tagged by its content: what a list is while the version cannot be trusted. */
async function listByContent(table: TableAccess, signal: AbortSignal, options: ListOptions): Promise<TodoList> {
  const todos = [...(await wholeList(table, undefined, signal, options.pageSize)).todos.values()];
  const tag = `W/${etagOf(JSON.stringify(todos))}`;
  return options.unchanged?.(tag) ? { tag } : { tag, todos };
}

/** The list, read from `holding` (the list as this container last read it, if it did), and what to hold next. */
export async function readList(
  table: TableAccess,
  holding: HeldList | undefined,
  signal: AbortSignal,
  options: ListOptions = {},
): Promise<{ list: TodoList; held?: HeldList }> {
  if (options.versionTrusted === false) return { list: await listByContent(table, signal, options) };
  let counter = await versionedCounter(table, signal, options.counter);
  const tag = listTag(counter.listId, counter.version);
  if (options.unchanged?.(tag)) return { list: { tag } };
  // A list held of a table since made again under the same name is another list's.
  let held = holding?.counter.listId === counter.listId ? holding : undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (held?.counter.version === counter.version) {
      return { list: { tag: listTag(counter.listId, counter.version), todos: [...held.todos.values()] }, held };
    }
    const changes = held && changedSince(held.counter, counter);
    held =
      (held && changes && (await withChanges(table, held, counter, changes, signal))) ??
      (await wholeList(table, counter, signal, options.pageSize));
    counter = await versionedCounter(table, signal);
  }
  throw new StoreUnavailable(`the list changed in each of ${MAX_ROUNDS} rounds of its read`);
}

/** The counter, with its version: on a table seeded before lists had one, prepared first (lib/dynamodb/counter.ts). */
async function versionedCounter(table: TableAccess, signal: AbortSignal, read?: Counter): Promise<HeldList['counter']> {
  let counter = read ?? (await readCounter(table, signal));
  if (counter?.version === undefined) {
    await prepareCounter(table, signal);
    counter = await readCounter(table, signal);
  }
  if (counter?.version === undefined || counter.listId === undefined) throw new Error('the counter has no version');
  return counter as HeldList['counter'];
}

/** What changed between two counters, when the later one tells: the first id POSTs added since, and the records edited. */
interface Changes {
  readonly addedFrom: number;
  readonly edited: readonly number[];
}

/**
 * The records edited between `seen` and `now`: each slot edited after `seen`, when as many as the edits since (no
 * slot holds two); otherwise undefined: more edits than the slots tell apart.
 */
export function changedSince(seen: Counter, now: Counter): Changes | undefined {
  const version = seen.version ?? 0;
  const edited: number[] = [];
  for (let slot = 0; slot < EDIT_SLOTS; slot++) {
    const at = now[`editedAt${slot}`];
    const id = now[`edited${slot}`];
    if (at !== undefined && id !== undefined && at > version) edited.push(id);
  }
  const edits = (now.edits ?? 0) - (seen.edits ?? 0);
  return edited.length === edits ? { addedFrom: seen.next, edited } : undefined;
}

/** The whole list, every page, read after `counter`; records stored smaller than they are shown are raised (read repair). */
async function wholeList<C extends HeldList['counter'] | undefined>(
  table: TableAccess,
  counter: C,
  signal: AbortSignal,
  pageSize: number | undefined,
): Promise<{ counter: C; todos: Map<number, Todo> }> {
  const items = await todoItems(table, signal, pageSize === undefined ? {} : { pageSize });
  await raiseSizes(table, items, signal);
  return { counter, todos: new Map(items.map((item) => [item.id as number, toTodo(item)])) };
}

/**
 * `held`, with what `changes` says changed read again after `counter`: each edited record (or its absence: deleted),
 * and every record from the first id added on, which go last, keeping the Map in id order.
 */
async function withChanges(
  table: TableAccess,
  held: HeldList,
  counter: HeldList['counter'],
  { addedFrom, edited }: Changes,
  signal: AbortSignal,
): Promise<HeldList | undefined> {
  const older = edited.filter((id) => id < addedFrom);
  const [added, ...editedItems] = await Promise.all([
    // No POST since (`next` where it was): no Query, which would cost a read unit to find nothing.
    addedFrom < counter.next ? todoItems(table, signal, { from: addedFrom }) : [],
    ...older.map((id) => getItem(table, todoKey(id), signal)),
  ]);
  const todos = new Map([...held.todos].filter(([id]) => id < addedFrom));
  for (const [i, id] of older.entries()) {
    const item = editedItems[i];
    // An edited record it did not hold: this is not the list held (nothing edits what is not there). Read it whole.
    if (item !== undefined && !todos.has(id)) return undefined;
    if (item === undefined) todos.delete(id);
    else todos.set(id, toTodo(item));
  }
  for (const item of added) todos.set(item.id as number, toTodo(item));
  return { counter, todos };
}
