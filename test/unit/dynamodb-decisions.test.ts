import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { claimPut } from '../../lib/dynamodb/claims';
import { counterMove, editMove, editSlot } from '../../lib/dynamodb/counter';
import { decide, type Decision } from '../../lib/dynamodb/decisions';
import { planPosts, postShares, postTransaction, type Post, type PostWrite } from '../../lib/dynamodb/posts';
import { deleteChange, putChange, rewriteTransaction, type Change } from '../../lib/dynamodb/rewrite';
import { EXPIRES, toTodo } from '../../lib/dynamodb/table';
import { Transaction, type Reason } from '../../lib/dynamodb/transaction';
import { KeyReused, ListFull } from '../../lib/errors';
import { MAX_LIST_BYTES } from '../../lib/list-size';
import { applyPatch, createTodo, listBytes } from '../../lib/todos';
import type { IdempotencyClaim, Todo } from '../../lib/todos';

/**
 * The DynamoDB store's decisions, as pure functions (lib/dynamodb/): which actions a transaction
 * holds and under which role, and what a cancellation means. No DynamoDB is needed: a
 * cancellation is a list of reasons, one an action, in the order the actions went in.
 */

const TABLE = 'todos';
/** The table as the actions see it: its name and the list's limit. */
const LIST = { name: TABLE, maxListBytes: MAX_LIST_BYTES };
const claim = (key: string, fingerprint = `print of ${key}`): IdempotencyClaim => ({
  key,
  fingerprint,
  expiresAt: Date.now() + 60_000,
});
/**
 * A claim's item as the store writes it (claimPut), which DynamoDB returns with a failed condition;
 * by default with a record of no concern to the test (another request's, or an expired claim's).
 */
const kept = (of: IdempotencyClaim, todo: Todo = createTodo({ title: 'kept' }, 9)) =>
  claimPut(TABLE, of, { todo }, Date.now()).Put.Item;
const failed = (item?: Record<string, unknown>): Reason => ({ code: 'ConditionalCheckFailed', ...(item && { item }) });
const NONE: Reason = { code: 'None' };
/** A transaction's token and the time it was made at, as the store's runtime gives them. */
const MADE = { token: 'token', now: Date.now() };

/** The reasons DynamoDB would give: `byRole`'s reason at each action's place, None elsewhere. */
function reasonsFor<Role extends string>(
  transaction: Transaction<Role>,
  byRole: Partial<Record<string, Reason>>,
): Reason[] {
  return transaction.roles.map((role) => byRole[role] ?? NONE);
}

/** What the cancellation `byRole` of `transaction` decides for `shares`, as every write reads it. */
function decided<Role extends string>(
  transaction: Transaction<Role>,
  byRole: Partial<Record<string, Reason>>,
  shares: Parameters<typeof decide>[1],
): Decision {
  return decide(transaction.read(reasonsFor(transaction, byRole), Date.now()).meanings, shares, {
    now: Date.now(),
    maxListBytes: MAX_LIST_BYTES,
  });
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
          const transaction = new Transaction<(typeof roles)[number]>('token');
          for (const role of order) transaction.add(role, { Delete: { TableName: TABLE, Key: { role } } });
          const failing = order[pick % order.length] ?? 'counter';
          const reasons = order.map((role) => (role === failing ? { code } : NONE));
          expect(Object.keys(transaction.read(reasons, Date.now()).meanings)).toEqual([failing]);
        },
      ),
    );
  });

  it('refuses two actions under one role', () => {
    const transaction = new Transaction<'counter'>('token').add('counter', {
      Delete: { TableName: TABLE, Key: {} },
    });
    expect(() => transaction.add('counter', { Delete: { TableName: TABLE, Key: {} } })).toThrow(
      'two actions as counter',
    );
  });

  it('gives each transaction a token of its own', () => {
    expect(new Transaction('a').token).not.toBe(new Transaction('b').token);
  });

  it('reads a cancellation by the decision table: a conflict or a throttle met others; a condition that cannot hold again is final; one that may is refused', () => {
    const counter = { next: 10, bytes: 1_000 };
    const todo = createTodo({ title: 't' }, 10);
    const transaction = new Transaction<'counter' | 'record 0' | 'claim 0' | 'intent 7' | 'outcome u'>('token')
      .add('counter', counterMove(LIST, counter, [{ todo, bytes: listBytes(todo) }]))
      .add('record 0', { Delete: { TableName: TABLE, Key: {} } })
      .add('claim 0', { Delete: { TableName: TABLE, Key: {} } })
      .add('intent 7', { Delete: { TableName: TABLE, Key: {} } })
      .add('outcome u', { Delete: { TableName: TABLE, Key: {} } });
    const verdict = (byRole: Partial<Record<string, Reason>>) =>
      transaction.read(reasonsFor(transaction, byRole), Date.now()).verdict;
    expect(verdict({ counter: { code: 'TransactionConflict' } })).toBe('met others');
    expect(verdict({ 'record 0': { code: 'ThrottlingError' } })).toBe('met others');
    expect(verdict({})).toBe('met others');
    // The counter moved past the ids it gives: it never goes back.
    expect(verdict({ counter: failed({ ...counter, next: 11 }) })).toBe('final');
    // The counter is where it was, but the list had no room (or no size): room may come.
    expect(verdict({ counter: failed(counter) })).toBe('refused');
    expect(verdict({ counter: failed({ next: 10 }) })).toBe('refused');
    for (const role of ['record 0', 'claim 0', 'outcome u'] as const)
      expect(verdict({ [role]: failed() })).toBe('final');
    // A late copy of its POST's put may write an intent again.
    expect(verdict({ 'intent 7': failed() })).toBe('refused');
    expect(verdict({ 'intent 7': failed(), counter: { code: 'TransactionConflict' } })).toBe('refused');
    expect(verdict({ 'intent 7': failed(), 'outcome u': failed() })).toBe('final');
    expect(verdict({ 'record 0': { code: 'ValidationError' } })).toBe('final');
    // A size change (a PUT's, a DELETE's) expects no `next`: its counter may have room later.
    const resize = new Transaction<'counter'>('token').add('counter', editMove(LIST, 10, 7));
    expect(resize.read([failed({ next: 99, bytes: MAX_LIST_BYTES })], Date.now()).verdict).toBe('refused');
    // The seed's counter, once there, is there for good.
    const seed = new Transaction<'counter'>('token').add('counter', { Put: { TableName: TABLE, Item: {} } });
    expect(seed.read([failed()], Date.now()).verdict).toBe('final');
  });
});

describe('what a cancellation of POSTs means', () => {
  const counter = { next: 10, bytes: 1_000 };
  const posts: Post[] = [
    { request: { title: 'first' }, claim: undefined },
    { request: { title: 'second' }, claim: claim('second') },
    { request: { title: 'third' }, claim: undefined },
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
    const transaction = postTransaction(LIST, counter, posts, writes, MADE);
    expect(transaction.roles).toEqual(['counter', 'record 0', 'record 1', 'claim 1', 'record 2']);
    const reasons = reasonsFor(transaction, {
      'claim 1': failed(kept(claim('second'), createTodo({ title: 'second' }, 4))),
    });
    expect(Object.keys(transaction.read(reasons, Date.now()).meanings)).toEqual(['claim 1']);
  });

  /** What a cancellation of these POSTs decides. */
  function postDecision(byRole: Partial<Record<string, Reason>>, from = counter, batch = posts, planned = writes) {
    return decided(postTransaction(LIST, from, batch, planned, MADE), byRole, postShares(batch, planned));
  }

  it('tries again from where the counter is when another container moved it', () => {
    expect(postDecision({ counter: failed({ next: 14, bytes: 1_200 }) })).toEqual({
      settled: new Map(),
      next: { kind: 'moved', counter: { next: 14, bytes: 1_200 } },
    });
  });

  it('answers a POST whose key was claimed before with the claim’s record, and tries the others again', () => {
    const first = createTodo({ title: 'second' }, 4);
    const decision = postDecision({ 'claim 1': failed(kept(claim('second'), first)) });
    expect(decision.settled).toEqual(new Map([['1', { value: first, replayed: true }]]));
    expect(decision.next).toEqual({ kind: 'again', counter: undefined });
  });

  it('refuses a POST whose key came with another request (422)', () => {
    const decision = postDecision({ 'claim 1': failed(kept(claim('second', 'another request'))) });
    expect(decision.settled.get('1')).toBeInstanceOf(KeyReused);
  });

  it('claims anew a key whose old claim expired between the condition and the answer', () => {
    const expired = { ...kept(claim('second')), [EXPIRES]: Math.floor(Date.now() / 1000) - 1 };
    expect(postDecision({ 'claim 1': failed(expired) })).toEqual({
      settled: new Map(),
      next: { kind: 'again', counter: undefined },
    });
  });

  it('counts the list first when it has no size yet', () => {
    expect(postDecision({ counter: failed({ next: 10 }) }).next).toEqual({ kind: 'size the list' });
  });

  it('refuses, in order, exactly the POSTs that do not fit in the list when it is full', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 20_000 }),
        (sizes, room) => {
          const full = { next: 50, bytes: MAX_LIST_BYTES - room, version: 7 };
          const batch = sizes.map((size) => ({ request: { title: 'x'.repeat(size) }, claim: undefined }));
          const planned: PostWrite[] = planPosts(
            full,
            batch,
            batch.map((_post, i) => i),
          );
          const decision = postDecision({ counter: failed(full) }, full, batch, planned);
          // What fits, taken in order with the ids the counter would give them.
          let left = room;
          let id = full.next;
          const expected = batch.flatMap((post, i) => {
            const size = listBytes(createTodo(post.request, id));
            if (size > left) return [String(i)];
            left -= size;
            id++;
            return [];
          });
          expect([...decision.settled.keys()]).toEqual(expected);
          for (const outcome of decision.settled.values()) expect(outcome).toBeInstanceOf(ListFull);
          expect(decision.next).toEqual({ kind: 'again', counter: full });
        },
      ),
    );
  });

  it('calls a cancellation nothing explains unexplained', () => {
    expect(postDecision({ 'record 0': { code: 'ValidationError' } }).next).toEqual({ kind: 'unexplained' });
  });
});

describe('what a cancellation of a PUT or DELETE means', () => {
  const read = createTodo({ title: 'as read' }, 7);
  /** Its item as the store wrote it (lib/dynamodb/table.ts), at version 3. */
  const current = { ...read, v: 3, size: listBytes(read) };
  const keyed = claim('put');

  it('puts the record, the counter (the list’s size and version) and the key’s claim under their roles', () => {
    const completedOnly = putChange(TABLE, { completed: true })(current);
    expect(completedOnly.growth).toBe(0);
    // A PUT that leaves the size as it was moves the list's version all the same, and notes the record it edited.
    const sameSize = rewriteTransaction(LIST, completedOnly, keyed, MADE);
    expect(sameSize.roles).toEqual(['record', 'counter', 'claim']);
    expect(sameSize.actions[1]).toMatchObject({
      Update: {
        UpdateExpression: expect.stringContaining('#version = #version + :one') as unknown,
        ExpressionAttributeNames: { '#edited': `edited${editSlot(7)}`, '#editedAt': `editedAt${editSlot(7)}` },
        ExpressionAttributeValues: { ':growth': 0, ':edited': 7 },
      },
    });
    const retitled = putChange(TABLE, { title: 'a longer title than before' })(current);
    const transaction = rewriteTransaction(LIST, retitled, keyed, MADE);
    expect(transaction.roles).toEqual(['record', 'counter', 'claim']);
    // The claim's reason is read as the claim's, though the counter's action came before it.
    const { meanings } = transaction.read([NONE, NONE, failed(kept(keyed, current))], Date.now());
    expect(Object.keys(meanings)).toEqual(['claim']);
    expect(deleteChange(TABLE)(current).growth).toBe(-listBytes(toTodo(current)));
  });

  /** What a cancellation of a PUT of `current` (with `claim`) decides. */
  function rewriteDecision(byRole: Partial<Record<string, Reason>>, with_?: IdempotencyClaim) {
    const change: Change = putChange(TABLE, { title: 'a longer title than before' })(current);
    return decided(rewriteTransaction(LIST, change, with_, MADE), byRole, [
      { who: '', claim: with_, bytes: () => change.growth },
    ]);
  }

  it('answers with the claim’s answer when the key was claimed before, or KeyReused for another request', () => {
    const first = applyPatch(createTodo({ title: 'first' }, 7), { completed: true });
    expect(rewriteDecision({ claim: failed(kept(keyed, first)) }, keyed).settled).toEqual(
      new Map([['', { value: first, replayed: true }]]),
    );
    const reused = rewriteDecision({ claim: failed(kept(claim('put', 'another'))) }, keyed);
    expect(reused.settled.get('')).toBeInstanceOf(KeyReused);
  });

  it('reads the record again when it changed or went since it was read', () => {
    const now = { ...current, v: 4, title: 'changed' };
    expect(rewriteDecision({ record: failed(now) }).next).toEqual({ kind: 'changed', current: now });
    expect(rewriteDecision({ record: failed() }).next).toEqual({ kind: 'changed', current: undefined });
  });

  it('refuses with ListFull when the list has no room, and counts the list when it has no size', () => {
    const full = rewriteDecision({ counter: failed({ next: 9, bytes: MAX_LIST_BYTES }) });
    expect(full.settled.get('')).toBeInstanceOf(ListFull);
    expect(rewriteDecision({ counter: failed({ next: 9 }) }).next).toEqual({ kind: 'size the list' });
  });

  it('tries again as it was when the key’s old claim expired meanwhile', () => {
    const expired = { ...kept(keyed), [EXPIRES]: Math.floor(Date.now() / 1000) - 1 };
    expect(rewriteDecision({ claim: failed(expired) }, keyed)).toEqual({
      settled: new Map(),
      next: { kind: 'again', counter: undefined },
    });
  });

  it('reads the counter’s reason: moved (past the ids a POST gives), full or unsized', () => {
    const move = new Transaction<'counter'>('token').add('counter', counterMove(LIST, { next: 10, bytes: 5 }, []));
    const meaning = (reason: Reason) => move.read([reason], Date.now()).meanings.counter;
    expect(meaning(failed({ next: 12, bytes: 5 }))).toEqual({ kind: 'moved', counter: { next: 12, bytes: 5 } });
    expect(meaning(failed({ next: 10, bytes: 5, version: 3 }))).toEqual({
      kind: 'full',
      counter: { next: 10, bytes: 5, version: 3 },
    });
    // Where it was, with room, and no version: a counter of a table seeded before lists had versions.
    expect(meaning(failed({ next: 10, bytes: 5 }))).toEqual({ kind: 'unsized' });
    expect(meaning(failed({ next: 10 }))).toEqual({ kind: 'unsized' });
    expect(meaning({ code: 'TransactionConflict' })).toEqual({ kind: 'conflict' });
  });
});
