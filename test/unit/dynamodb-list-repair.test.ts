import { describe, expect, it } from '@jest/globals';
import { DynamoDbError, type DynamoDb, type Item, type TransactItem } from '../../lib/dynamodb/client';
import { MAX_RAISES, RAISE_WITHIN_MS } from '../../lib/dynamodb/repair';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import { COUNTER_KEY, todoItem } from '../../lib/dynamodb/table';
import { createTodo, listBytes, type Todo } from '../../lib/todos';
import { fakeRuntime } from '../support/fake-runtime';
import { recordsOf } from '../support/records';

/**
 * A list's read repair of sizes (lib/dynamodb/counter.ts, raiseSizes), against a DynamoDB that
 * answers reads and holds every transaction until its signal aborts, on a clock of the test's own:
 * what the raise writes, and that the list waits for it no longer than RAISE_WITHIN_MS. No Java.
 */

const { clock, runtime } = fakeRuntime(Date.UTC(2026, 10, 27), () => 'token');

/** A record stored by a version that counted it smaller than this one answers it, at version 4. */
const record = createTodo({ title: 'stored small' }, 3);
const stored: Item = { ...todoItem(record, listBytes(record) - 24), v: 4 };

function heldTransactions(): { dynamodb: DynamoDb; sent: (readonly TransactItem[])[] } {
  const sent: (readonly TransactItem[])[] = [];
  const refuse = () => Promise.reject(new Error('a list writes no single item'));
  const dynamodb: DynamoDb = {
    getItem: ({ Key }) =>
      Promise.resolve(
        Key.pk === COUNTER_KEY.pk
          ? { ...COUNTER_KEY, next: 4, bytes: 1_000, version: 0, edits: 0, listId: 'a list' }
          : undefined,
      ),
    query: () => Promise.resolve({ items: [stored], lastKey: undefined }),
    putItem: refuse,
    updateItem: refuse,
    deleteItem: refuse,
    transactWriteItems: (actions, _token, signal) => {
      sent.push(actions);
      return new Promise((_resolve, reject) => {
        signal.addEventListener(
          'abort',
          () => {
            reject(signal.reason as Error);
          },
          { once: true },
        );
      });
    },
  };
  return { dynamodb, sent };
}

describe('a list raises the size of a record stored smaller than it answers it', () => {
  it('moves the record to its size and its next version, and the counter by the difference', async () => {
    const { dynamodb, sent } = heldTransactions();
    const listing = recordsOf(new DynamoDbTodoStore(dynamodb, 'todos', { runtime }), clock.now + 9_000);
    await clock.tickAsync(RAISE_WITHIN_MS);
    await listing;

    expect(sent).toHaveLength(1);
    const [counter, raise] = sent[0] ?? [];
    expect(counter).toMatchObject({ Update: { Key: COUNTER_KEY, ExpressionAttributeValues: { ':growth': 24 } } });
    // The version moves with the size: a PUT that read the record before is conditioned on version 4, and reads again.
    expect(raise).toMatchObject({
      Update: {
        UpdateExpression: 'SET #size = :answered, #v = :version',
        ConditionExpression: 'v = :seen',
        ExpressionAttributeValues: { ':answered': listBytes(record), ':version': 5, ':seen': 4 },
      },
    });
  });

  it('answers the list as read once the raise has had RAISE_WITHIN_MS, whatever became of it', async () => {
    const { dynamodb } = heldTransactions();
    let answered: Todo[] | undefined;
    const listing = recordsOf(new DynamoDbTodoStore(dynamodb, 'todos', { runtime }), clock.now + 9_000).then(
      (todos) => (answered = todos),
    );

    await clock.tickAsync(RAISE_WITHIN_MS - 1);
    expect(answered).toBeUndefined();
    await clock.tickAsync(1);
    expect(answered).toEqual([record]);
    await listing;
  });
});

describe('a list learns from a raise that another container came first to', () => {
  it('drops the record the cancellation found raised, and the next list raises the one still short', async () => {
    const other = createTodo({ title: 'also stored small' }, 4);
    const items: Item[] = [stored, { ...todoItem(other, listBytes(other) - 24), v: 2 }];
    const sent: (readonly TransactItem[])[] = [];
    const dynamodb: DynamoDb = {
      ...heldTransactions().dynamodb,
      query: () => Promise.resolve({ items, lastKey: undefined }),
      transactWriteItems: (actions) => {
        sent.push(actions);
        if (sent.length > 1) return Promise.resolve();
        // Another container raised record 3 first: its condition on version 4 fails, and DynamoDB says what it found.
        const reasons = actions.map((action) =>
          'Update' in action && action.Update.Key.id === 3
            ? { code: 'ConditionalCheckFailed', item: { ...stored, size: listBytes(record), v: 5 } }
            : { code: 'None' },
        );
        return Promise.reject(
          new DynamoDbError('TransactionCanceledException', 'cancelled', { copy: 'not applied', reasons }),
        );
      },
    };
    const store = new DynamoDbTodoStore(dynamodb, 'todos', { runtime });

    await store.readList(clock.now + 9_000);
    await store.readList(clock.now + 9_000);

    const raised = (actions: readonly TransactItem[] | undefined) =>
      (actions ?? []).flatMap((action) =>
        'Update' in action && action.Update.Key.pk === 'TODO' ? [action.Update.Key.id] : [],
      );
    // Which records each raise named, in any order: the raise draws them at random.
    expect(sent.map((actions) => raised(actions).sort())).toEqual([[3, 4], [4]]);
  });
});

describe('a list whose raise got no answer', () => {
  it('raises the records no raise has tried on their own first, then those of the unanswered raise, alone', async () => {
    const records = Array.from({ length: MAX_RAISES + 2 }, (_, i) => createTodo({ title: `stored small ${i}` }, 3 + i));
    const items: Item[] = records.map((todo) => ({ ...todoItem(todo, listBytes(todo) - 24), v: 1 }));
    const sent: (readonly TransactItem[])[] = [];
    const dynamodb: DynamoDb = {
      ...heldTransactions().dynamodb,
      query: () => Promise.resolve({ items, lastKey: undefined }),
      transactWriteItems: (actions, _token, _signal, copies) => {
        sent.push(actions);
        if (sent.length > 1) return Promise.resolve();
        // The first raise's copy got no answer: it may have been applied.
        copies.add('unanswered');
        return Promise.reject(new DynamoDbError('TimeoutError', 'no answer', { copy: 'unanswered' }));
      },
    };
    const store = new DynamoDbTodoStore(dynamodb, 'todos', { runtime });

    for (let list = 0; list < 3; list++) await store.readList(clock.now + 9_000);

    const raised = (actions: readonly TransactItem[] | undefined) =>
      (actions ?? [])
        .flatMap((action) =>
          'Update' in action && action.Update.Key.pk === 'TODO' ? [Number(action.Update.Key.id)] : [],
        )
        .sort((a, b) => a - b);
    const [first, second, third] = sent.map(raised);
    const neverTried = records.map(({ id }) => id).filter((id) => !first?.includes(id));
    expect(neverTried).toHaveLength(2);
    // A record already raised in a raise cancels it whole: the certain ones go alone, then the doubtful ones.
    expect(second).toEqual(neverTried);
    expect(third).toEqual(first);
  });
});
