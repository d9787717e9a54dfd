import { describe, expect, it } from '@jest/globals';
import { DynamoDbError, type DynamoDb, type TransactItem } from '../../lib/dynamodb/client';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import { COUNTER_KEY } from '../../lib/dynamodb/table';
import { StoreUnavailable } from '../../lib/errors';
import { fakeRuntime } from '../support/fake-runtime';
import { PACING } from '../../lib/dynamodb/pacing';

/** A pacing that never queues: these tests hold one container's POSTs in its own transactions. */
const NEVER_QUEUES = { ...PACING, queues: () => false };

/**
 * A POST's transaction and what becomes of it, against a DynamoDB of the test's own, on a clock of
 * the test's own (no Java): POSTs that arrive while a transaction is in flight wait for the next
 * one (lib/dynamodb/store.ts), and one whose deadline comes while it waits leaves the queue,
 * answered 503, and is never written after; a transaction whose copies' fate is unknown after the
 * client's attempts is sent again with its own token (lib/dynamodb/transaction.ts, commit).
 */

const { clock, runtime } = fakeRuntime(Date.UTC(2026, 10, 27), () => `token ${clock.now}`);

/** A seeded table, whose transactions `transact` answers: a POST sends nothing else. */
function seededTable(transact: DynamoDb['transactWriteItems']): DynamoDb {
  const refuse = () => Promise.reject(new Error('not sent by these POSTs'));
  return {
    getItem: () => Promise.resolve({ ...COUNTER_KEY, next: 3, bytes: 100, version: 0, edits: 0, listId: 'a list' }),
    query: refuse,
    putItem: refuse,
    updateItem: refuse,
    deleteItem: refuse,
    transactWriteItems: transact,
  };
}

/** A seeded table whose first transaction waits for `release`; every transaction's actions, as sent. */
function firstTransactionHeld(): { dynamodb: DynamoDb; sent: (readonly TransactItem[])[]; release: () => void } {
  const sent: (readonly TransactItem[])[] = [];
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const dynamodb = seededTable(async (actions) => {
    sent.push(actions);
    if (sent.length === 1) await held;
  });
  return { dynamodb, sent, release };
}

describe('a POST waiting for the transaction in flight', () => {
  it('leaves the queue at its deadline, answered 503, and is not written by the next transaction', async () => {
    const { dynamodb, sent, release } = firstTransactionHeld();
    const store = new DynamoDbTodoStore(dynamodb, 'todos', { runtime, pacing: NEVER_QUEUES });
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

describe('a POST whose transaction got no answer after the client’s attempts', () => {
  it('is sent again with the same token, and answered 201 when that copy is applied', async () => {
    const tokens: string[] = [];
    const dynamodb = seededTable((_actions, token) => {
      tokens.push(token);
      // The first: a 500 on every attempt, which may or may not have been applied.
      if (tokens.length > 1) return Promise.resolve();
      return Promise.reject(new DynamoDbError('InternalServerError', 'a 500', { copy: 'maybe applied' }));
    });
    const store = new DynamoDbTodoStore(dynamodb, 'todos', { runtime, pacing: NEVER_QUEUES });
    const created = store.create({ title: 'sent again' }, { deadline: clock.now + 9_000 });
    await clock.tickAsync(2_000);
    expect((await created).value).toMatchObject({ id: 3, title: 'sent again' });
    expect(tokens).toHaveLength(2);
    expect(new Set(tokens).size).toBe(1);
  });
});
