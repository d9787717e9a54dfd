import { etagOf, listTag } from '../conditional';
import { StoreUnavailable } from '../errors';
import { log } from '../log';
import { timeLimit } from '../abort';
import type { Todo, TodoList } from '../todos';
import { EDIT_SLOTS, prepareCounter, readCounter } from './counter';
import { NONE_SHORT, afterRead, raiseShort, type ShortRecord, type ShortRecords } from './repair';
import { getItem, todoItems } from './reads';
import { conditionFailed, storedSize, toTodo, todoKey, type Counter, type Item, type TableAccess } from './table';
import { SHARED_IS_OLDER } from './conditions';

/**
 * GET /todos (docs/design.md, "What a list shows"): each write changing the list moves the counter's `version`, so a
 * list first reads the counter, tagged by its version: a 304 reads no record. A container holds the list it read, then
 * reads only what the counter says changed (ids added, edits in slots), or all. One snapshot, any size: the counter is
 * read again after the records, and the edited between, till a round finds no write since: never a list that never was.
 */

/**
 * The list as of one version: the counter read before its records, the records by id, in id order, and those stored
 * smaller than this version answers them, for the read repair to raise (repair.ts).
 */
export interface HeldList {
  readonly counter: Counter & { readonly version: number; readonly listId: string };
  readonly todos: ReadonlyMap<number, Todo>;
  readonly short: ShortRecords;
}

/**
 * Rounds before a 503, never a list that did not exist. Under steady writes a round rarely finds none since its counter
 * (16 clients on one process: 377 of 3,000 answers were 503 at 10 rounds): the deadline comes first.
 */
export const MAX_ROUNDS = 1_000;

export interface ListOptions {
  /** Asked the list's tag before any record is read: true when the caller holds the list with it (If-None-Match). */
  readonly unchanged?: ((tag: string) => boolean) | undefined;
  readonly pageSize?: number | undefined;
  /** False while pre-version code writes (`--param=listVersion=written`, docs/operations.md): read all, by content. */
  readonly versionTrusted?: boolean | undefined;
  /** The counter as this request read it already (the container's seed did): the list's first read. */
  readonly counter?: Counter | undefined;
  /** A list that read more bytes of records than this shares what it read (by default, `sharedAfter`). */
  readonly sharedAfterBytes?: number | undefined;
  /** How long a list waits for its read repair (repair.ts): RAISE_WITHIN_MS by default. */
  readonly raiseWithinMs?: number | undefined;
}

/**
 * The list as a container last shared it, records gzipped, with the counter they were read at: a new container reads
 * on from it what changed, not the whole list (10^4 records, ~150 units, 256 containers: docs/scale.md). Eventually
 * consistent, half the units: a list shared was one at its version, and the counter, read strongly, tells what changed
 * since. A new layout takes a new key; `tag` tells records shown alike.
 */
export const SHARED_KEY = { pk: 'SHARED', id: 0 };
/** Shared past 16 read units and a quarter of the list's bytes: a whole read or a long catch-up, not each list. */
export function sharedAfter(counter: Counter): number {
  return Math.max(64 * 1024, (counter.bytes ?? 0) / 4);
}
/** DynamoDB's items stop at 400 KB: a list larger gzipped is not shared. */
const MAX_SHARED_BYTES = 350_000;
/** Sharing is best effort: a write the table cannot take at once (throttled) is given up, not waited for. */
export const SHARE_WITHIN_MS = 200;

interface SharedItem {
  readonly tag: string;
  /** The counter the records were read at: what changedSince needs of it. */
  readonly listId: string;
  readonly version: number;
  readonly next: number;
  readonly edits: number;
  /** The records' JSON, gzipped, in base64: the client speaks DynamoDB's JSON with strings only (client.ts). */
  readonly records: string;
  /** The records stored short (repair.ts), as `records`; absent when none is (and from code before the repair kept them). */
  readonly short?: string;
}

/** The whole list, tagged by its content: what a list is while the version cannot be trusted. */
async function listByContent(table: TableAccess, signal: AbortSignal, options: ListOptions): Promise<TodoList> {
  const whole = await wholeList(table, undefined, signal, options.pageSize);
  // Each such list reads every record, and so learns every short one again: nothing to hold.
  await raiseShort(table, whole.short, signal, options.raiseWithinMs);
  const todos = [...whole.todos.values()];
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
  let held = holding?.counter.listId === counter.listId ? holding : await sharedList(table, counter, signal);
  const read = { bytes: 0 };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (held?.counter.version === counter.version) {
      // Raised records change no answer, so the list answered is the one read, and the version stays.
      held = { ...held, short: await raiseShort(table, held.short, signal, options.raiseWithinMs) };
      if (read.bytes > (options.sharedAfterBytes ?? sharedAfter(counter))) await share(table, held, signal);
      return { list: { tag: listTag(counter.listId, counter.version), todos: [...held.todos.values()] }, held };
    }
    const changes = held && changedSince(held.counter, counter);
    held =
      (held && changes && (await withChanges(table, held, counter, changes, signal, read))) ??
      (await wholeList(table, counter, signal, options.pageSize, read));
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

/** Records edited since `seen`: slots edited after it, if as many as the edits (no slot holds two); else undefined. */
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

/** What a list read of records, in their bytes in the list. */
function counted(items: readonly (Item | undefined)[], read = { bytes: 0 }): void {
  for (const item of items) read.bytes += item === undefined ? 0 : storedSize(item);
}

/** The whole list, every page, read after `counter`, with the records stored smaller than they are shown. */
async function wholeList<C extends HeldList['counter'] | undefined>(
  table: TableAccess,
  counter: C,
  signal: AbortSignal,
  pageSize: number | undefined,
  read?: { bytes: number },
): Promise<{ counter: C; todos: Map<number, Todo>; short: ShortRecords }> {
  const items = await todoItems(table, signal, pageSize === undefined ? {} : { pageSize });
  counted(items, read);
  return {
    counter,
    todos: new Map(items.map((item) => [item.id as number, toTodo(item)])),
    short: afterRead(NONE_SHORT, items),
  };
}

/** `held`, with edited records (or their absence) and added ones read again after `counter`, added last: id order. */
async function withChanges(
  table: TableAccess,
  held: HeldList,
  counter: HeldList['counter'],
  { addedFrom, edited }: Changes,
  signal: AbortSignal,
  read: { bytes: number },
): Promise<HeldList | undefined> {
  const older = edited.filter((id) => id < addedFrom);
  const [added, ...editedItems] = await Promise.all([
    // No POST since (`next` where it was): no Query, which would cost a read unit to find nothing.
    addedFrom < counter.next ? todoItems(table, signal, { from: addedFrom }) : [],
    ...older.map((id) => getItem(table, todoKey(id), signal)),
  ]);
  counted([...added, ...editedItems], read);
  const todos = new Map([...held.todos].filter(([id]) => id < addedFrom));
  const gone: number[] = [];
  for (const [i, id] of older.entries()) {
    const item = editedItems[i];
    // An edited record it did not hold: this is not the list held (nothing edits what is not there). Read it whole.
    if (item !== undefined && !todos.has(id)) return undefined;
    if (item === undefined) {
      todos.delete(id);
      gone.push(id);
    } else todos.set(id, toTodo(item));
  }
  for (const item of added) todos.set(item.id as number, toTodo(item));
  // Records from `addedFrom` on are as `added` has them, those before as held unless read again.
  const heldShort = new Map([...held.short].filter(([id]) => id < addedFrom));
  const readAgain = [...added, ...editedItems.filter((item): item is Item => item !== undefined)];
  return { counter, todos, short: afterRead(heldShort, readAgain, gone) };
}

/** The list shared, if this list's and its records shown as here; one shared ahead of `counter` is read on as held. */
async function sharedList(
  table: TableAccess,
  counter: HeldList['counter'],
  signal: AbortSignal,
): Promise<HeldList | undefined> {
  const shared = (await getItem(table, SHARED_KEY, signal, false)) as SharedItem | undefined;
  if (shared?.listId !== counter.listId) return undefined;
  const { listId, version, next, edits, tag, records, short } = shared;
  if (tag !== listTag(listId, version)) return undefined;
  const todos = unzipped(records) as Todo[];
  const shortRecords = short === undefined ? [] : (unzipped(short) as ShortRecord[]);
  return {
    counter: { listId, version, next, edits },
    todos: new Map(todos.map((todo) => [todo.id, todo])),
    short: new Map(shortRecords.map((record) => [record.id, record])),
  };
}

/** JSON, gzipped, in base64: as a shared list holds it. */
function zipped(value: unknown): string {
  return process.getBuiltinModule('node:zlib').gzipSync(JSON.stringify(value)).toString('base64');
}

function unzipped(base64: string): unknown {
  return JSON.parse(process.getBuiltinModule('node:zlib').gunzipSync(Buffer.from(base64, 'base64')).toString());
}

/** Shares `held` (sharedList), unless a list as new is shared already: best effort, within SHARE_WITHIN_MS. */
async function share(table: TableAccess, held: HeldList, signal: AbortSignal): Promise<void> {
  const records = zipped([...held.todos.values()]);
  const short = held.short.size === 0 ? undefined : zipped([...held.short.values()]);
  if (records.length + (short?.length ?? 0) > MAX_SHARED_BYTES) return;
  const { listId, version, next, edits = 0 } = held.counter;
  const item: SharedItem = {
    tag: listTag(listId, version),
    listId,
    version,
    next,
    edits,
    records,
    ...(short !== undefined && { short }),
  };
  const limit = timeLimit(SHARE_WITHIN_MS, () => new Error('sharing the list took too long'), table.runtime);
  try {
    await table.dynamodb.putItem(
      {
        TableName: table.name,
        Item: { ...SHARED_KEY, ...item },
        ConditionExpression: SHARED_IS_OLDER,
        ExpressionAttributeNames: { '#version': 'version' },
        ExpressionAttributeValues: { ':version': version, ':listId': listId },
      },
      AbortSignal.any([signal, limit.signal]),
    );
  } catch (error) {
    // Not shared: a list as new is (the condition), or the table could not take it in time. The list stands.
    if (!conditionFailed(error)) log('debug', { message: 'list not shared', error: String(error) });
  } finally {
    limit.stop();
  }
}
