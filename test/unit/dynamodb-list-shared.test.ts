import { describe, expect, it } from '@jest/globals';
import { unlessAborted } from '../../lib/abort';
import type { DynamoDb, PutInput } from '../../lib/dynamodb/client';
import { SHARED_KEY, SHARE_WITHIN_MS } from '../../lib/dynamodb/list';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import { COUNTER_KEY, todoItem } from '../../lib/dynamodb/table';
import { createTodo, listBytes, type Todo } from '../../lib/todos';
import { fakeRuntime } from '../support/fake-runtime';
import { recordsOf } from '../support/records';

/**
 * Sharing a list (lib/dynamodb/list.ts, `share`) is best effort: against a DynamoDB that answers
 * reads and holds the shared list's write until its signal aborts (a write throttled over and over,
 * which the client sends again until its deadline), on a clock of the test's own, the list is
 * answered once the write has had SHARE_WITHIN_MS. No Java.
 */

const { clock, runtime } = fakeRuntime(Date.UTC(2026, 10, 28), () => 'token');
const record = createTodo({ title: 'the only record' }, 3);

function heldShare(): { dynamodb: DynamoDb; shared: PutInput[] } {
  const shared: PutInput[] = [];
  const refuse = () => Promise.reject(new Error('a list writes nothing but the shared list'));
  const dynamodb: DynamoDb = {
    getItem: ({ Key }) =>
      Promise.resolve(
        Key.pk === COUNTER_KEY.pk
          ? { ...COUNTER_KEY, next: 4, bytes: listBytes(record), version: 7, edits: 0, listId: 'a list' }
          : undefined,
      ),
    query: () => Promise.resolve({ items: [todoItem(record, listBytes(record))], lastKey: undefined }),
    putItem: (input, signal) => {
      shared.push(input);
      // Never answered: it ends when its signal aborts.
      return unlessAborted(new Promise<never>(() => undefined), signal);
    },
    updateItem: refuse,
    deleteItem: refuse,
    transactWriteItems: refuse,
  };
  return { dynamodb, shared };
}

describe('a list shares what it read, best effort', () => {
  it('writes the list it read to the shared item, at its version, unless one as new is there', async () => {
    const { dynamodb, shared } = heldShare();
    let answered: Todo[] | undefined;
    const listing = recordsOf(
      new DynamoDbTodoStore(dynamodb, 'todos', { runtime, sharedAfterBytes: 0 }),
      clock.now + 9_000,
    ).then((todos) => (answered = todos));
    await clock.tickAsync(SHARE_WITHIN_MS);
    expect(answered).toEqual([record]);
    await listing;
    expect(shared).toEqual([
      expect.objectContaining({
        Item: expect.objectContaining({ ...SHARED_KEY, listId: 'a list', version: 7, next: 4, edits: 0 }),
        ConditionExpression: 'attribute_not_exists(pk) OR #version < :version OR listId <> :listId',
      }),
    ]);
  });

  it('answers the list once the write has had SHARE_WITHIN_MS, whatever became of it', async () => {
    const { dynamodb } = heldShare();
    let answered: Todo[] | undefined;
    const listing = recordsOf(
      new DynamoDbTodoStore(dynamodb, 'todos', { runtime, sharedAfterBytes: 0 }),
      clock.now + 9_000,
    ).then((todos) => (answered = todos));
    await clock.tickAsync(SHARE_WITHIN_MS - 1);
    expect(answered).toBeUndefined();
    await clock.tickAsync(1);
    expect(answered).toEqual([record]);
    await listing;
  });

  it('shares nothing when the list read no more than sharedAfterBytes of records', async () => {
    const { dynamodb, shared } = heldShare();
    const store = new DynamoDbTodoStore(dynamodb, 'todos', { runtime, sharedAfterBytes: listBytes(record) });
    expect(await recordsOf(store, clock.now + 9_000)).toEqual([record]);
    expect(shared).toEqual([]);
  });
});
