import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { claimPut, claimVerdict } from '../../lib/dynamodb/claims';
import { DynamoDbError } from '../../lib/dynamodb/client';
import { counterVerdict } from '../../lib/dynamodb/counter';
import { planPosts, postTransaction, postVerdict, type NewTodo } from '../../lib/dynamodb/posts';
import { deleteChange, putChange, rewriteTransaction, rewriteVerdict } from '../../lib/dynamodb/rewrite';
import { EXPIRES } from '../../lib/dynamodb/table';
import { Transaction, worthSendingAgain, type Reason } from '../../lib/dynamodb/transaction';
import { KeyReused, ListFull } from '../../lib/errors';
import { MAX_LIST_BYTES, listBytes } from '../../lib/list-size';
import type { IdempotencyClaim, Todo } from '../../lib/todos';

/**
 * The DynamoDB store's decisions, as pure functions (lib/dynamodb/): which actions a transaction
 * holds and under which role, and what a cancellation means. No DynamoDB is needed: a
 * cancellation is a list of reasons, one an action, in the order the actions went in.
 */

const TABLE = 'todos';
const claim = (key: string, fingerprint = `print of ${key}`): IdempotencyClaim => ({
  key,
  fingerprint,
  expiresAt: Date.now() + 60_000,
});
/**
 * A claim's item as the store writes it (claimPut), which DynamoDB returns with a failed condition;
 * by default with a record of no concern to the test (another request's, or an expired claim's).
 */
const kept = (of: IdempotencyClaim, todo: Todo = { id: 9, title: 'kept', completed: false }) =>
  claimPut(TABLE, of, { todo }).Put.Item;
const failed = (item?: Record<string, unknown>): Reason => ({ code: 'ConditionalCheckFailed', ...(item && { item }) });
const NONE: Reason = { code: 'None' };

/** The reasons DynamoDB would give: `byRole`'s reason at each action's place, None elsewhere. */
function reasonsFor<Role extends string>(
  transaction: Transaction<Role>,
  roles: readonly Role[],
  byRole: Partial<Record<Role, Reason>>,
): Reason[] {
  return roles.map((role) => byRole[role] ?? NONE).slice(0, transaction.actions.length);
}

describe('a transaction’s actions and their roles', () => {
  it('reads each reason under the role of the action it answers, whatever the order the actions went in', () => {
    const roles = ['counter', 'record', 'claim', 'other'] as const;
    fc.assert(
      fc.property(
        fc.shuffledSubarray([...roles], { minLength: 1 }),
        fc.constantFrom('ConditionalCheckFailed', 'TransactionConflict', 'ThrottlingError'),
        fc.nat(),
        (order, code, pick) => {
          const transaction = new Transaction<(typeof roles)[number]>();
          for (const role of order) transaction.add(role, { Delete: { TableName: TABLE, Key: { role } } });
          const failing = order[pick % order.length] ?? 'counter';
          const reasons = order.map((role) => (role === failing ? { code } : NONE));
          expect(transaction.reasonsByRole(reasons)).toEqual({ [failing]: { code } });
        },
      ),
    );
  });

  it('refuses two actions under one role', () => {
    const transaction = new Transaction<'counter'>().add('counter', {
      Delete: { TableName: TABLE, Key: {} },
    });
    expect(() => transaction.add('counter', { Delete: { TableName: TABLE, Key: {} } })).toThrow(
      'two actions as counter',
    );
  });

  it('gives each transaction a token of its own', () => {
    expect(new Transaction().token).not.toBe(new Transaction().token);
  });

  it('sends again, with its token, a transaction that only met others or is still in progress; not one whose condition failed', () => {
    const cancelled = (...codes: string[]) =>
      new DynamoDbError('TransactionCanceledException', 'cancelled', {
        attempts: 1,
        reasons: codes.map((code) => ({ code })),
      });
    const refused = (name: string) => new DynamoDbError(name, name, { attempts: 3 });
    expect(worthSendingAgain(cancelled('None', 'TransactionConflict'))).toBe(true);
    expect(worthSendingAgain(cancelled('ThrottlingError', 'None'))).toBe(true);
    expect(worthSendingAgain(refused('TransactionInProgressException'))).toBe(true);
    expect(worthSendingAgain(cancelled('ConditionalCheckFailed', 'TransactionConflict'))).toBe(false);
    expect(worthSendingAgain(cancelled('None', 'None'))).toBe(false);
    expect(worthSendingAgain(refused('ValidationException'))).toBe(false);
  });
});

describe('what a cancellation of POSTs means', () => {
  const counter = { next: 10, bytes: 1_000 };
  const posts: NewTodo[] = [
    { title: 'first', claim: undefined },
    { title: 'second', claim: claim('second') },
    { title: 'third', claim: undefined },
  ];
  const writes = planPosts(counter, posts, [0, 1, 2]);

  it('plans the next ids, in order, for the POSTs still open', () => {
    expect(writes.map(({ index, todo }) => [index, todo.id, todo.title])).toEqual([
      [0, 10, 'first'],
      [1, 11, 'second'],
      [2, 12, 'third'],
    ]);
    expect(planPosts(counter, posts, [2]).map(({ todo }) => todo.id)).toEqual([10]);
  });

  it('puts each POST’s record and claim under its own role, beside the counter', () => {
    const transaction = postTransaction(TABLE, counter, posts, writes);
    expect(transaction.actions).toHaveLength(1 + 3 + 1);
    const roles = ['counter', 'record 0', 'record 1', 'claim 1', 'record 2'] as const;
    const reasons = reasonsFor(transaction, roles, {
      'claim 1': failed(kept(claim('second'), { id: 4, title: 'second', completed: false })),
    });
    expect(Object.keys(transaction.reasonsByRole(reasons))).toEqual(['claim 1']);
  });

  it('tries again from where the counter is when another container moved it', () => {
    const verdict = postVerdict({ counter: failed({ next: 14, bytes: 1_200 }) }, counter, posts, writes);
    expect(verdict).toEqual({ settled: new Map(), next: { kind: 'again', counter: { next: 14, bytes: 1_200 } } });
  });

  it('answers a POST whose key was claimed before with the claim’s record, and tries the others again', () => {
    const first = { id: 4, title: 'second', completed: false };
    const verdict = postVerdict({ 'claim 1': failed(kept(claim('second'), first)) }, counter, posts, writes);
    expect(verdict.settled).toEqual(new Map([[1, { value: first, replayed: true }]]));
    expect(verdict.next).toEqual({ kind: 'again', counter });
  });

  it('refuses a POST whose key came with another request (422)', () => {
    const verdict = postVerdict(
      { 'claim 1': failed(kept(claim('second', 'another request'))) },
      counter,
      posts,
      writes,
    );
    expect(verdict.settled.get(1)).toBeInstanceOf(KeyReused);
  });

  it('claims anew a key whose old claim expired between the condition and the answer', () => {
    const expired = { ...kept(claim('second')), [EXPIRES]: Math.floor(Date.now() / 1000) - 1 };
    expect(postVerdict({ 'claim 1': failed(expired) }, counter, posts, writes)).toEqual({
      settled: new Map(),
      next: { kind: 'again', counter },
    });
  });

  it('counts the list first when it has no size yet', () => {
    expect(postVerdict({ counter: failed({ next: 10 }) }, counter, posts, writes).next).toEqual({ kind: 'unsized' });
  });

  it('refuses, in order, exactly the POSTs that do not fit in the list when it is full', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 20_000 }),
        (sizes, room) => {
          const full = { next: 50, bytes: MAX_LIST_BYTES - room };
          const batch = sizes.map((size) => ({ title: 'x'.repeat(size), claim: undefined }));
          const planned = planPosts(
            full,
            batch,
            batch.map((_post, i) => i),
          );
          const verdict = postVerdict({ counter: failed(full) }, full, batch, planned);
          // What fits, taken in order with the ids the counter would give them.
          let left = room;
          let id = full.next;
          const expected = batch.flatMap((post, i) => {
            const size = listBytes({ id, title: post.title });
            if (size > left) return [i];
            left -= size;
            id++;
            return [];
          });
          expect([...verdict.settled.keys()]).toEqual(expected);
          for (const outcome of verdict.settled.values()) expect(outcome).toBeInstanceOf(ListFull);
          expect(verdict.next).toEqual({ kind: 'again', counter: full });
        },
      ),
    );
  });

  it('calls a cancellation nothing explains unexplained', () => {
    expect(postVerdict({ 'record 0': failed() }, counter, posts, writes).next).toEqual({ kind: 'unexplained' });
  });
});

describe('what a cancellation of a PUT or DELETE means', () => {
  const current = { id: 7, title: 'as read', completed: false, v: 3 };
  const keyed = claim('put');

  it('puts the record, the list’s size (only when it changes) and the key’s claim under their roles', () => {
    const completedOnly = putChange(TABLE, 7, { completed: true })(current);
    expect(completedOnly.growth).toBe(0);
    expect(rewriteTransaction(TABLE, completedOnly, keyed).actions).toHaveLength(2);
    const retitled = putChange(TABLE, 7, { title: 'a longer title than before' })(current);
    const transaction = rewriteTransaction(TABLE, retitled, keyed);
    expect(transaction.actions).toHaveLength(3);
    // The claim's reason is read as the claim's, though the counter's action came before it.
    const reasons = transaction.reasonsByRole([NONE, NONE, failed(kept(keyed, current))]);
    expect(Object.keys(reasons)).toEqual(['claim']);
    expect(deleteChange(TABLE)(current).growth).toBe(-listBytes(current));
  });

  it('answers with the claim’s answer when the key was claimed before, or KeyReused for another request', () => {
    const first = { id: 7, title: 'first', completed: true };
    expect(rewriteVerdict({ claim: failed(kept(keyed, first)) }, keyed, current)).toEqual({
      kind: 'replay',
      written: { value: first, replayed: true },
    });
    const reused = rewriteVerdict({ claim: failed(kept(claim('put', 'another'))) }, keyed, current);
    expect(reused.kind === 'refused' && reused.error).toBeInstanceOf(KeyReused);
  });

  it('reads the record again when it changed or went since it was read', () => {
    const now = { ...current, v: 4, title: 'changed' };
    expect(rewriteVerdict({ record: failed(now) }, undefined, current)).toEqual({ kind: 'again', current: now });
    expect(rewriteVerdict({ record: failed() }, undefined, current)).toEqual({ kind: 'again', current: undefined });
  });

  it('refuses with ListFull when the list has no room, and counts the list when it has no size', () => {
    const full = rewriteVerdict({ counter: failed({ next: 9, bytes: MAX_LIST_BYTES }) }, undefined, current);
    expect(full.kind === 'refused' && full.error).toBeInstanceOf(ListFull);
    expect(rewriteVerdict({ counter: failed({ next: 9 }) }, undefined, current)).toEqual({ kind: 'unsized' });
  });

  it('tries again as it was when the key’s old claim expired meanwhile', () => {
    const expired = { ...kept(keyed), [EXPIRES]: Math.floor(Date.now() / 1000) - 1 };
    expect(claimVerdict(failed(expired), keyed)).toBe('expired');
    expect(rewriteVerdict({ claim: failed(expired) }, keyed, current)).toEqual({ kind: 'again', current });
  });

  it('reads the counter’s reason: moved, full or unsized', () => {
    expect(counterVerdict(failed({ next: 12, bytes: 5 }), 10)).toEqual({
      kind: 'moved',
      counter: { next: 12, bytes: 5 },
    });
    expect(counterVerdict(failed({ next: 10, bytes: 5 }), 10)).toEqual({
      kind: 'full',
      counter: { next: 10, bytes: 5 },
    });
    expect(counterVerdict(failed({ next: 10 }), 10)).toEqual({ kind: 'unsized' });
    expect(counterVerdict({ code: 'TransactionConflict' }, 10)).toBeUndefined();
  });
});
