import { MAX_LIST_BYTES } from '../list-size';
import { listBytes, type Todo } from '../todos';
import { getItem, todoItems } from './reads';
import { COUNTER_KEY, conditionFailed, toTodo, type Counter, type TableAccess } from './table';
import type { TransactItem } from './client';

/**
 * The counter item: `next`, the next id, and `bytes`, the list's size as GET /todos answers it
 * (lib/list-size.ts). Every write that adds, removes or resizes a record moves it in the same
 * transaction, on condition that it is as the write assumed:
 *
 * - a POST moves `next` from n to n + k and `bytes` by its records' size, on condition that
 *   `next` is still n and the list has room: ids have no gaps and are never reused, and the list
 *   never grows past MAX_LIST_BYTES;
 * - a PUT or DELETE moves `bytes` by exactly what it changed, within the same limit.
 *
 * A table seeded before the counter had `bytes` is counted once, by the first write that needs
 * the size; every write that changes the size is conditional on `bytes` existing, so none is
 * applied while the list is counted.
 */

/** What these records add to the list's size. */
export function bytesOf(todos: readonly Todo[]): number {
  return todos.reduce((sum, todo) => sum + listBytes(todo), 0);
}

/**
 * A POST's action on the counter: `todos` take the ids from `counter.next` on, if no one moved it
 * and they fit. A commit of the queue leaves in `recent` the ids it gave, by intent (the POSTs
 * waiting find them there); a POST alone, which no one waits for, clears them, so that the counter
 * stays small while no queue forms.
 */
export function counterMove(
  table: string,
  counter: Counter,
  todos: readonly Todo[],
  recent?: Readonly<Record<string, number>>,
): TransactItem {
  const bytes = bytesOf(todos);
  return {
    Update: {
      TableName: table,
      Key: COUNTER_KEY,
      UpdateExpression: `SET #next = :after, #bytes = #bytes + :bytes${recent ? ', #recent = :recent' : ' REMOVE #recent'}`,
      ConditionExpression: '#next = :first AND #bytes <= :room',
      ExpressionAttributeNames: { '#next': 'next', '#bytes': 'bytes', '#recent': 'recent' },
      ExpressionAttributeValues: {
        ':first': counter.next,
        ':after': counter.next + todos.length,
        ':bytes': bytes,
        ':room': MAX_LIST_BYTES - bytes,
        ...(recent && { ':recent': recent }),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** A PUT's or DELETE's action on the counter: the list's size moved by `growth`, within its limit. */
export function sizeChange(table: string, growth: number): TransactItem {
  return {
    Update: {
      TableName: table,
      Key: COUNTER_KEY,
      UpdateExpression: 'SET #bytes = #bytes + :growth',
      ConditionExpression: growth > 0 ? '#bytes <= :room' : 'attribute_exists(#bytes)',
      ExpressionAttributeNames: { '#bytes': 'bytes' },
      ExpressionAttributeValues: { ':growth': growth, ...(growth > 0 ? { ':room': MAX_LIST_BYTES - growth } : {}) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

export async function readCounter(table: TableAccess, signal: AbortSignal): Promise<Counter | undefined> {
  return (await getItem(table, COUNTER_KEY, signal)) as Counter | undefined;
}

/** A table seeded before the list had a size: counts it, once (another container may count it first). */
export async function sizeList(table: TableAccess, signal: AbortSignal): Promise<void> {
  const bytes = bytesOf((await todoItems(table, signal)).map(toTodo));
  try {
    await table.dynamodb.updateItem(
      {
        TableName: table.name,
        Key: COUNTER_KEY,
        UpdateExpression: 'SET #bytes = :bytes',
        ConditionExpression: 'attribute_not_exists(#bytes)',
        ExpressionAttributeNames: { '#bytes': 'bytes' },
        ExpressionAttributeValues: { ':bytes': bytes },
      },
      signal,
    );
  } catch (error) {
    if (!conditionFailed(error)) throw error;
  }
}
