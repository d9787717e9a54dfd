import { listBytes, type Todo } from '../todos';
import { getItem, todoItems } from './reads';
import { COUNTER_KEY, storedSize, written, type Counter, type Item, type ListTable, type TableAccess } from './table';
import type { TransactItem } from './client';
import { invariant } from './invariant';
import { COUNTER_AT_NEXT_WITH_ROOM, COUNTER_HAS_ROOM, COUNTER_SIZED_AND_VERSIONED, notSetYet } from './conditions';

/**
 * The counter: `next`, the next id; `bytes`, the list's size (lib/list-size.ts). Writes move it in their transaction,
 * if as assumed: a POST moves `next` from n to n + k and `bytes` by its records' size if `next` is still n and there is
 * room (ids have no gaps, are never reused; the list never passes MAX_LIST_BYTES); a PUT or DELETE moves `bytes` by its
 * change. So `bytes` is the sum of the records' `storedSize` (table.ts). Each moves `version` too, a PUT or DELETE
 * noting its record (`edits`, slots) for lists (list.ts). Seeded before `bytes` or `version`: `prepareCounter`.
 */

export function bytesOf(todos: readonly Todo[]): number {
  return todos.reduce((sum, todo) => sum + listBytes(todo), 0);
}

/** A record a POST adds to the list, and its bytes there as the version that made it counts them. */
export interface Added {
  readonly todo: Todo;
  readonly bytes: number;
}

/** The bytes `records` add to the list. */
export function addedBytes(records: readonly Added[]): number {
  return records.reduce((sum, { bytes }) => sum + bytes, 0);
}

/** The counter once `records` were written from `counter`. */
export function counterAfter(counter: Counter, records: readonly Added[]): Counter {
  return { next: counter.next + records.length, bytes: (counter.bytes ?? 0) + addedBytes(records) };
}

/**
 * A POST's move: the records take ids from `counter.next` on, in turn (asserted), if no one moved it and they fit. A
 * queue commit leaves its ids in `recent` (by intent) for waiting POSTs; a POST alone clears them, to keep the counter
 * small.
 */
export function counterMove(
  table: ListTable,
  counter: Counter,
  records: readonly Added[],
  recent?: Readonly<Record<string, number>>,
): TransactItem {
  records.forEach(({ todo }, j) => {
    invariant(todo.id === counter.next + j, 'a POST takes the counter’s next ids, in turn', () => ({
      next: counter.next,
      place: j,
      id: todo.id,
    }));
  });
  const bytes = addedBytes(records);
  return {
    Update: {
      TableName: table.name,
      Key: COUNTER_KEY,
      UpdateExpression: `SET #next = :after, #bytes = #bytes + :bytes, #version = #version + :one${recent ? ', #recent = :recent' : ' REMOVE #recent'}`,
      ConditionExpression: COUNTER_AT_NEXT_WITH_ROOM,
      ExpressionAttributeNames: { '#next': 'next', '#bytes': 'bytes', '#recent': 'recent', '#version': 'version' },
      ExpressionAttributeValues: {
        ':first': counter.next,
        ':after': counter.next + records.length,
        ':bytes': bytes,
        ':room': table.maxListBytes - bytes,
        ':one': 1,
        ...(recent && { ':recent': recent }),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** A PUT's or DELETE's action: the size moved by `growth`, within its limit; the version, `edited` in its slot. */
export function editMove(table: ListTable, growth: number, edited: number): TransactItem {
  const slot = editSlot(edited);
  return {
    Update: {
      TableName: table.name,
      Key: COUNTER_KEY,
      UpdateExpression:
        'SET #bytes = #bytes + :growth, #version = #version + :one, #edits = #edits + :one, #editedAt = #version + :one, #edited = :edited',
      ConditionExpression: growth > 0 ? COUNTER_HAS_ROOM : COUNTER_SIZED_AND_VERSIONED,
      ExpressionAttributeNames: {
        '#bytes': 'bytes',
        '#version': 'version',
        '#edits': 'edits',
        '#editedAt': `editedAt${slot}`,
        '#edited': `edited${slot}`,
      },
      ExpressionAttributeValues: {
        ':growth': growth,
        ':one': 1,
        ':edited': edited,
        ...(growth > 0 && { ':room': table.maxListBytes - growth }),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** Edits the counter notes, a slot each: a list seeing no more edits than this reads only those records (list.ts). */
export const EDIT_SLOTS = 8;

export function editSlot(id: number): number {
  return id % EDIT_SLOTS;
}

export async function readCounter(table: TableAccess, signal: AbortSignal): Promise<Counter | undefined> {
  return (await getItem(table, COUNTER_KEY, signal)) as Counter | undefined;
}

/** On a table seeded before them, counts the list's size and starts its version, once each, whoever first (setOnce). */
export async function prepareCounter(table: TableAccess, signal: AbortSignal): Promise<void> {
  const counter = await readCounter(table, signal);
  if (counter?.bytes === undefined) {
    const bytes = (await todoItems(table, signal)).reduce((sum, item) => sum + storedSize(item), 0);
    await setOnce(table, 'SET #bytes = :bytes', { '#bytes': 'bytes' }, { ':bytes': bytes }, signal);
  }
  if (counter?.version === undefined) {
    await setOnce(
      table,
      'SET #version = :zero, #edits = :zero, #listId = :listId',
      { '#version': 'version', '#edits': 'edits', '#listId': 'listId' },
      { ':zero': 0, ':listId': table.runtime.uuid() },
      signal,
    );
  }
}

/** Sets counter attributes unless one of them is set already: whoever sets them first, sets them. */
async function setOnce(
  table: TableAccess,
  update: string,
  names: Record<string, string>,
  values: Item,
  signal: AbortSignal,
): Promise<void> {
  // Refused: another set them first.
  await written(
    table.dynamodb.updateItem(
      {
        TableName: table.name,
        Key: COUNTER_KEY,
        UpdateExpression: update,
        ConditionExpression: notSetYet(names),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
      signal,
    ),
  );
}
