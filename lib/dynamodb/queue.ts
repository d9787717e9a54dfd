import { setMaxListeners } from 'node:events';
import { StoreUnavailable } from '../errors';
import { log } from '../log';
import { claimPut } from './claims';
import { pause, timeLimit } from '../abort';
import type { PutInput } from './client';
import { counterMove, prepareCounter, readCounter, type Added } from './counter';
import { getItem } from './reads';
import type { Outcome, Post } from './posts';
import { createTodo, draftOf } from '../todos';
import {
  MAX_INTENTS,
  INTENT_LIFETIME_MS,
  NOTHING_DECIDED,
  commitShares,
  decidedAfter,
  intentId,
  intentsAhead,
  isStale,
  outOfReach,
  outcomeOf,
  paceAfter,
  pauseBeforeLook,
  placeOf,
  planCommit,
  recentAfter,
  takenNext,
  type CommitPlan,
  type CommitRole,
  type Decided,
  type Intent,
  type Look,
  type Payload,
  type QueueCounter,
  type QueuePace,
  type QueuedIntent,
  type StoredOutcome,
} from './queue-plan';
import { COUNTER_KEY, EXPIRES, conditionFailed, toTodo, todoItem, type ListTable, type TableAccess } from './table';
import { decide, decidingAt } from './decisions';
import { Transaction, commit } from './transaction';
import { HEAD_UNMARKED, INTENT_ID_FREE_OR_MINE, INTENT_IS_MINE, ITEM_EXISTS, ITEM_IS_NEW } from './conditions';

/**
 * The queue: POSTs of many containers meeting on the counter are written together (docs/design.md: why, what it holds).
 * A queued POST writes its intent (an id in arrival order, a uuid, its payload: apart over INLINE_PAYLOAD_BYTES) under
 * the counter's partition, and looks (a Query of the counter and first intent: one unit). The head commits the queue
 * in order in one transaction: counter, records, intents deleted, outcomes for their POSTs; the ids given stay in the
 * counter's `recent` for looks. A head still for HEAD_LEASE_MS is committed for by the waiting POST whose conditional
 * mark lands first. A POST near its deadline or out of reach takes itself back ("withdrawn", its intent gone): that
 * wins, and a later commit drops the intent unwritten (503), or the POST was committed first.
 */

/** How long the queue waits on a head that does not commit before a POST behind it commits for it. */
export const HEAD_LEASE_MS = 1_000;
/** How much earlier than its deadline a queued POST takes itself back, to answer in time. */
const RETRACT_BEFORE_MS = 300;
/** How long a queued POST's outcome is kept for it to find: well past any request's deadline. */
const OUTCOME_LIFETIME_S = 3_600;
/** How a commit's time is learnt: each commit weighs this much against what was known. */
const COMMIT_MS_WEIGHT = 0.2;
/** Max inline payload, JSON bytes: a look (counter ~2.5 KB with `recent`, intent) fits 4 KB (docs/performance.md). */
export const INLINE_PAYLOAD_BYTES = 1_000;

/** What a container keeps between its POSTs: the counter as it last saw it, and how its queue goes. */
export interface PostState {
  counter: QueueCounter | undefined;
  /** Whether this container's POSTs queue at all (DynamoDbStoreOptions.queuePosts). */
  readonly queue: boolean;
  /** Until when (epoch ms) other containers are taken to be writing too: POSTs queue meanwhile. */
  othersUntil: number;
  /** How long a commit of the queue takes here, from the head's look to its answer. */
  commitMs: number;
}

/**
 * Queue if no counter is known (a seed cannot see POSTs waiting) or others wrote within a lease: alone it would race
 * the head. Not for a `recent` seen last: at 16 busy containers every POST then paid a queued POST's four requests.
 */
export function queues(state: PostState, now: number): boolean {
  return state.counter === undefined || now < state.othersUntil;
}

export function outcomeKey(uuid: string): { pk: string; id: number } {
  return { pk: `DONE#${uuid}`, id: 0 };
}

export function payloadKey(uuid: string): { pk: string; id: number } {
  return { pk: `INTENT#${uuid}`, id: 0 };
}

/** Epoch seconds, as DynamoDB's time to live reads them, `seconds` from `now`. */
function expiresIn(seconds: number, now: number): number {
  return Math.ceil(now / 1000) + seconds;
}

/** A queued POST: its intent written, it waits for its outcome, committing the queue when at its head. */
export async function queuePost(
  table: TableAccess,
  state: PostState,
  post: Post,
  signal: AbortSignal,
  deadline: number,
): Promise<Outcome> {
  const mine = await putIntent(table, post, signal);
  const until = deadline - RETRACT_BEFORE_MS;
  const giveUp = timeLimit(
    until - table.runtime.now(),
    () => new StoreUnavailable('the queue did not commit this POST before the deadline', { timedOut: true }),
    table.runtime,
  );
  try {
    return await waitFor(table, state, post, { mine, until }, AbortSignal.any([signal, giveUp.signal]));
  } catch (error) {
    if (signal.aborted) throw error;
    return await retract(table, mine, signal, error);
  } finally {
    giveUp.stop();
  }
}

/**
 * Writes the intent after its payload, if apart: none is seen without it. A retry finding its first attempt's intent is
 * done (a late copy, a second intent of one POST, a commit drops). Payloads apart expire: no Query reads them.
 */
async function putIntent(table: TableAccess, post: Post, signal: AbortSignal): Promise<Intent> {
  const uuid = table.runtime.uuid();
  const expires = expiresIn(INTENT_LIFETIME_MS / 1000 + 60, table.runtime.now());
  const payload: Payload = {
    request: post.request,
    draft: draftOf(post.request),
    ...(post.claim && { claim: post.claim }),
  };
  const inline = Buffer.byteLength(JSON.stringify(payload)) <= INLINE_PAYLOAD_BYTES;
  if (!inline) {
    await table.dynamodb.putItem(
      { TableName: table.name, Item: { ...payloadKey(uuid), ...payload, [EXPIRES]: expires } },
      signal,
    );
  }
  for (;;) {
    const intent: QueuedIntent = {
      id: intentId(table.runtime.now(), table.runtime.random),
      uuid,
      ...(inline && { payload }),
    };
    try {
      await table.dynamodb.putItem(
        {
          TableName: table.name,
          Item: { pk: COUNTER_KEY.pk, ...intent, [EXPIRES]: expires },
          ConditionExpression: INTENT_ID_FREE_OR_MINE,
          ExpressionAttributeNames: { '#uuid': 'uuid' },
          ExpressionAttributeValues: { ':uuid': uuid },
        },
        signal,
      );
      return intent;
    } catch (error) {
      // Another POST's intent has this id (the same millisecond and random part): another id.
      if (!conditionFailed(error)) throw error;
    }
  }
}

/** Waits for the outcome: commits the queue at its head, or having taken over a stalled head; else pauses. */
async function waitFor(
  table: TableAccess,
  state: PostState,
  post: Post,
  { mine, until }: { mine: Intent; until: number },
  signal: AbortSignal,
): Promise<Outcome> {
  let head: { id: number; since: number } | undefined;
  let pace: QueuePace | undefined;
  for (;;) {
    // A look: the counter and first intent, one unit (a Query charges items read, projected or not: 16 at 60 KB titles).
    const look: Look = await queryQueue(table, signal, 2);
    state.counter = look.counter;
    const place = placeOf(look, mine);
    if (place.kind === 'committed') return { value: createTodo(post.request, place.id), replayed: false };
    if (place.kind === 'gone') return settledOutcome(await readOutcome(table, mine.uuid, signal));
    const now = table.runtime.now();
    let commits = place.kind === 'head';
    if (place.kind === 'waiting' && place.head !== undefined) {
      pace = paceAfter(pace, place.head, look.counter, now);
      if (outOfReach(pace, mine, until - now)) {
        // Not if the next commit takes it: the queue's first intents, one Query (four or more a read unit).
        const { intents } = await queryQueue(table, signal, 1 + MAX_INTENTS);
        pace = { ...pace, inNextCommit: takenNext(intents, mine) };
        if (!pace.inNextCommit) {
          throw new StoreUnavailable('the queue cannot write this POST before its deadline', { timedOut: true });
        }
      }
      state.othersUntil = now + HEAD_LEASE_MS;
      if (head?.id !== place.head.id) head = { id: place.head.id, since: now };
      if (now - head.since > HEAD_LEASE_MS) {
        commits = await takeOver(table, place.head.id, mine.uuid, signal);
        // Another POST has taken the head over: give it a lease before trying again.
        if (!commits) head = { id: place.head.id, since: table.runtime.now() };
      }
    }
    if (commits) {
      const outcome = await commitQueue(table, state, mine.uuid, signal);
      if (outcome !== undefined) return outcome;
      continue;
    }
    const headStillFor = head === undefined ? 0 : table.runtime.now() - head.since;
    const ahead = pace === undefined ? 0 : intentsAhead(pace, mine);
    await pause(pauseBeforeLook(state.commitMs, headStillFor, ahead), signal, table.runtime);
  }
}

/** One Query of the counter's partition: the counter, then the first intents in order, `limit` items in all. */
async function queryQueue(
  table: TableAccess,
  signal: AbortSignal,
  limit: number,
): Promise<{ counter: QueueCounter; intents: readonly QueuedIntent[]; complete: boolean }> {
  const page = await table.dynamodb.query(
    {
      TableName: table.name,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': COUNTER_KEY.pk },
      ConsistentRead: true,
      Limit: limit,
    },
    signal,
  );
  const [counter, ...intents] = page.items;
  if (counter?.id !== COUNTER_KEY.id) throw new Error(`table ${table.name} has no id counter`);
  return {
    counter: counter as unknown as QueueCounter,
    intents: intents as unknown as QueuedIntent[],
    complete: page.lastKey === undefined,
  };
}

/** The counter and the first intents in order, each with its payload (read apart, unless stale): what a commit writes from. */
async function readQueue(
  table: TableAccess,
  signal: AbortSignal,
): Promise<{ counter: QueueCounter; intents: QueuedIntent[] }> {
  const { counter, intents } = await queryQueue(table, signal, 1 + MAX_INTENTS);
  const now = table.runtime.now();
  // All payloads read at once, each request listening to the signal: past Node's warning at 10, and no leak.
  setMaxListeners(2 * MAX_INTENTS, signal);
  const read = await Promise.all(
    intents.map(async (intent): Promise<QueuedIntent> => {
      if (intent.payload !== undefined || isStale(intent, now)) return intent;
      const payload = (await getItem(table, payloadKey(intent.uuid), signal)) as Payload | undefined;
      return payload === undefined ? intent : { ...intent, payload };
    }),
  );
  return { counter, intents: read };
}

/** Commits the queue in one transaction: `mine`'s outcome if written; undefined if another came first. */
async function commitQueue(
  table: TableAccess,
  state: PostState,
  mine: string,
  signal: AbortSignal,
): Promise<Outcome | undefined> {
  const started = table.runtime.now();
  const { counter, intents } = await readQueue(table, signal);
  if (counter.bytes === undefined) {
    await prepareCounter(table, signal);
    return undefined;
  }
  let decided: Decided = NOTHING_DECIDED;
  for (;;) {
    const plan = planCommit(counter, intents, mine, table.runtime.now(), decided);
    const committed = await commit(
      table,
      commitTransaction(table, plan, { token: table.runtime.uuid(), now: table.runtime.now() }),
      signal,
      {
        // A commit that met another on the counter can never apply once the counter moved.
        superseded: async () => (await readCounter(table, signal))?.next !== counter.next,
      },
    );
    if (committed === 'applied') return afterCommit(state, plan, mine, table.runtime.now() - started);
    if (committed === 'superseded') return undefined;
    const { meanings, codes } = committed.cancelled;
    const { settled, next } = decide(meanings, commitShares(plan), decidingAt(table));
    if (next.kind === 'size the list') await prepareCounter(table, signal);
    // Another commit came first (the counter moved, an intent is gone), or the list was counted: read again.
    if (next.kind !== 'again') {
      if (next.kind === 'unexplained' || next.kind === 'changed') {
        throw new Error(`a commit of the queue cancelled for ${codes}`);
      }
      return undefined;
    }
    decided = decidedAfter(decided, settled);
    if (decided.done.has(mine)) return settledOutcome(await readOutcome(table, mine, signal));
  }
}

/** What a commit that went through leaves this container knowing, and `mine`'s outcome in it. */
function afterCommit(state: PostState, plan: CommitPlan, mine: string, tookMs: number): Outcome | undefined {
  const { records, bytes } = addedBy(plan);
  state.counter = { next: plan.counter.next + records, bytes: (plan.counter.bytes ?? 0) + bytes };
  state.commitMs = (1 - COMMIT_MS_WEIGHT) * state.commitMs + COMMIT_MS_WEIGHT * tookMs;
  log('debug', {
    message: 'commit',
    intents: plan.writes.length,
    settled: plan.settled.size,
    dropped: plan.drops.length,
  });
  const written = plan.writes.find(({ intent }) => intent.uuid === mine);
  // The record as this version answers it: the draft was made by this POST's own version, its fields in any order.
  if (written !== undefined) return { value: toTodo(written.todo), replayed: false };
  const settled = plan.settled.get(mine);
  return settled === undefined ? undefined : settledOutcome(settled);
}

/** What a commit adds to the list: its records, each with its bytes as its POST's version counted them. */
function addedBy(plan: CommitPlan): Added {
  return { records: plan.writes.length, bytes: plan.writes.reduce((sum, { bytes }) => sum + bytes, 0) };
}

/** A commit's transaction: the counter, each written intent's record, claim and outcome, the settled ones' outcomes, every intent taken deleted. */
export function commitTransaction(
  list: ListTable,
  plan: CommitPlan,
  { token, now }: { token: string; now: number },
): Transaction<CommitRole> {
  const table = list.name;
  const transaction = new Transaction<CommitRole>(token).add(
    'counter',
    counterMove(list, plan.counter, addedBy(plan), recentAfter(plan)),
  );
  for (const { intent, todo, bytes } of plan.writes) {
    transaction.add(`record ${intent.uuid}`, {
      Put: { TableName: table, Item: todoItem(todo, bytes), ConditionExpression: ITEM_IS_NEW },
    });
    const { claim } = intent.payload;
    if (claim) transaction.add(`claim ${intent.uuid}`, claimPut(table, claim, { todo }, now));
    transaction.add(`outcome ${intent.uuid}`, outcomePut(table, intent.uuid, { todo }, now));
  }
  for (const intent of plan.settledIntents) {
    const outcome = plan.settled.get(intent.uuid) ?? {};
    transaction.add(`outcome ${intent.uuid}`, outcomePut(table, intent.uuid, outcome, now));
    // Its key keeps a new 409, as a POST alone's does (posts.ts, keepRefusal).
    const { claim } = intent.payload;
    if (claim && outcome.refused === 'full' && !outcome.replayed) {
      transaction.add(`claim ${intent.uuid}`, claimPut(table, claim, { listFull: true }, now));
    }
  }
  for (const intent of [...plan.writes.map(({ intent: written }) => written), ...plan.settledIntents, ...plan.drops]) {
    transaction.add(`intent ${intent.id}`, {
      Delete: {
        TableName: table,
        Key: { pk: COUNTER_KEY.pk, id: intent.id },
        ConditionExpression: ITEM_EXISTS,
      },
    });
  }
  return transaction;
}

/** A POST's outcome, if it has none: one withdrawn, or rewritten by a late put after its commit, stays. */
function outcomePut(table: string, uuid: string, outcome: StoredOutcome, now: number): { Put: PutInput } {
  return {
    Put: {
      TableName: table,
      Item: { ...outcomeKey(uuid), ...outcome, [EXPIRES]: expiresIn(OUTCOME_LIFETIME_S, now) },
      ConditionExpression: ITEM_IS_NEW,
    },
  };
}

/** Marks the head taken by `by`, to commit for it: false if another did within a lease, or the head is committed. */
async function takeOver(table: TableAccess, head: number, by: string, signal: AbortSignal): Promise<boolean> {
  const now = table.runtime.now();
  try {
    await table.dynamodb.updateItem(
      {
        TableName: table.name,
        Key: { pk: COUNTER_KEY.pk, id: head },
        UpdateExpression: 'SET #takenAt = :now, #takenBy = :by',
        ConditionExpression: HEAD_UNMARKED,
        ExpressionAttributeNames: { '#takenAt': 'takenAt', '#takenBy': 'takenBy' },
        ExpressionAttributeValues: { ':now': now, ':by': by, ':expired': now - HEAD_LEASE_MS },
      },
      signal,
    );
    return true;
  } catch (error) {
    if (conditionFailed(error)) return false;
    throw error;
  }
}

function readOutcome(table: TableAccess, uuid: string, signal: AbortSignal): Promise<StoredOutcome | undefined> {
  return getItem(table, outcomeKey(uuid), signal);
}

/** The answer a stored outcome gives; a POST that left the queue with none, or withdrawn, has no answer but a 503. */
function settledOutcome(stored: StoredOutcome | undefined): Outcome {
  if (stored === undefined) throw new Error('a queued POST left the queue with no outcome');
  const outcome = outcomeOf(stored);
  if (outcome === 'withdrawn') throw new StoreUnavailable('the POST was withdrawn before it was written');
  return outcome;
}

/** Takes a POST back ("withdrawn"), then its intent so none waits on it: a 503; committed meanwhile, its outcome. */
async function retract(table: TableAccess, mine: Intent, signal: AbortSignal, reason: unknown): Promise<Outcome> {
  try {
    const withdrawn = outcomePut(table.name, mine.uuid, { refused: 'withdrawn' }, table.runtime.now());
    await table.dynamodb.putItem(withdrawn.Put, signal);
  } catch (error) {
    if (!conditionFailed(error)) throw error;
    return settledOutcome(await readOutcome(table, mine.uuid, signal));
  }
  await table.dynamodb
    .deleteItem(
      {
        TableName: table.name,
        Key: { pk: COUNTER_KEY.pk, id: mine.id },
        ConditionExpression: INTENT_IS_MINE,
        ExpressionAttributeNames: { '#uuid': 'uuid' },
        ExpressionAttributeValues: { ':uuid': mine.uuid },
      },
      signal,
    )
    .catch((error: unknown) => {
      // Committed meanwhile: a commit deleted it, and left it unwritten (its outcome was withdrawn).
      if (!conditionFailed(error)) throw error;
    });
  throw reason;
}
