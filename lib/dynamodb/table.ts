import { recordOf, sizelessBytes, type Todo } from '../todos';
import type { Runtime } from '../runtime';
import type { DynamoDb, Item } from './client';
import { RECORD_AT_VERSION, RECORD_UNCHANGED_SINCE_WRITTEN } from './conditions';

/**
 * The table's layout, in one place (`TodosTable` in serverless.yml): string partition key `pk`, numeric sort key `id`.
 * - Every Todo: `pk = "TODO"`, its id as `id` (one Query lists them in id, creation, order); `v`, its version, moved
 *   by every change (absent: 0) so a write can be conditional on the record as read; `size`, its bytes in the list as
 *   its writer counted them (`storedSize`); its fields as the version that wrote them named them: a write changes
 *   only what it names, so another version's fields are kept (docs/design.md, "Two versions on one table").
 * - The counter, `pk = "COUNTER", id = 0` (counter.ts), once the table is seeded; under its partition, each queued
 *   POST's intent, its payload in it (queue.ts); its outcome, `pk = "DONE#<uuid>", id = 0`.
 * - Each claimed Idempotency-Key, `pk = "KEY#<key>", id = 0` (claims.ts), with `expires` for the time to live.
 * - The list as a container last shared it, `pk = "SHARED", id = 0` (list.ts), read by new containers.
 */
export const TABLE_KEY = { partition: 'pk', sort: 'id' } as const;
export const TODO_PARTITION = 'TODO';
export const COUNTER_KEY = { pk: 'COUNTER', id: 0 } as const;
/** The attribute DynamoDB's time to live reads (serverless.yml): epoch seconds. */
export const EXPIRES = 'expires';

/**
 * What the actions a write sends need of the table: its name, and how large the list may grow there (MAX_LIST_BYTES,
 * lib/list-size.ts; smaller in a test that needs a full list of few records: DynamoDbStoreOptions.maxListBytes).
 */
export interface ListTable {
  readonly name: string;
  readonly maxListBytes: number;
}

/** How the store's parts reach the table: the above, DynamoDB (lib/dynamodb/client.ts), and the time and chance they use. */
export interface TableAccess extends ListTable {
  readonly dynamodb: DynamoDb;
  readonly runtime: Runtime;
}

export function todoKey(id: number): { pk: string; id: number } {
  return { pk: TODO_PARTITION, id };
}

export type { Item };

/** The item's own attributes: a field of these names would overwrite them (docs/contributing.md, "Adding a field"). */
export const ITEM_ATTRIBUTES: readonly string[] = [TABLE_KEY.partition, 'v', 'size'];

/** A stored Todo item: the record, its version and its size (both absent on an item written before them). */
export interface TodoItem extends Todo {
  readonly v?: number;
  readonly size?: number;
}

// The one mapping between a record and its item: the record's fields as they are, with key, size and version beside.

/** A new record's item: `bytes` is its size in the list, as its writer counts it. */
export function todoItem(todo: Todo, bytes: number): Item {
  return { pk: TODO_PARTITION, ...todo, size: bytes };
}

/**
 * A record's bytes in the list as stored: its `size`, counted by its writer with every field it wrote, so each version
 * moves the list's size alike for one record; an item from before sizes counts as that code did (`sizelessBytes`).
 */
export function storedSize(item: Item | TodoItem): number {
  const stored = item as TodoItem;
  return stored.size ?? sizelessBytes(stored);
}

/** The record an item holds, whole: every field it stores, this version's or not, without the item's own attributes. */
export function storedRecord(item: Item | TodoItem): Todo {
  const fields = Object.entries(item).filter(([name]) => !ITEM_ATTRIBUTES.includes(name));
  return Object.fromEntries(fields) as unknown as Todo;
}

/** The record an item (or a map that holds a record: a claim's, an outcome's) holds. */
export function toTodo(item: Item | TodoItem): Todo {
  return recordOf(item as TodoItem);
}

/** The counter; `bytes`, and the version with what goes with it (list.ts), absent if seeded before them. */
export interface Counter {
  readonly next: number;
  readonly bytes?: number;
  /** Moved by every write that changes what the list shows: a list read at one version is the list until it moves. */
  readonly version?: number;
  /** The PUTs and DELETEs so far: how many of the version's moves were edits of a record. */
  readonly edits?: number;
  /** This list's name (a UUID): a table made again under the same name is a new list, whose versions start again. */
  readonly listId?: string;
  /** `edited<k>`, `editedAt<k>`: the id of the last record edited with id ≡ k (mod EDIT_SLOTS), and the version it moved the list to. */
  readonly [slot: `edited${number}` | `editedAt${number}`]: number | undefined;
}

/** The condition that an item still has the version read (absent counts as version 0), as a write's fields. */
export function atVersion(version: number | undefined): {
  ConditionExpression: string;
  ExpressionAttributeValues?: Item;
} {
  return version === undefined || version === 0
    ? { ConditionExpression: RECORD_UNCHANGED_SINCE_WRITTEN }
    : { ConditionExpression: RECORD_AT_VERSION, ExpressionAttributeValues: { ':seen': version } };
}

/** A plain write refused because its condition did not hold: what it guarded against had happened. */
export function conditionFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** Whether a conditional write was applied (true) or refused by its condition (false); any other failure throws. */
export async function written(write: Promise<void>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (conditionFailed(error)) return false;
    throw error;
  }
}
