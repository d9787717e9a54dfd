import { describe, expect, it } from '@jest/globals';
import type { DynamoDb, Item, PutInput, TransactItem } from '../../lib/dynamodb/client';
import { InvariantFailed } from '../../lib/dynamodb/invariant';
import { draftOf } from '../../lib/todos';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import { COUNTER_KEY } from '../../lib/dynamodb/table';
import { StoreUnavailable } from '../../lib/errors';
import { fakeRuntime } from '../support/fake-runtime';

/**
 * The store asserts what it relies on before it writes (lib/dynamodb/invariant.ts): a state that breaks an invariant
 * stops the request, answered 503, and nothing further is written. Here the queue as read holds an intent out of its
 * order (no DynamoDB Query answers so: one that did would have the head commit the queue out of order), on a DynamoDB
 * of the test's own. No Java.
 */

const START = Date.UTC(2026, 11, 6);
const { clock, runtime } = fakeRuntime(START, () => 'mine');

/** Another POST's intent, queued before this one's (a smaller id) yet read after it. */
const earlier: Item = {
  pk: COUNTER_KEY.pk,
  id: (START - 5) * 1000,
  uuid: 'earlier',
  payload: { request: { title: 'queued first' }, draft: draftOf({ title: 'queued first' }) },
};

function tableWithItsQueueOutOfOrder(): { dynamodb: DynamoDb; written: string[] } {
  const written: string[] = [];
  const counter = { ...COUNTER_KEY, next: 3, bytes: 100, version: 1, edits: 0, listId: 'a list' };
  let mine: Item | undefined;
  const dynamodb: DynamoDb = {
    getItem: ({ Key }) => Promise.resolve(Key.pk === COUNTER_KEY.pk ? counter : undefined),
    // The counter, this POST's intent at the head, and the earlier one behind it.
    query: () => Promise.resolve({ items: [counter, ...(mine ? [mine, earlier] : [])], lastKey: undefined }),
    putItem: (input: PutInput) => {
      if (input.Item.pk === COUNTER_KEY.pk) mine = input.Item;
      else written.push(`PutItem ${String(input.Item.pk)}`);
      return Promise.resolve();
    },
    updateItem: () => {
      written.push('UpdateItem');
      return Promise.resolve();
    },
    deleteItem: () => {
      written.push('DeleteItem');
      return Promise.resolve();
    },
    transactWriteItems: (actions: readonly TransactItem[]) => {
      written.push(`TransactWriteItems of ${actions.length}`);
      return Promise.resolve();
    },
  };
  return { dynamodb, written };
}

describe('an invariant of the queue', () => {
  it('stops a commit of intents out of the order they queued: a 503, and nothing written after the intent', async () => {
    const { dynamodb, written } = tableWithItsQueueOutOfOrder();
    const store = new DynamoDbTodoStore(dynamodb, 'todos', { runtime });

    const answer = store.create({ title: 'a new container queues' }, { deadline: clock.now + 9_000 });
    const settled = answer.then(
      () => 'answered',
      (error: unknown) => error,
    );
    await clock.tickAsync(100);

    const failure = await settled;
    expect(failure).toBeInstanceOf(InvariantFailed);
    expect(failure).toBeInstanceOf(StoreUnavailable);
    expect((failure as InvariantFailed).invariant).toBe('a commit writes intents in the order they queued');
    // No commit sent, and the POST neither withdrew its outcome nor took its intent back: it stopped where it was.
    expect(written).toEqual([]);
  });
});
