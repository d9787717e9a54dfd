import { StoreUnavailable } from '../errors';
import { log } from '../log';
import { pause, timeLimit } from '../abort';
import { createTodo, draftOf } from '../todos';
import { claimPut } from './claims';
import type { DeleteInput, PutInput, UpdateInput } from './client';
import { HEAD_UNMARKED, INTENT_ID_FREE_OR_MINE, INTENT_IS_MINE, ITEM_EXISTS, ITEM_IS_NEW } from './conditions';
import { addedBytes, counterAfter, counterMove, prepareCounter, readCounter } from './counter';
import { decide } from './decisions';
import { InvariantFailed, invariant } from './invariant';
import { MIN_PAUSE_MS, type Pacing, type QueuePace, type QueueView } from './pacing';
import type { Outcome, Post } from './posts';
import {
  MAX_INTENTS,
  INTENT_LIFETIME_MS,
  NOTHING_DECIDED,
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
  type Intent,
  type Look,
  type Place,
  type Payload,
  type QueueCounter,
  type QueuedIntent,
  type StoredOutcome,
} from './queue-plan';
import { getItem } from './reads';
import { COUNTER_KEY, EXPIRES, toTodo, todoItem, written, type ListTable, type TableAccess } from './table';
import { Transaction, commit, type Committed } from './transaction';

/**
 * The queue: POSTs of many containers meeting on the counter are written together (docs/design.md: why, what it holds,
 * and its states, which `QueuedPost` names). A queued POST writes its intent (an id in arrival order, a uuid, its
 * payload) under the counter's partition, and looks (a Query of the counter and first intent). The head commits the
 * queue in order in one transaction: counter, records, intents deleted, outcomes for their POSTs; the ids given stay in
 * the counter's `recent` for looks. A head still for a lease is committed for by the waiting POST whose conditional mark
 * lands first. A POST near its deadline or out of reach takes itself back ("withdrawn", its intent gone): that wins,
 * and a later commit drops the intent unwritten (503), or the POST was committed first.
 *
 * The protocol is written as states (`QueuedPost`) and moves (`MOVES`): each state's move sends one request, and a pure
 * function of the state, what DynamoDB answered and the moment (`afterLook`, `afterCommit`, …) decides the next state;
 * `queuePost` drives them: send, wait, decide. When to look, pause, take over or take itself back is the pacing's to
 * decide (pacing.ts), never the moves'.
 */

/** How long a queued POST's outcome is kept for it to find: well past any request's deadline. */
const OUTCOME_LIFETIME_S = 3_600;
/** Ids drawn for one intent: two POSTs draw the same id (the same millisecond, the same random part) almost never. */
const MAX_ID_DRAWS = 8;
/**
 * The most steps a queued POST takes between two pauses: a look, a closer look, a mark, a read of the queue, a size,
 * and a commit for each intent a commit may settle. So its steps are bounded by its deadline, as a count of pauses.
 */
const STEPS_BETWEEN_PAUSES = MAX_INTENTS + 6;

/** What a waiting POST keeps between its looks: the head it saw and since when, and the queue's pace (pacing.ts). */
interface Wait {
  readonly head?: { readonly id: number; readonly since: number };
  readonly pace?: QueuePace;
}

/** A head's commit in progress: the queue as read, what earlier rounds from that read decided, and this round's plan. */
interface Commit {
  readonly read: Look;
  readonly decided: Decided;
  readonly plan: CommitPlan;
  readonly started: number;
}

/**
 * The states of a queued POST, as docs/design.md's table names them ("The queue as a state machine"; the test
 * test/unit/queue-states.test.ts holds the two together): the POST's own, a head's, and the end.
 */
export type QueuedPost =
  | { readonly state: 'putIntent'; readonly intent: QueuedIntent; readonly draws: number }
  | { readonly state: 'waiting'; readonly mine: Intent; readonly wait: Wait; readonly pauseMs: number }
  | { readonly state: 'lookCloser'; readonly mine: Intent; readonly wait: Wait }
  | { readonly state: 'commitQueue'; readonly mine: Intent; readonly wait: Wait }
  | { readonly state: 'sizeList'; readonly mine: Intent; readonly wait: Wait }
  | { readonly state: 'takeOver'; readonly mine: Intent; readonly wait: Wait; readonly head: Intent }
  | { readonly state: 'commit'; readonly mine: Intent; readonly wait: Wait; readonly commit: Commit }
  | { readonly state: 'gone'; readonly mine: Intent; readonly retracted: boolean }
  | { readonly state: 'retract'; readonly mine: Intent; readonly reason: unknown }
  | { readonly state: 'withdraw'; readonly mine: Intent; readonly reason: unknown }
  | { readonly state: 'answered'; readonly outcome: Outcome }
  | { readonly state: 'failed'; readonly error: unknown };

/** What each state sends (its move, below), in the words of docs/design.md's table. */
export const QUEUED_POST_STATES: Readonly<Record<QueuedPost['state'], string>> = {
  putIntent: 'writes its intent, on condition that its id is free or its own',
  waiting: 'pauses, then looks: the counter and the first intent',
  lookCloser: "reads the queue's first intents: does the next commit take it?",
  takeOver: "marks a stalled head's intent, on condition that no other POST did within a lease",
  commitQueue: 'reads the queue, to commit it',
  sizeList: 'counts a list seeded before it had a size',
  commit: 'commits the queue in one transaction',
  gone: 'reads its outcome',
  retract: 'writes its outcome withdrawn, on condition that it has none',
  withdraw: 'deletes its intent, on condition that it is its own',
  answered: 'answers with its outcome',
  failed: 'answers 503',
};

type Active = Exclude<QueuedPost, { state: 'answered' | 'failed' }>;
type StateOf<S extends Active['state']> = Extract<Active, { state: S }>;

/** What a move reads besides its state and what DynamoDB answered: the time, the pacing, what the container knows. */
interface Moment {
  readonly now: number;
  readonly pacing: Pacing;
  readonly view: QueueView;
  readonly post: Post;
  /** When the POST takes itself back: its deadline less the pacing's margin. */
  readonly until: number;
  readonly maxListBytes: number;
  /** The runtime's chance: a new intent id. */
  readonly random: () => number;
}

/** What a move sends with: the table, the signal that ends its wait, and the moment once DynamoDB answered. */
interface Io {
  readonly table: TableAccess;
  readonly signal: AbortSignal;
  readonly at: () => Moment;
}

export function outcomeKey(uuid: string): { pk: string; id: number } {
  return { pk: `DONE#${uuid}`, id: 0 };
}

/** Epoch seconds, as DynamoDB's time to live reads them, `seconds` from `now`. */
function expiresIn(seconds: number, now: number): number {
  return Math.ceil(now / 1000) + seconds;
}

/**
 * A queued POST, from its intent to its outcome: each step, its state's move (send, then decide from the answer); a
 * request that fails, past the client's attempts, is decided on too (`failedIn`). An invariant that fails stops it.
 */
export async function queuePost(
  table: TableAccess,
  view: QueueView,
  pacing: Pacing,
  post: Post,
  signal: AbortSignal,
  deadline: number,
): Promise<Outcome> {
  const until = deadline - pacing.retractBeforeMs;
  const giveUp = timeLimit(
    until - table.runtime.now(),
    () => new StoreUnavailable('the queue did not commit this POST before the deadline', { timedOut: true }),
    table.runtime,
  );
  // While it waits it gives up at `until` too; taking itself back, only the request's deadline ends it.
  const waiting = AbortSignal.any([signal, giveUp.signal]);
  const { runtime, maxListBytes } = table;
  function at(): Moment {
    return { now: runtime.now(), pacing, view, post, until, maxListBytes, random: runtime.random };
  }
  const maxSteps = Math.ceil((deadline - runtime.now()) / MIN_PAUSE_MS) * STEPS_BETWEEN_PAUSES;
  let state: QueuedPost = { state: 'putIntent', intent: newIntent(table, post), draws: 1 };
  try {
    for (let step = 0; step < maxSteps; step++) {
      if (state.state === 'answered' || state.state === 'failed') break;
      const own = state.state === 'retract' || state.state === 'withdraw' || state.state === 'gone';
      const active: Active = state;
      try {
        state = await move(active, { table, signal: own ? signal : waiting, at });
      } catch (error) {
        if (error instanceof InvariantFailed) throw error;
        state = failedIn(active, error, signal.aborted);
      }
    }
    if (state.state === 'answered') return state.outcome;
    throw state.state === 'failed' ? state.error : new StoreUnavailable(`a queued POST took ${maxSteps} steps`);
  } finally {
    giveUp.stop();
  }
}

/** A new intent for `post`: an id drawn in arrival order, a uuid, and its payload. */
function newIntent(table: TableAccess, post: Post): QueuedIntent {
  // The uuid drawn before the id, as before the queue was states: the scale model replays a391e88's runs draw for draw.
  const uuid = table.runtime.uuid();
  return { id: intentId(table.runtime.now(), table.runtime.random), uuid, payload: payloadOf(post) };
}

/** What a queued POST's intent carries: its request, the record its version makes of it, and its key's claim. */
export function payloadOf(post: Post): Payload {
  return { request: post.request, draft: draftOf(post.request), ...(post.claim && { claim: post.claim }) };
}

/** `state`'s move (MOVES). */
function move(state: Active, io: Io): Promise<QueuedPost> {
  // TypeScript does not tie MOVES[state.state] to the state it takes: each move is typed by its own state.
  return (MOVES[state.state] as (state: Active, io: Io) => Promise<QueuedPost>)(state, io);
}

/**
 * Each state's move: the one request it sends, then the next state, decided by a pure function of the state, what
 * DynamoDB answered and the moment. What a look or a commit teaches the container is noted on its way (`learn…`).
 */
const MOVES: { readonly [S in Active['state']]: (state: StateOf<S>, io: Io) => Promise<QueuedPost> } = {
  putIntent: async (state, { table, signal, at }) =>
    afterPut(state, await written(table.dynamodb.putItem(intentPut(table.name, state.intent, at().now), signal)), at()),
  async waiting(state, { table, signal, at }) {
    await pause(state.pauseMs, signal, table.runtime);
    // A look: the counter and first intent, one unit (a Query charges the items read, projected or not).
    return looked(state, await queryQueue(table, signal, 2), at());
  },
  // The queue's first intents: whether the next commit takes it (four or more intents a read unit).
  lookCloser: async (state, { table, signal, at }) =>
    looked(state, await queryQueue(table, signal, 1 + MAX_INTENTS), at()),
  async takeOver(state, { table, signal, at }) {
    const { now, pacing } = at();
    const mark = headMark(table.name, state.head, state.mine.uuid, now, pacing.headLeaseMs);
    return afterMark(state, await written(table.dynamodb.updateItem(mark, signal)), at());
  },
  // The queue as a commit writes it: the counter and the first intents, each with its payload.
  async commitQueue(state, { table, signal, at }) {
    // A commit's time (pacing.commitMs) runs from the head's read of the queue.
    const started = at().now;
    return afterRead(state, await queryQueue(table, signal, 1 + MAX_INTENTS), at(), started);
  },
  async sizeList(state, { table, signal }) {
    await prepareCounter(table, signal);
    return lookAgain(state.mine, state.wait);
  },
  async commit(state, { table, signal, at }) {
    const { plan, read, started } = state.commit;
    const made = { token: table.runtime.uuid(), now: at().now };
    const committed = await commit(table, commitTransaction(table, plan, made), signal, {
      // A commit that met another on the counter can never apply once the counter moved.
      superseded: async () => (await readCounter(table, signal))?.next !== read.counter.next,
    });
    if (committed === 'applied') learnCommit(at(), plan, started);
    return afterCommit(state, committed, at());
  },
  gone: async (state, { table, signal }) =>
    afterOutcome(state, await getItem(table, outcomeKey(state.mine.uuid), signal)),
  async retract(state, { table, signal, at }) {
    const withdrawn = outcomePut(table.name, state.mine.uuid, { refused: 'withdrawn' }, at().now);
    // An outcome was there first (its record, a refusal, a key's replay): it is the answer.
    if (!(await written(table.dynamodb.putItem(withdrawn.Put, signal))))
      return { state: 'gone', mine: state.mine, retracted: true };
    return { state: 'withdraw', mine: state.mine, reason: state.reason };
  },
  async withdraw(state, { table, signal }) {
    // Refused: committed meanwhile (a commit deleted it, and left it unwritten: its outcome was withdrawn).
    await written(table.dynamodb.deleteItem(intentDelete(table.name, state.mine), signal));
    return { state: 'failed', error: state.reason };
  },
};

/** Its intent written, it waits; another POST's intent at that id (the same millisecond and random part), another id. */
function afterPut(state: StateOf<'putIntent'>, put: boolean, at: Moment): QueuedPost {
  if (put) return waiting(state.intent, {}, at, 0);
  if (state.draws >= MAX_ID_DRAWS) return { state: 'failed', error: new StoreUnavailable('no free id for an intent') };
  return { state: 'putIntent', intent: { ...state.intent, id: intentId(at.now, at.random) }, draws: state.draws + 1 };
}

/**
 * Where a look finds `mine` (`place`): committed (its id in `recent`), gone, at the head, or waiting. Waiting, its
 * pacing says whether it stays, looks closer or is out of reach; a head still past its lease is taken over.
 */
function afterLook(state: StateOf<'waiting' | 'lookCloser'>, look: Look, place: Place, at: Moment): QueuedPost {
  const { mine } = state;
  if (place.kind === 'committed') {
    return { state: 'answered', outcome: { value: createTodo(at.post.request, place.id), replayed: false } };
  }
  if (place.kind === 'gone') return { state: 'gone', mine, retracted: false };
  if (place.kind === 'head') return { state: 'commitQueue', mine, wait: state.wait };
  if (place.head === undefined) return waiting(mine, state.wait, at);
  const closer = state.state === 'lookCloser' ? { inNextCommit: takenNext(look.intents, mine) } : {};
  const pace = { ...at.pacing.afterLook(state.wait.pace, place.head, look.counter, at.now), ...closer };
  const reach = at.pacing.reach(pace, mine, at.until - at.now);
  if (reach === 'look closer') return { state: 'lookCloser', mine, wait: { ...state.wait, pace } };
  if (reach === 'out of reach') {
    const reason = new StoreUnavailable('the queue cannot write this POST before its deadline', { timedOut: true });
    return { state: 'retract', mine, reason };
  }
  const seen = state.wait.head;
  const head = seen?.id === place.head.id ? seen : { id: place.head.id, since: at.now };
  if (at.now - head.since > at.pacing.headLeaseMs)
    return { state: 'takeOver', mine, wait: { head, pace }, head: place.head };
  return waiting(mine, { head, pace }, at);
}

/** A look learnt and decided on at its answer's moment, not its sending's: a throttled look is answered late. */
function looked(state: StateOf<'waiting' | 'lookCloser'>, look: Look, at: Moment): QueuedPost {
  const place = placeOf(look, state.mine);
  learnLook(at, look, place);
  return afterLook(state, look, place, at);
}

/** Its mark on the head landed: it commits; another POST's did: it gives that one a lease. */
function afterMark(state: StateOf<'takeOver'>, marked: boolean, at: Moment): QueuedPost {
  if (marked) return { state: 'commitQueue', mine: state.mine, wait: state.wait };
  return waiting(state.mine, { ...state.wait, head: { id: state.head.id, since: at.now } }, at);
}

/** The queue as read (sent at `started`): a commit of it, planned; first a size, for a list counted before sizes. */
function afterRead(state: StateOf<'commitQueue'>, read: Look, at: Moment, started: number): QueuedPost {
  const { mine, wait } = state;
  if (read.counter.bytes === undefined) return { state: 'sizeList', mine, wait };
  const plan = planCommit(read.counter, read.intents, at.now);
  return { state: 'commit', mine, wait, commit: { read, decided: NOTHING_DECIDED, plan, started } };
}

/**
 * What a commit's end makes of `mine`: written, its answer; settled, its outcome; neither, it waits on. Cancelled, the
 * decision table (decisions.ts): again from the same read without what it settled; anything else, read again.
 */
function afterCommit(state: StateOf<'commit'>, committed: Committed<CommitRole>, at: Moment): QueuedPost {
  const { mine, wait } = state;
  const { read, decided, plan } = state.commit;
  if (committed === 'superseded') return lookAgain(mine, wait);
  if (committed === 'applied') {
    const written = plan.writes.find(({ intent }) => intent.uuid === mine.uuid);
    // The record as this version answers it: the draft was made by this POST's own version, its fields in any order.
    if (written !== undefined) return { state: 'answered', outcome: { value: toTodo(written.todo), replayed: false } };
    const settled = plan.settled.get(mine.uuid);
    return settled === undefined
      ? lookAgain(mine, wait)
      : afterOutcome({ state: 'gone', mine, retracted: false }, settled);
  }
  const { meanings, codes } = committed.cancelled;
  const { settled, next } = decide(meanings, commitShares(plan), at);
  if (next.kind === 'size the list') return { state: 'sizeList', mine, wait };
  if (next.kind === 'unexplained' || next.kind === 'changed') {
    return { state: 'retract', mine, reason: new Error(`a commit of the queue cancelled for ${codes}`) };
  }
  // Another commit came first (the counter moved, an intent is gone): read again.
  if (next.kind !== 'again') return lookAgain(mine, wait);
  const after = decidedAfter(decided, settled);
  if (after.done.has(mine.uuid)) return { state: 'gone', mine, retracted: false };
  const replanned = planCommit(read.counter, read.intents, at.now, after);
  return { state: 'commit', mine, wait, commit: { ...state.commit, decided: after, plan: replanned } };
}

/** The answer a stored outcome gives; none (it left the queue with none): it takes itself back, unless it did. */
function afterOutcome(state: StateOf<'gone'>, stored: StoredOutcome | undefined): QueuedPost {
  if (stored === undefined) {
    const reason = new Error('a queued POST left the queue with no outcome');
    return state.retracted ? { state: 'failed', error: reason } : { state: 'retract', mine: state.mine, reason };
  }
  const outcome = outcomeOf(stored);
  if (outcome !== 'withdrawn') return { state: 'answered', outcome };
  return { state: 'failed', error: new StoreUnavailable('the POST was withdrawn before it was written') };
}

/**
 * A head whose commit did not answer it (another came first, the list was counted, its own intent not in it) looks
 * again at once, as the store did before its queue was states: the queue moved, and a pause there holds every POST
 * behind it (in the scale model at 256 containers and 400 POSTs a second, a pause there halved what the queue carried:
 * the figures are in the message of 8e4f7b3, which made this move).
 */
function lookAgain(mine: Intent, wait: Wait): QueuedPost {
  return { state: 'waiting', mine, wait, pauseMs: 0 };
}

/** It waits, and looks again after the pause its pacing gives. */
function waiting(mine: Intent, wait: Wait, at: Moment, pauseMs?: number): QueuedPost {
  const still = wait.head === undefined ? 0 : at.now - wait.head.since;
  return {
    state: 'waiting',
    mine,
    wait,
    pauseMs: pauseMs ?? at.pacing.pauseBeforeLook(at.view, wait.pace, mine, still),
  };
}

/**
 * A request that failed past the client's attempts (`deadline`: the request's own deadline came): its wait failed,
 * and the POST takes itself back, so that no POST waits a lease behind it; unless its deadline came (no time to), it
 * has no intent yet (it may yet be there: a 503 may still be applied), or it was taking itself back.
 */
function failedIn(state: Active, error: unknown, deadline: boolean): QueuedPost {
  if (deadline || state.state === 'putIntent' || state.state === 'retract' || state.state === 'withdraw') {
    return { state: 'failed', error };
  }
  if (state.state === 'gone' && state.retracted) return { state: 'failed', error };
  return { state: 'retract', mine: state.mine, reason: error };
}

/**
 * What a look teaches the container: the counter as it is, and, waiting behind another POST's intent, others at work;
 * a POST another's commit wrote, or one at the head, does not make its container's next POST queue (as before).
 */
function learnLook({ view, now }: Moment, look: Look, place: Place): void {
  view.counter = look.counter;
  if (place.kind === 'waiting' && place.head !== undefined) view.othersSeenAt = now;
}

/** What a commit that went through teaches the container: the counter after it, and how long a commit takes. */
function learnCommit({ view, pacing, now }: Moment, plan: CommitPlan, started: number): void {
  view.counter = counterAfter(plan.counter, plan.writes);
  view.commitMs = pacing.commitMs(view, now - started);
  log('debug', {
    message: 'commit',
    intents: plan.writes.length,
    settled: plan.settled.size,
    dropped: plan.drops.length,
  });
}

/** One Query of the counter's partition: the counter, then the first intents in order, `limit` items in all. */
async function queryQueue(table: TableAccess, signal: AbortSignal, limit: number): Promise<Look> {
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

/**
 * A commit's transaction: the counter, each written intent's record, claim and outcome, the settled ones' outcomes,
 * every intent taken deleted. It asserts what the queue relies on before anything is sent: the records take the
 * counter's next ids in the order their POSTs queued, with no gap; each goes with its outcome; the counter moves by
 * their sizes.
 */
export function commitTransaction(
  list: ListTable,
  plan: CommitPlan,
  { token, now }: { token: string; now: number },
): Transaction<CommitRole> {
  const table = list.name;
  const transaction = new Transaction<CommitRole>(token).add(
    'counter',
    counterMove(list, plan.counter, plan.writes, recentAfter(plan)),
  );
  plan.writes.forEach(({ intent, todo, bytes }, j) => {
    const before = plan.writes[j - 1]?.intent.id ?? -Infinity;
    invariant(intent.id > before, 'a commit writes intents in the order they queued', () => ({
      before,
      id: intent.id,
    }));
    const item = todoItem(todo, bytes);
    transaction.add(`record ${intent.uuid}`, {
      Put: { TableName: table, Item: item, ConditionExpression: ITEM_IS_NEW },
    });
    const { claim } = intent.payload;
    if (claim) transaction.add(`claim ${intent.uuid}`, claimPut(table, claim, { todo }, now));
    transaction.add(`outcome ${intent.uuid}`, outcomePut(table, intent.uuid, { todo }, now));
    invariant(transaction.roles.includes(`outcome ${intent.uuid}`), 'a record is written with its outcome', () => ({
      id: todo.id,
    }));
  });
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
    const Key = { pk: COUNTER_KEY.pk, id: intent.id };
    transaction.add(`intent ${intent.id}`, { Delete: { TableName: table, Key, ConditionExpression: ITEM_EXISTS } });
  }
  const sizes = transaction.actions.reduce(
    (sum, action) => sum + ('Put' in action && action.Put.Item.pk === 'TODO' ? Number(action.Put.Item.size) : 0),
    0,
  );
  const moved = addedBytes(plan.writes);
  invariant(sizes === moved, 'the counter moves by the sizes of the records a commit writes', () => ({
    sizes,
    moved,
  }));
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

/** A queued POST's intent, with its time to live: a retry of the put finds its first copy's, and is done. */
function intentPut(table: string, intent: QueuedIntent, now: number): PutInput {
  return {
    TableName: table,
    Item: { pk: COUNTER_KEY.pk, ...intent, [EXPIRES]: expiresIn(INTENT_LIFETIME_MS / 1000 + 60, now) },
    ConditionExpression: INTENT_ID_FREE_OR_MINE,
    ExpressionAttributeNames: { '#uuid': 'uuid' },
    ExpressionAttributeValues: { ':uuid': intent.uuid },
  };
}

/** A POST takes back its own intent, so that none waits on it. */
function intentDelete(table: string, mine: Intent): DeleteInput {
  return {
    TableName: table,
    Key: { pk: COUNTER_KEY.pk, id: mine.id },
    ConditionExpression: INTENT_IS_MINE,
    ExpressionAttributeNames: { '#uuid': 'uuid' },
    ExpressionAttributeValues: { ':uuid': mine.uuid },
  };
}

/** Marks the head taken by `by`, to commit for it, unless another did within a lease or the head is committed. */
function headMark(table: string, head: Intent, by: string, now: number, leaseMs: number): UpdateInput {
  return {
    TableName: table,
    Key: { pk: COUNTER_KEY.pk, id: head.id },
    UpdateExpression: 'SET #takenAt = :now, #takenBy = :by',
    ConditionExpression: HEAD_UNMARKED,
    ExpressionAttributeNames: { '#takenAt': 'takenAt', '#takenBy': 'takenBy' },
    ExpressionAttributeValues: { ':now': now, ':by': by, ':expired': now - leaseMs },
  };
}
