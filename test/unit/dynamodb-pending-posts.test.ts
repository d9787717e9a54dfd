import { describe, expect, it } from '@jest/globals';
import FakeTimers from '@sinonjs/fake-timers';
import type { DynamoDb, TransactItem } from '../../lib/dynamodb/client';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import { COUNTER_KEY } from '../../lib/dynamodb/table';
import { StoreUnavailable } from '../../lib/errors';
import type { Runtime } from '../../lib/runtime';

/**
 * POSTs that arrive while a transaction is in flight wait for the next one (lib/dynamodb/store.ts):
 * one whose deadline comes while it waits leaves the queue, answered 503, and is never written
 * after. Against a DynamoDB that holds the first transaction until the test lets it go, on a clock
 * of the test's own. No Java.
 */

const clock = FakeTimers.createClock(Date.UTC(2026, 10, 27));
const runtime: Runtime = {
  now: () => clock.now,
  after: (ms, run) => {
    const timer = clock.setTimeout(run, ms);
    return () => {
      clock.clearTimeout(timer);
    };
  },
  random: () => 0.5,
  uuid: () => `token ${clock.now}`,
};

/** A seeded table whose first transaction waits for `release`; every transaction's actions, as sent. */
function firstTransactionHeld(): { dynamodb: DynamoDb; sent: (readonly TransactItem[])[]; release: () => void } {
  const sent: (readonly TransactItem[])[] = [];
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const refuse = () => Promise.reject(new Error('not sent by these POSTs'));
  const dynamodb: DynamoDb = {
    getItem: () => Promise.resolve({ ...COUNTER_KEY, next: 3, bytes: 100, version: 0, edits: 0, listId: 'a list' }),
    query: refuse,
    putItem: refuse,
    updateItem: refuse,
    deleteItem: refuse,
    transactWriteItems: async (actions) => {
      sent.push(actions);
      if (sent.length === 1) await held;
    },
  };
  return { dynamodb, sent, release };
}

describe('a POST waiting for the transaction in flight', () => {
  it('leaves the queue at its deadline, answered 503, and is not written by the next transaction', async () => {
    const { dynamodb, sent, release } = firstTransactionHeld();
    const store = new DynamoDbTodoStore(dynamodb, 'todos', { runtime, queuePosts: false });
    const first = store.create({ title: 'first' }, { deadline: clock.now + 9_000 });
    await clock.tickAsync(0);
    expect(sent).toHaveLength(1);
    const waiting = store.create({ title: 'waiting' }, { deadline: clock.now + 100 });
    const answered = waiting.then(
      () => 'written',
      (error: unknown) => error,
    );
    await clock.tickAsync(200);
    expect(await answered).toBeInstanceOf(StoreUnavailable);
    release();
    await first;
    await clock.tickAsync(1_000);
    expect(JSON.stringify(sent)).not.toContain('waiting');
  });
});
