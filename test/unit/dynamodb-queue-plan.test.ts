import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { claimPut } from '../../lib/dynamodb/claims';
import {
  INTENT_LIFETIME_MS,
  MAX_INTENTS,
  NOTHING_DECIDED,
  RECENT_IDS,
  commitShares,
  decidedAfter,
  intentId,
  outcomeOf,
  placeOf,
  planCommit,
  recentAfter,
  takenNext,
  type CommitPlan,
  type CommitRole,
  type Decided,
  type Payload,
  type QueuedIntent,
  type Look,
  type QueueCounter,
} from '../../lib/dynamodb/queue-plan';
import { PACING, intentsAhead, outOfReach, paceAfter, pauseBeforeLook } from '../../lib/dynamodb/pacing';
import { decide } from '../../lib/dynamodb/decisions';
import { commitTransaction } from '../../lib/dynamodb/queue';
import type { Reason } from '../../lib/dynamodb/transaction';
import { KeyReused, ListFull } from '../../lib/errors';
import { MAX_LIST_BYTES } from '../../lib/list-size';
import { MAX_TITLE_LENGTH, createTodo, draftOf, listBytes } from '../../lib/todos';
import type { IdempotencyClaim, Todo } from '../../lib/todos';

/** The table as the actions see it: its name and the list's limit. */
const LIST = { name: 'todos', maxListBytes: MAX_LIST_BYTES };
/**
 * The queue of POSTs' decisions (lib/dynamodb/queue-plan.ts), with no DynamoDB: where a POST stands
 * in a look, what one commit writes, and what a commit's cancellation means. The queue's behaviour
 * across containers, on DynamoDB Local behind the fault proxy, is test/unit/dynamodb-queue.test.ts's.
 */

const NOW = 1_800_000_000_000;
const failed = (item?: Record<string, unknown>): Reason => ({ code: 'ConditionalCheckFailed', ...(item && { item }) });

/** An intent that arrived `ago` ms before NOW, `n` apart from the others of that millisecond, as a commit reads it. */
function intent(uuid: string, ago = 0, n = 0, payload: Partial<Payload> = {}): QueuedIntent {
  const request = payload.request ?? { title: `title of ${uuid}` };
  return { id: (NOW - ago) * 1000 + n, uuid, payload: { request, draft: draftOf(request), ...payload } };
}

function claim(key: string, fingerprint = `print of ${key}`): IdempotencyClaim {
  // Kept until a minute from the real now: a claim's expiry is read against the clock (replayOf).
  return { key, fingerprint, expiresAt: Date.now() + 60_000 };
}

/** A claim's item as the store writes it (claimPut), which DynamoDB returns with a failed condition (ALL_OLD). */
function keptClaim(of: IdempotencyClaim, todo: Todo) {
  return claimPut('todos', of, { todo }, Date.now()).Put.Item;
}

/** Up to 40 intents in the queue's order (by id), each of its own POST. */
const queues = fc
  .uniqueArray(fc.nat({ max: 5_000_000 }), { minLength: 1, maxLength: 40 })
  .map((offsets) =>
    offsets.sort((a, b) => a - b).map((offset, i) => ({ ...intent(`u${i}`), id: NOW * 1000 + offset })),
  );

describe('placeOf: where a POST stands in a look at the queue', () => {
  const counter: QueueCounter = { next: 10, bytes: 0, recent: { done: 9 } };
  const [a, b, c] = [intent('a', 30), intent('b', 20), intent('c', 10)];

  it('says committed, with its id, once the counter gave it one', () => {
    expect(placeOf({ counter, intents: [a], complete: true }, { id: 1, uuid: 'done' })).toEqual({
      kind: 'committed',
      id: 9,
    });
  });

  it('says head for the first intent, and waiting behind it for the others', () => {
    const look: Look = { counter, intents: [a, b, c], complete: true };
    expect(placeOf(look, a)).toEqual({ kind: 'head' });
    expect(placeOf(look, c)).toEqual({ kind: 'waiting', head: a });
  });

  it('says gone for an intent missing from a page that covers its place', () => {
    expect(placeOf({ counter, intents: [a, c], complete: true }, b)).toEqual({ kind: 'gone' });
    expect(placeOf({ counter, intents: [a, c], complete: false }, b)).toEqual({ kind: 'gone' });
    expect(placeOf({ counter, intents: [], complete: true }, b)).toEqual({ kind: 'gone' });
  });

  it('never says gone for an intent past the end of a page DynamoDB cut: it is still queued', () => {
    expect(placeOf({ counter, intents: [a, b], complete: false }, c)).toEqual({ kind: 'waiting', head: a });
    expect(placeOf({ counter, intents: [], complete: false }, c)).toEqual({ kind: 'waiting', head: undefined });
  });

  it('holds for every queue and every page of it: a queued POST is head, waiting behind the head, never gone', () => {
    fc.assert(
      fc.property(queues, fc.nat(), fc.nat(), (queue, pick, cut) => {
        const mine = queue[pick % queue.length] ?? queue[0];
        if (mine === undefined) return;
        const page = queue.slice(0, 1 + (cut % queue.length));
        const place = placeOf({ counter: { next: 3 }, intents: page, complete: page.length === queue.length }, mine);
        expect(place).toEqual(mine === queue[0] ? { kind: 'head' } : { kind: 'waiting', head: queue[0] });
      }),
    );
  });
});

describe('planCommit: what one commit writes', () => {
  const counter: QueueCounter = { next: 7, bytes: 0 };

  it('writes the intents in order, with the next ids in turn, and the counter it read', () => {
    const queue = [intent('a', 3), intent('b', 2), intent('c', 1)];
    const plan = planCommit(counter, queue, NOW);
    expect(plan.writes.map(({ intent: { uuid }, todo }) => [uuid, todo])).toEqual([
      ['a', createTodo({ title: 'title of a' }, 7)],
      ['b', createTodo({ title: 'title of b' }, 8)],
      ['c', createTodo({ title: 'title of c' }, 9)],
    ]);
    expect(plan.counter).toBe(counter);
    expect(plan.drops).toEqual([]);
  });

  it('writes one POST once: a second intent of the same POST (a retried put that landed twice) is dropped', () => {
    const first = intent('a', 3);
    const second = intent('a', 1, 5);
    const plan = planCommit(counter, [first, intent('b', 2), second], NOW);
    expect(plan.writes.map(({ intent: { uuid } }) => uuid)).toEqual(['a', 'b']);
    expect(plan.drops).toEqual([second]);
  });

  it('drops intents older than a request lives, unwritten', () => {
    const stale = intent('old', INTENT_LIFETIME_MS + 1);
    const plan = planCommit(counter, [stale, intent('a', 1)], NOW);
    expect(plan.writes.map(({ intent: { uuid }, todo: { id } }) => [uuid, id])).toEqual([['a', 7]]);
    expect(plan.drops).toEqual([stale]);
  });

  it('takes one intent per Idempotency-Key; the other waits for a later commit, which answers it with the replay', () => {
    const first = intent('a', 3, 0, { claim: claim('k') });
    const second = intent('b', 2, 0, { claim: claim('k') });
    const plan = planCommit(counter, [first, second, intent('c', 1)], NOW);
    expect(plan.writes.map(({ intent: { uuid } }) => uuid)).toEqual(['a', 'c']);
    expect(plan.drops).toEqual([]);
  });

  it('considers the first MAX_INTENTS intents only', () => {
    const queue = Array.from({ length: MAX_INTENTS + 5 }, (_, i) => intent(`u${i}`, 100 - i));
    expect(planCommit(counter, queue, NOW).writes).toHaveLength(MAX_INTENTS);
  });

  it('says the next commit takes a POST only where it does: among its first intents', () => {
    const queue = Array.from({ length: MAX_INTENTS + 1 }, (_, i) => intent(`p${i}`, 100 - i));
    expect(takenNext(queue, intent(`p${MAX_INTENTS - 1}`, 100 - MAX_INTENTS + 1))).toBe(true);
    expect(takenNext(queue, intent(`p${MAX_INTENTS}`, 100 - MAX_INTENTS))).toBe(false);
  });

  it('holds for any queue: a POST takenNext says the next commit takes is among that commit’s writes', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: MAX_TITLE_LENGTH }), { minLength: 1, maxLength: 40 }), (titles) => {
        const queue = titles.map((length, i) =>
          intent(`p${i}`, 100 - i, 0, { request: { title: 'x'.repeat(length) } }),
        );
        // Committed by the head, p0.
        const written = new Set(planCommit(counter, queue, NOW).writes.map(({ intent: { uuid } }) => uuid));
        for (const mine of queue) if (takenNext(queue, mine)) expect(written).toContain(mine.uuid);
      }),
    );
  });

  it('leaves POSTs already decided out of the writes: done ones dropped, settled ones answered by their outcome', () => {
    const [a, b, c] = [intent('a', 3), intent('b', 2), intent('c', 1)];
    const decided = { settled: new Map([['b', { refused: 'reused' as const }]]), done: new Set(['a']) };
    const plan = planCommit(counter, [a, b, c], NOW, decided);
    expect(plan.writes.map(({ intent: { uuid }, todo: { id } }) => [uuid, id])).toEqual([['c', 7]]);
    expect(plan.drops).toEqual([a]);
    expect([...plan.settled]).toEqual([['b', { refused: 'reused' }]]);
    expect(plan.settledIntents).toEqual([b]);
  });

  it('holds for any queue: each POST written at most once, ids consecutive from the counter, its own intent taken', () => {
    const withCopies = fc
      .array(
        fc.record({ uuid: fc.constantFrom('a', 'b', 'c', 'd', 'e'), ago: fc.nat({ max: 2 * INTENT_LIFETIME_MS }) }),
        {
          minLength: 1,
          maxLength: MAX_INTENTS,
        },
      )
      .map((drawn) => drawn.map(({ uuid, ago }, n) => intent(uuid, ago, n)).sort((x, y) => x.id - y.id));
    fc.assert(
      fc.property(withCopies, fc.nat(), (queue, pick) => {
        const mine = queue[pick % queue.length] ?? queue[0];
        if (mine === undefined) return;
        const plan = planCommit(counter, queue, NOW);
        const written = plan.writes.map(({ intent: { uuid } }) => uuid);
        expect(new Set(written).size).toBe(written.length);
        expect(plan.writes.map(({ todo: { id } }) => id)).toEqual(written.map((_, j) => counter.next + j));
        for (const { intent: taken } of plan.writes)
          expect(taken.id / 1000).toBeGreaterThanOrEqual(NOW - INTENT_LIFETIME_MS);
        const firstOfMine = queue.find(({ uuid }) => uuid === mine.uuid);
        const live = firstOfMine !== undefined && firstOfMine.id / 1000 >= NOW - INTENT_LIFETIME_MS;
        expect(written.includes(mine.uuid)).toBe(live);
      }),
    );
  });
});

describe('recentAfter: the ids the counter keeps for POSTs still looking', () => {
  it('keeps the earlier ids within RECENT_IDS of the counter, and adds this commit’s', () => {
    const recent = { old: 100 - RECENT_IDS - 1, kept: 100 - RECENT_IDS, last: 99 };
    const plan = planCommit({ next: 100, bytes: 0, recent }, [intent('a', 2), intent('b', 1)], NOW);
    expect(recentAfter(plan)).toEqual({ kept: 100 - RECENT_IDS, last: 99, a: 100, b: 101 });
  });
});

describe('decide, for the queue: what a cancelled commit means', () => {
  const counter: QueueCounter = { next: 7, bytes: 1_000 };

  /** What the queue's commit does with a cancellation of `plan` (lib/dynamodb/queue.ts): decide, as every write does. */
  function verdictOf(plan: CommitPlan, byRole: Partial<Record<CommitRole, Reason>>) {
    const transaction = commitTransaction(LIST, plan, { token: 'token', now: Date.now() });
    const { meanings } = transaction.read(
      transaction.roles.map((role) => byRole[role] ?? { code: 'None' }),
      Date.now(),
    );
    const { settled, next } = decide(meanings, commitShares(plan), { now: Date.now(), maxListBytes: MAX_LIST_BYTES });
    if (next.kind === 'again') return { kind: 'again', decided: decidedAfter(NOTHING_DECIDED, settled) };
    if (next.kind === 'moved' || next.kind === 'read again') return { kind: 'reread' };
    return { kind: next.kind };
  }

  it('reads the queue again when another commit moved the counter first', () => {
    const plan = planCommit(counter, [intent('a')], NOW);
    expect(verdictOf(plan, { counter: failed({ next: 9, bytes: 1_000 }) })).toEqual({ kind: 'reread' });
  });

  it('sizes the list first on a table whose counter has no size yet', () => {
    const plan = planCommit(counter, [intent('a')], NOW);
    expect(verdictOf(plan, { counter: failed({ next: 7 }) })).toEqual({ kind: 'size the list' });
  });

  it('reads the queue again when one of the intents it took is gone (another commit took it)', () => {
    const a = intent('a');
    const plan = planCommit(counter, [a], NOW);
    expect(verdictOf(plan, { [`intent ${a.id}`]: failed() })).toEqual({ kind: 'reread' });
  });

  it('commits again without a POST that has an outcome already (it withdrew, or another commit wrote it)', () => {
    const plan = planCommit(counter, [intent('a', 2), intent('b', 1)], NOW);
    const verdict = verdictOf(plan, { 'outcome a': failed() });
    expect(verdict).toEqual({ kind: 'again', decided: { settled: new Map(), done: new Set(['a']) } });
    if (verdict.kind !== 'again') return;
    const next = planCommit(counter, [intent('a', 2), intent('b', 1)], NOW, verdict.decided);
    expect(next.writes.map(({ intent: { uuid }, todo: { id } }) => [uuid, id])).toEqual([['b', 7]]);
  });

  it('answers a key claimed before with its replay, and a key that came with another request with KeyReused', () => {
    const mineClaim = claim('k1');
    const othersClaim = claim('k2');
    const plan = planCommit(
      counter,
      [intent('a', 2, 0, { claim: mineClaim }), intent('b', 1, 0, { claim: claim('k2', 'another request') })],
      NOW,
    );
    const replayed = createTodo({ title: 'first' }, 4);
    const verdict = verdictOf(plan, {
      'claim a': failed(keptClaim(mineClaim, replayed)),
      'claim b': failed(keptClaim(othersClaim, createTodo({ title: 'another request’s' }, 5))),
    });
    expect(verdict).toEqual({
      kind: 'again',
      decided: {
        settled: new Map([
          ['a', { todo: replayed, replayed: true }],
          ['b', { refused: 'reused' }],
        ]),
        done: new Set(),
      },
    });
  });

  it('refuses, in order, the intents that do not fit in the list, and commits the rest again', () => {
    const title = 'x'.repeat(1_000);
    const queue = [
      intent('a', 3, 0, { request: { title } }),
      intent('b', 2, 0, { request: { title } }),
      intent('c', 1, 0, { request: { title } }),
    ];
    const room = listBytes(createTodo({ title }, 7)) + listBytes(createTodo({ title }, 8)) / 2;
    const full = { next: 7, bytes: MAX_LIST_BYTES - room };
    const plan = planCommit(full, queue, NOW);
    const verdict = verdictOf(plan, { counter: failed(full) });
    expect(verdict).toEqual({
      kind: 'again',
      decided: {
        settled: new Map([
          ['b', { refused: 'full' }],
          ['c', { refused: 'full' }],
        ]),
        done: new Set(),
      },
    });
  });

  it('claims the key of a keyed intent it refused for no room, for the 409; a key that kept a 409 before settles it, and is not claimed again', () => {
    const title = 'x'.repeat(1_000);
    const full = { next: 7, bytes: MAX_LIST_BYTES - 10 };
    const refusedClaim = claim('k1');
    const keptClaim409 = claim('k2');
    const queue = [
      intent('a', 2, 0, { request: { title }, claim: refusedClaim }),
      intent('b', 1, 0, { request: { title }, claim: keptClaim409 }),
    ];
    const first = planCommit(full, queue, NOW);
    const refused = verdictOf(first, {
      counter: failed(full),
      'claim b': failed(claimPut('todos', keptClaim409, { listFull: true }, Date.now()).Put.Item),
    });
    expect(refused).toEqual({
      kind: 'again',
      decided: { settled: new Map([['b', { refused: 'full', replayed: true }]]), done: new Set() },
    });
    if (refused.decided === undefined) throw new Error('decided');
    const second = planCommit(full, queue, NOW, refused.decided);
    const again = verdictOf(second, { counter: failed(full) });
    expect(again).toMatchObject({ kind: 'again', decided: { settled: new Map([['a', { refused: 'full' }]]) } });
    if (again.decided === undefined) throw new Error('decided');
    const decided = {
      settled: new Map([...refused.decided.settled, ...again.decided.settled]),
      done: new Set<string>(),
    };
    const claims = commitTransaction(LIST, planCommit(full, queue, NOW, decided), {
      token: 't',
      now: NOW,
    }).actions.flatMap((action) =>
      'Put' in action && String(action.Put.Item.pk).startsWith('KEY#') ? [action.Put.Item] : [],
    );
    expect(claims).toEqual([expect.objectContaining({ pk: 'KEY#k1', listFull: true })]);
  });

  it('settles a refused intent whose claim of its 409 meets its own twin’s claim: it replays the twin’s answer, not again as it was', () => {
    const full = { next: 7, bytes: MAX_LIST_BYTES - 10 };
    const key = claim('twin');
    const queue = [intent('a', 2), intent('b', 1, 0, { request: { title: 'refused, then sent again' }, claim: key })];
    // b was refused for no room: this commit claims its key for the 409. Meanwhile its request, sent again from another
    // container with the same key, claimed it first and was written when a DELETE made room.
    const refusedB: Decided = { settled: new Map([['b', { refused: 'full' }]]), done: new Set() };
    const plan = planCommit(full, queue, NOW, refusedB);
    const twin = createTodo({ title: 'refused, then sent again' }, 6);
    const verdict = verdictOf(plan, { 'claim b': failed(keptClaim(key, twin)) });
    expect(verdict).toEqual({
      kind: 'again',
      decided: { settled: new Map([['b', { todo: twin, replayed: true }]]), done: new Set() },
    });
  });

  it('says unexplained when no reason it knows is there', () => {
    const plan = planCommit(counter, [intent('a')], NOW);
    expect(verdictOf(plan, { 'record a': { code: 'ValidationError' } })).toEqual({
      kind: 'unexplained',
    });
  });
});

describe('outcomeOf: a stored outcome as the POST’s answer', () => {
  it('answers the record as it was written, a replay, or why it was not written', () => {
    const record = createTodo({ title: 't' }, 5);
    // Stored, a record's fields come back in no particular order (a DynamoDB map): its answer has the record's.
    const todo = Object.fromEntries(Object.entries(record).reverse()) as Todo;
    expect(JSON.stringify(outcomeOf({ todo }))).toBe(JSON.stringify({ value: record, replayed: false }));
    expect(outcomeOf({ todo, replayed: true })).toEqual({ value: todo, replayed: true });
    expect(outcomeOf({ refused: 'full' })).toBeInstanceOf(ListFull);
    expect(outcomeOf({ refused: 'reused' })).toBeInstanceOf(KeyReused);
    expect(outcomeOf({ refused: 'withdrawn' })).toBe('withdrawn');
    expect(outcomeOf({})).toBe('withdrawn');
  });
});

describe('intentId and pauseBeforeLook', () => {
  it('orders intents by arrival, and tells apart two of one millisecond by the random part', () => {
    expect(intentId(NOW, () => 0)).toBeLessThan(intentId(NOW, () => 0.999));
    expect(intentId(NOW, () => 0.999)).toBeLessThan(intentId(NOW + 1, () => 0));
  });

  it('pauses about as long as a commit takes, longer while the head stays put, between 2 and 500 ms', () => {
    expect(pauseBeforeLook(30, 0)).toBe(30);
    expect(pauseBeforeLook(30, 1_000)).toBe(250);
    fc.assert(
      fc.property(fc.nat({ max: 60_000 }), fc.nat({ max: 60_000 }), (commitMs, headStillFor) => {
        const pause = pauseBeforeLook(commitMs, headStillFor);
        expect(pause).toBeGreaterThanOrEqual(2);
        expect(pause).toBeLessThanOrEqual(500);
        expect(pauseBeforeLook(commitMs, headStillFor + 100)).toBeGreaterThanOrEqual(pause);
      }),
    );
  });

  it('learns how many intents stand ahead from how far the head moved for the ids the counter gave', () => {
    const mine = { id: NOW * 1000, uuid: 'mine' };
    // A head 300 ms of arrivals ahead; then one 100 ms later, with 24 ids given meanwhile.
    const first = paceAfter(undefined, { id: (NOW - 300) * 1000, uuid: 'h1' }, { next: 100 }, NOW);
    expect(intentsAhead(first, mine)).toBe(0);
    const moved = paceAfter(first, { id: (NOW - 200) * 1000, uuid: 'h2' }, { next: 124 }, NOW + 50);
    expect(intentsAhead(moved, mine)).toBeCloseTo(48);
    // A look that finds the head where it was keeps what was learnt.
    const still = paceAfter(moved, { id: (NOW - 200) * 1000, uuid: 'h2' }, { next: 124 }, NOW + 80);
    expect(intentsAhead(still, mine)).toBeCloseTo(48);
  });

  it('takes a POST out of reach when the intents ahead of it take longer than its time left, at the pace seen', () => {
    const mine = { id: NOW * 1000, uuid: 'mine' };
    const first = paceAfter(undefined, { id: (NOW - 300) * 1000, uuid: 'h1' }, { next: 100 }, NOW);
    // Before the queue was seen to move nothing is known: never out of reach.
    expect(outOfReach(first, mine, 0)).toBe(false);
    // 24 ids in 50 ms, 48 intents ahead: about 100 ms of commits.
    const moved = paceAfter(first, { id: (NOW - 200) * 1000, uuid: 'h2' }, { next: 124 }, NOW + 50);
    expect(outOfReach(moved, mine, 120)).toBe(false);
    expect(outOfReach(moved, mine, 80)).toBe(true);
    // Not a POST the next commit takes: the ids estimate, a look at the queue's first intents decides (queue.ts).
    expect(outOfReach({ ...moved, inNextCommit: true }, mine, 80)).toBe(false);
    // Nor does it pause as one far back would: it looks about once a commit.
    expect(intentsAhead({ ...moved, inNextCommit: true }, mine)).toBe(0);
    expect(
      paceAfter({ ...moved, inNextCommit: true }, { id: (NOW - 100) * 1000, uuid: 'h3' }, { next: 148 }, NOW + 100)
        .inNextCommit,
    ).toBe(true);
  });

  it('lets a closer look decide: in the next commit, it stays; not in it, it is out of reach, whatever its pace says', () => {
    const mine = { id: NOW * 1000, uuid: 'mine' };
    const first = paceAfter(undefined, { id: (NOW - 300) * 1000, uuid: 'h1' }, { next: 100 }, NOW);
    // 24 ids in 50 ms, 48 intents ahead: about 100 ms of commits.
    const moved = paceAfter(first, { id: (NOW - 200) * 1000, uuid: 'h2' }, { next: 124 }, NOW + 50);
    expect(PACING.reach(moved, mine, 120)).toBe('stays');
    expect(PACING.reach(moved, mine, 80)).toBe('look closer');
    expect(PACING.reach({ ...moved, inNextCommit: true }, mine, 80)).toBe('stays');
    // The pace a closer look leaves may say it is in reach again: the look that showed it not in the next commit
    // decides (weighed again, a POST the next commit does not take waited on, only to be dropped at its deadline).
    expect(PACING.reach({ ...moved, inNextCommit: false }, mine, 80)).toBe('out of reach');
    expect(PACING.reach({ ...moved, inNextCommit: false }, mine, 120)).toBe('out of reach');
  });

  it('pauses a commit for each further commit’s intents ahead, past the first two, at most 500 ms', () => {
    expect(pauseBeforeLook(30, 0, 0)).toBe(30);
    expect(pauseBeforeLook(30, 0, 2 * MAX_INTENTS)).toBe(30);
    expect(pauseBeforeLook(30, 0, 5 * MAX_INTENTS)).toBe(120);
    expect(pauseBeforeLook(30, 0, 100 * MAX_INTENTS)).toBe(500);
    fc.assert(
      fc.property(fc.nat({ max: 1_000 }), fc.nat({ max: 1_000 }), fc.nat({ max: 10_000 }), (commitMs, still, ahead) => {
        // Never shorter than without pacing: a POST at low load looks as before.
        expect(pauseBeforeLook(commitMs, still, ahead)).toBeGreaterThanOrEqual(pauseBeforeLook(commitMs, still));
        expect(pauseBeforeLook(commitMs, still, ahead + MAX_INTENTS)).toBeGreaterThanOrEqual(
          pauseBeforeLook(commitMs, still, ahead),
        );
      }),
    );
  });
});
