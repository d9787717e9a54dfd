import { recordOf, sizelessBytes, type Todo } from '../todos';
import type { Runtime } from '../runtime';
import type { DynamoDb, Item } from './client';

/**
 * The table's layout, in one place (the same as the `TodosTable` resource in serverless.yml):
 * partition key `pk` (a string), numeric sort key `id`.
 *
 * - Every Todo is an item under `pk = "TODO"` with its id as `id`, so one Query returns the whole
 *   list in id order, which is creation order. Each carries a version `v` that every change of
 *   the item moves on (a PUT, a list's raise of its size; absent: 0), so that a write can be made
 *   conditional on the record being as it was read, and `size`, its bytes in the list as its
 *   writer counted them (`storedSize`). Its other
 *   attributes are the record's fields, each as the version that wrote it named it: a write
 *   changes only what it names, so fields of another version are kept (docs/design.md, "Two
 *   versions on one table").
 * - The counter, `pk = "COUNTER", id = 0`: `next`, the next id to hand out, `bytes`, the
 *   list's size (lib/list-size.ts): the sum of the records' `size`, and the list's version with
 *   what a list needs to read only what changed (lib/dynamodb/list.ts). It exists once the table
 *   is seeded, and only then.
 * - Each queued POST (lib/dynamodb/queue.ts): its intent under the counter's partition, sorted by
 *   arrival, with what it asks for; a big request apart, `pk = "INTENT#<uuid>", id = 0`, where the
 *   queue's looks do not read it.
 * - Each claimed Idempotency-Key, `pk = "KEY#<key>", id = 0`: the request's fingerprint and the
 *   answer it got (lib/dynamodb/claims.ts). It carries `expires`, epoch seconds, which the table's
 *   time to live reads.
 */
export const TABLE_KEY = { partition: 'pk', sort: 'id' } as const;
export const TODO_PARTITION = 'TODO';
export const COUNTER_KEY = { pk: 'COUNTER', id: 0 } as const;
/** The attribute DynamoDB's time to live reads (serverless.yml): epoch seconds. */
export const EXPIRES = 'expires';
/** DynamoDB's limit on one transaction is 4 MB: what the store lets one carry, with room for keys and names. */
export const MAX_TRANSACTION_BYTES = 3_500_000;
/** A generous size of an item beyond its record's bytes in the list (listBytes): key, version, attribute names. */
export const ITEM_OVERHEAD_BYTES = 100;

/** How the store's parts reach the table: its name, DynamoDB (lib/dynamodb/client.ts), and the time and chance they use. */
export interface TableAccess {
  readonly name: string;
  readonly dynamodb: DynamoDb;
  readonly runtime: Runtime;
}

export function todoKey(id: number): { pk: string; id: number } {
  return { pk: TODO_PARTITION, id };
}

export type { Item };

/**
 * The attributes of a Todo item that are not fields of its record (its partition key, its version,
 * its size): a field of the domain may not take one of these names, or a write of the field would
 * be a write of the item's own (docs/contributing.md, "Adding a field").
 */
export const ITEM_ATTRIBUTES: readonly string[] = [TABLE_KEY.partition, 'v', 'size'];

/** A stored Todo item: the record, its version and its size (both absent on an item written before them). */
export interface TodoItem extends Todo {
  readonly v?: number;
  readonly size?: number;
}

// The one mapping between a record and its item, both ways: the item holds the record's fields as
// they are, with its key, its size and its version beside them.

/** A new record's item: `bytes` is its size in the list, as its writer counts it. */
export function todoItem(todo: Todo, bytes: number): Item {
  return { pk: TODO_PARTITION, ...todo, size: bytes };
}

/**
 * A record's bytes in the list as stored: its `size`, which its writer counted with every field
 * it wrote, so that each version moves the list's size by the same figure for one record. An item
 * written by the code before sizes has none, and counts as that code counted it (`sizelessBytes`),
 * whatever fields the version reading it knows.
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

/**
 * The counter item; `bytes` is absent on a table seeded before the list had a size, the list's
 * version and what goes with it (lib/dynamodb/list.ts) on one seeded before the list had a version.
 */
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
    ? { ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(v)' }
    : { ConditionExpression: 'v = :seen', ExpressionAttributeValues: { ':seen': version } };
}

/** A plain write refused because its condition did not hold: what it guarded against had happened. */
export function conditionFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
