import { randomUUID } from 'node:crypto';
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { backoff, pause, type DynamoDbSender } from './dynamodb-client';
import {
  COUNTER_KEY,
  EXPIRES,
  ITEM_OVERHEAD_BYTES,
  MAX_TRANSACTION_BYTES,
  TODO_PARTITION,
  cancellations,
  claimPut,
  conditionFailed,
  inFlightAtDeadline,
  outcomeKey,
  replayOf,
  toTodo,
  type Counter,
  type Item,
  type TransactItem,
} from './dynamodb-table';
import { KeyReused, ListFull, StoreUnavailable } from './errors';
import { MAX_LIST_BYTES, listBytes } from './list-size';
import { log } from './log';
import type { IdempotencyClaim, Todo, Written } from './todos';

/**
 * How POSTs get their ids, and their records written. Ids have no gaps and follow creation
 * order, so a POST writes its record and moves the counter from n to n + 1 in one transaction,
 * on condition that the counter still says n. That condition serializes every POST of every
 * container on one item: containers that guess n at once all but one fail. On Lambda, where a
 * container holds one request at a time, eight containers made 2.6 transactions a POST and
 * sixteen ten (bench `fleet`), and POST throughput fell as Lambda scaled out.
 *
 * So POSTs that meet each other stop racing and are written together:
 *
 * - **Alone**, a container commits straight away, with the counter as it last saw it: one
 *   transaction, as before. If someone else moved the counter, the cancellation carries the
 *   counter as it is now (ReturnValuesOnConditionCheckFailure), and the container queues its
 *   POSTs for a while (CONTENDED_FOR_MS).
 * - **Queued**, a POST writes an intent (its title, its key if any) under the counter's partition,
 *   sorted by time, and watches the queue with one Query that returns the counter and every
 *   intent in order. The POST at the head commits all of them, in order, in one transaction: the
 *   counter, each record, each intent deleted, and each intent's outcome (its record, a replay,
 *   or a refusal) for its POST to read. The others find their intent gone at their next look,
 *   and their id in the counter (RECENT_IDS), or else read their outcome. So under contention a
 *   transaction writes many POSTs, no POST's transaction is bound to fail, and a queued POST
 *   costs its intent, its looks and its share of a commit.
 * - **A head that does not commit** (its container stalled, or crashed, or its POST withdrawn) is
 *   committed for it by a POST still waiting once the head has not moved for HEAD_LEASE_MS: the
 *   one whose conditional mark on the head's intent lands first (#takeOver). Nothing is lost, and
 *   its POST finds its outcome. (When every waiting POST took over at once, each one's transaction
 *   failed on the others', and the queue stalled; a lease per place in line instead left POSTs far
 *   behind a run of withdrawn intents waiting past their deadline.) A POST near its deadline takes
 *   itself back: it writes its outcome as "withdrawn", on condition that it has none yet. Either
 *   that write wins, and any later commit drops the intent unwritten (the POST answers 503), or
 *   the POST was committed first, and it answers with its outcome. Intents older than a request
 *   can live are dropped, unwritten, by whoever commits.
 *
 * Within one container (the emulator runs every request in one process) POSTs that arrive while
 * a transaction is in flight go together in the next one: a batch (lib/dynamodb-store.ts).
 */

/** After a sign that other containers are writing too, queue POSTs for this long before trying alone again. */
export const CONTENDED_FOR_MS = 1_000;
/** How long the queue waits on a head that does not commit before the next one commits for it. */
export const HEAD_LEASE_MS = 1_000;
/** Intents older than this are from requests that have given up (the function's timeout): dropped. */
export const INTENT_LIFETIME_MS = 10_000;
/** The longest pause between two looks at the queue. */
const MAX_WAIT_MS = 500;
/** How much earlier than its deadline a queued POST takes its intent back, to answer in time. */
const RETRACT_BEFORE_MS = 300;
/** Intents one transaction takes: up to four actions each (record, intent, outcome, key) and the counter. */
const MAX_INTENTS = 24;
/**
 * How far back the counter keeps the ids a commit gave (Counter.recent): the latest commits'
 * POSTs, which are the ones still looking. It bounds the counter at a few KB, which every POST's
 * transaction writes (a write's cost grows with the item's size, by the KB).
 */
const RECENT_IDS = 32;

/** A POST as the queue sees it. */
export interface NewTodo {
  readonly title: string;
  readonly claim: IdempotencyClaim | undefined;
}

/** What became of a POST: its record, the answer its key replays, or a refusal. */
export type Outcome = Written<Todo> | ListFull | KeyReused;

/** An intent, as stored under the counter's partition. */
interface Intent extends Item {
  readonly id: number;
  readonly uuid: string;
  readonly title: string;
  readonly claim?: IdempotencyClaim;
}

/** An outcome, as stored for a queued POST to read. */
interface StoredOutcome {
  readonly todo?: Todo;
  readonly replayed?: boolean;
  /** Not written: no room in the list; its key came with another request; its POST gave up. */
  readonly refused?: 'full' | 'reused' | 'withdrawn';
}

function toOutcome(stored: StoredOutcome): Outcome {
  if (stored.refused === 'full') return new ListFull();
  if (stored.refused === 'reused') return new KeyReused();
  if (stored.refused === 'withdrawn') throw new StoreUnavailable('the POST was withdrawn before it was written');
  if (stored.todo === undefined) throw new Error('an outcome with no record');
  // DynamoDB keeps a map's fields in no order: the record is rebuilt as it was answered.
  return { value: toTodo(stored.todo as unknown as Item), replayed: stored.replayed === true };
}

/** How long a queued POST's outcome is kept for it to read: well past any request's deadline. */
const OUTCOME_LIFETIME_S = 3600;

/** Epoch seconds, as DynamoDB's time to live reads them, `seconds` from now. */
const expiresIn = (seconds: number) => Math.ceil(Date.now() / 1000) + seconds;

/** A sort key for a new intent: the time, and a random part so that two at one millisecond differ. */
const intentId = () => Date.now() * 1000 + Math.floor(Math.random() * 1000);

export class IdAllocator {
  /** The counter as this container last saw or left it. */
  #known: Counter | undefined;
  #contendedUntil = 0;
  /** How long a commit of the queue takes here, from the head's look to its answer; a guess until the first. */
  #commitMs = 20;

  constructor(
    private readonly dynamo: DynamoDbSender,
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    /** Counts the list once, for a table seeded before the list had a size. */
    private readonly sizeList: (signal: AbortSignal) => Promise<void>,
  ) {}

  /** Tells the allocator the counter's state after the table was seeded or read. */
  know(counter: Counter): void {
    this.#known = counter;
  }

  /**
   * Writes these POSTs' records with the next ids: in one transaction when this container is
   * alone, in the queue otherwise. Each gets its outcome, in order.
   */
  async create(posts: readonly NewTodo[], signal: AbortSignal, deadline: number): Promise<Outcome[]> {
    // A batch of several is a container with many requests at once (the emulator): its one
    // transaction writes them all, so it races for the counter rather than queue each.
    const batch = posts.length > 1;
    if (batch || (this.#known !== undefined && Date.now() >= this.#contendedUntil)) {
      const alone = await this.#alone(posts, signal, deadline, batch);
      if (alone !== undefined) return alone;
    }
    return Promise.all(posts.map((post) => this.#queued(post, signal, deadline)));
  }

  /**
   * The fast path: one transaction, or undefined when another container moved the counter
   * first (a batch that `race`s tries again instead). At the deadline, a key that another
   * request with it kept busy to the end is a KeyInFlight: the other's answer is not known yet.
   */
  async #alone(
    posts: readonly NewTodo[],
    signal: AbortSignal,
    deadline: number,
    race: boolean,
  ): Promise<Outcome[] | undefined> {
    return inFlightAtDeadline(signal, (contended) => this.#writeAlone(posts, signal, deadline, race, contended));
  }

  async #writeAlone(
    posts: readonly NewTodo[],
    signal: AbortSignal,
    deadline: number,
    race: boolean,
    contended: () => void,
  ): Promise<Outcome[] | undefined> {
    const outcomes: (Outcome | undefined)[] = posts.map(() => undefined);
    for (;;) {
      const counter = this.#known;
      if (counter === undefined) return undefined;
      const open = posts.flatMap((post, i) => (outcomes[i] === undefined ? [{ post, i }] : []));
      if (open.length === 0) return outcomes.filter((outcome) => outcome !== undefined);
      const writes = open.map(({ post, i }, j) => ({
        post,
        i,
        todo: { id: counter.next + j, title: post.title, completed: false },
      }));
      const todos = writes.map(({ todo }) => todo);
      try {
        await this.#transact(
          [
            this.#counterUpdate(counter, todos),
            ...todos.map((todo) => this.#recordPut(todo)),
            ...writes.flatMap(({ post, todo }) => claimPut(this.table, post.claim, todo)),
          ],
          signal,
        );
        this.#known = { next: counter.next + todos.length, bytes: (counter.bytes ?? 0) + bytesOf(todos) };
        for (const { i, todo } of writes) outcomes[i] = { value: todo, replayed: false };
      } catch (error) {
        const reasons = cancellations(error);
        if (reasons === undefined) throw error;
        if (reasons.some(({ code }) => code === 'TransactionConflict')) {
          if (reasons.slice(1 + todos.length).some(({ code }) => code === 'TransactionConflict')) contended();
          await backoff(signal);
          continue;
        }
        // A member whose key was claimed before gets the claim's answer.
        const claimReasons = reasons.slice(1 + todos.length);
        let settled = false;
        let claimed = false;
        for (const [k, { post, i }] of writes.filter(({ post }) => post.claim !== undefined).entries()) {
          const reason = claimReasons[k];
          if (reason?.code !== 'ConditionalCheckFailed' || reason.item === undefined) continue;
          const outcome = replayOutcome(reason.item, post.claim);
          if (outcome) {
            settled = true;
            outcomes[i] = outcome;
          } else {
            // No replay: the claim expired after the condition was checked.
            claimed = true;
          }
        }
        const [counterReason] = reasons;
        const now =
          counterReason?.code === 'ConditionalCheckFailed' ? (counterReason.item as Counter | undefined) : undefined;
        if (now === undefined) {
          // A key claimed by another (its answer now settles its POST), or whose claim expired just
          // now (the next attempt claims it anew): the others go again.
          if (settled || claimed) continue;
          throw error;
        }
        this.#known = now;
        if (now.bytes === undefined) {
          await this.sizeList(signal);
          this.#known = undefined;
          return undefined;
        }
        if (now.next !== counter.next) {
          // Another container moved the counter: this one is not alone. A batch tries again at
          // once with the counter as it is now (the cancellation carried it).
          if (race) {
            await backoff(signal);
            continue;
          }
          this.#contendedUntil = Date.now() + CONTENDED_FOR_MS;
          if (outcomes.every((outcome) => outcome === undefined)) return undefined;
          // Those whose key's replay settled them just now stay settled.
          const unsettled = open.filter(({ i }) => outcomes[i] === undefined);
          const rest = await Promise.all(unsettled.map(({ post }) => this.#queued(post, signal, deadline)));
          unsettled.forEach(({ i }, j) => (outcomes[i] = rest[j]));
          continue;
        }
        if (!settled) refuseWhatDoesNotFit(open, now, outcomes);
      }
    }
  }

  /** A queued POST: writes its intent and waits for it to be committed, committing the queue when at its head. */
  async #queued(post: NewTodo, signal: AbortSignal, deadline: number): Promise<Outcome> {
    const uuid = randomUUID();
    let id = intentId();
    for (;;) {
      try {
        await this.#send('PutItem', signal, (abortSignal) =>
          this.db.send(
            new PutCommand({
              TableName: this.table,
              Item: {
                pk: COUNTER_KEY.pk,
                id,
                uuid,
                title: post.title,
                ...(post.claim && { claim: post.claim }),
                [EXPIRES]: expiresIn(INTENT_LIFETIME_MS / 1000 + 60),
              },
              // A retry of this put whose first attempt landed finds its own intent: done.
              ConditionExpression: 'attribute_not_exists(pk) OR #uuid = :uuid',
              ExpressionAttributeNames: { '#uuid': 'uuid' },
              ExpressionAttributeValues: { ':uuid': uuid },
            }),
            { abortSignal },
          ),
        );
        break;
      } catch (error) {
        if (!conditionFailed(error)) throw error;
        id = intentId();
      }
    }
    const giveUp = new AbortController();
    const retractAt = setTimeout(
      () => {
        giveUp.abort(
          new StoreUnavailable('the queue did not commit this POST before the deadline', { timedOut: true }),
        );
      },
      deadline - RETRACT_BEFORE_MS - Date.now(),
    );
    try {
      return await this.#waitFor(post, uuid, id, AbortSignal.any([signal, giveUp.signal]));
    } catch (error) {
      if (signal.aborted) throw error;
      // Near the deadline: take the intent back. Either it is gone (committed: answer with its
      // record) or it is taken back (not written: the client may retry).
      return await this.#retract(uuid, signal, error);
    } finally {
      clearTimeout(retractAt);
    }
  }

  /**
   * Waits for a queued POST's outcome: it looks at the queue (its id in the counter, or its
   * intent gone, means it was committed), and commits the queue when at its head, or when it has
   * taken over a head that has not moved for HEAD_LEASE_MS. Between looks it pauses about as long
   * as a commit takes here: every look is a request of every waiting container. (Paused for as
   * long as POSTs had waited, looks came later as the queue slowed, and the queue slowed because
   * the next head looked late: sixteen containers fell to about 30 POSTs a second for seconds.)
   */
  async #waitFor(post: NewTodo, uuid: string, id: number, signal: AbortSignal): Promise<Outcome> {
    let head: { id: number; since: number } | undefined;
    for (;;) {
      const { counter, intents } = await this.#queue(signal, false);
      const now = Date.now();
      const given = counter.recent?.[uuid];
      if (given !== undefined) {
        // Committed, as a new record: the look has told its id, and the record is this POST's title.
        return { value: { id: given, title: post.title, completed: false }, replayed: false };
      }
      const place = intents.findIndex((intent) => intent.uuid === uuid);
      const mine = place >= 0;
      const coversMine = intents.length < MAX_INTENTS || (intents.at(-1)?.id ?? 0) > id;
      if (!mine && coversMine) {
        const outcome = await this.#outcome(uuid, signal);
        if (outcome === undefined) throw new Error('a queued POST left the queue with no outcome');
        return outcome;
      }
      // A queue of more than one: others are writing too, and will be for a while.
      if (intents.length > 1) this.#contendedUntil = now + CONTENDED_FOR_MS;
      const first = intents[0];
      if (first !== undefined && head?.id !== first.id) head = { id: first.id, since: now };
      const stalled = first !== undefined && head !== undefined && now - head.since > HEAD_LEASE_MS;
      if (stalled && place !== 0 && !(await this.#takeOver(first, uuid, signal))) {
        // Another POST has taken the head over: give it a lease before trying again.
        head = { id: first.id, since: Date.now() };
      } else if (place === 0 || stalled) {
        const commitStarted = Date.now();
        // The head commits: it reads the queue again, with the titles it is to write, unless
        // the queue is its own intent alone.
        const full =
          intents.length === 1 && first?.uuid === uuid
            ? { counter, intents: [{ ...first, title: post.title, ...(post.claim && { claim: post.claim }) }] }
            : await this.#queue(signal);
        const outcome = await this.#commitQueue(full.counter, full.intents, uuid, signal);
        if (outcome !== undefined) {
          this.#learnCommit(commitStarted);
          return outcome;
        }
        continue;
      }
      // As long as a commit takes; longer while the head stays put (stalled, or its container
      // gone), so that the POSTs behind it do not look at it every few milliseconds until a lease ends.
      const headFor = head === undefined ? 0 : now - head.since;
      await pause(Math.max(2, Math.min(MAX_WAIT_MS, Math.max(this.#commitMs, headFor / 4))), signal);
    }
  }

  /**
   * Marks the stalled head's intent as taken over by the POST `by`, on condition that no other
   * POST has marked it within a lease: of the POSTs that find the head stalled, one commits for
   * it, and another may once that one has had a lease. False when another POST has it, or when
   * the head is gone meanwhile (a commit wrote it). A retry of the mark finds its own.
   */
  async #takeOver(head: Intent, by: string, signal: AbortSignal): Promise<boolean> {
    const now = Date.now();
    try {
      await this.#send('UpdateItem', signal, (abortSignal) =>
        this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: COUNTER_KEY.pk, id: head.id },
            UpdateExpression: 'SET #takenAt = :now, #takenBy = :by',
            ConditionExpression:
              'attribute_exists(pk) AND (attribute_not_exists(#takenAt) OR #takenAt < :expired OR #takenBy = :by)',
            ExpressionAttributeNames: { '#takenAt': 'takenAt', '#takenBy': 'takenBy' },
            ExpressionAttributeValues: { ':now': now, ':by': by, ':expired': now - HEAD_LEASE_MS },
          }),
          { abortSignal },
        ),
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw error;
    }
  }

  #learnCommit(started: number): void {
    this.#commitMs = 0.8 * this.#commitMs + 0.2 * (Date.now() - started);
  }

  /**
   * The counter and the intents in order: one Query of the counter's partition. With the titles
   * the commit writes, or, for a POST's look, without them: the intents' ids and uuids, and the
   * counter's place, size and recent ids. (All of `recent`, not the looking POST's entry alone: a
   * commit of the look's queue carries the earlier commits' ids on, for POSTs still to look.)
   */
  async #queue(signal: AbortSignal, titles = true): Promise<{ counter: Counter; intents: Intent[] }> {
    const { Items = [] } = await this.#send('Query', signal, (abortSignal) =>
      this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': COUNTER_KEY.pk },
          ConsistentRead: true,
          Limit: 1 + MAX_INTENTS,
          ...(!titles && {
            ProjectionExpression: 'id, #uuid, #next, #bytes, #recent',
            ExpressionAttributeNames: { '#uuid': 'uuid', '#next': 'next', '#bytes': 'bytes', '#recent': 'recent' },
          }),
        }),
        { abortSignal },
      ),
    );
    const [counter, ...intents] = Items;
    if (counter?.id !== COUNTER_KEY.id) throw new Error(`table ${this.table} has no id counter`);
    this.#known = counter as Counter;
    return { counter: counter as Counter, intents: intents as Intent[] };
  }

  /**
   * Commits the queue, in order, in one transaction: each intent's record (or its refusal, or
   * its key's replay), the intent deleted, and its outcome. Returns `mine`'s outcome when it was
   * among them; undefined when the transaction lost to another, and the queue is to be read again.
   */
  async #commitQueue(
    counter: Counter,
    queue: readonly Intent[],
    mine: string,
    signal: AbortSignal,
  ): Promise<Outcome | undefined> {
    if (counter.bytes === undefined) {
      await this.sizeList(signal);
      return undefined;
    }
    const stale = Date.now() - INTENT_LIFETIME_MS;
    let dropped = queue.filter((intent) => intent.id / 1000 < stale);
    let bytes = 0;
    // A transaction may touch an item once: of intents with one key, the first goes now, and the
    // others in a later commit, which finds the key claimed and answers them with its replay.
    const keys = new Set<string>();
    let live = queue
      .filter((intent) => intent.id / 1000 >= stale)
      .filter((intent) => !intent.claim || (!keys.has(intent.claim.key) && keys.add(intent.claim.key)))
      .filter((intent) => (bytes += committedBytes(intent)) <= MAX_TRANSACTION_BYTES || intent.uuid === mine);
    const refused = new Map<string, StoredOutcome>();
    for (;;) {
      const writes = live
        .filter((intent) => !refused.has(intent.uuid))
        .map((intent, j) => ({ intent, todo: { id: counter.next + j, title: intent.title, completed: false } }));
      const todos = writes.map(({ todo }) => todo);
      const outcomes = new Map<string, StoredOutcome>([
        ...writes.map(({ intent, todo }): [string, StoredOutcome] => [intent.uuid, { todo }]),
        ...refused,
      ]);
      const keyed = writes.filter(({ intent }) => intent.claim !== undefined);
      const items: TransactItem[] = [
        this.#counterUpdate(counter, todos, {
          ...recentSince(counter),
          ...Object.fromEntries(writes.map(({ intent, todo }) => [intent.uuid, todo.id])),
        }),
        ...todos.map((todo) => this.#recordPut(todo)),
        ...keyed.flatMap(({ intent, todo }) => claimPut(this.table, intent.claim, todo)),
        ...[...live, ...dropped].map((intent): TransactItem => ({
          Delete: {
            TableName: this.table,
            Key: { pk: COUNTER_KEY.pk, id: intent.id },
            ConditionExpression: 'attribute_exists(pk)',
          },
        })),
        ...[...outcomes].map(([uuid, outcome]): TransactItem => ({
          Put: {
            TableName: this.table,
            Item: { ...outcomeKey(uuid), ...outcome, [EXPIRES]: expiresIn(OUTCOME_LIFETIME_S) },
            // A POST with an outcome already (withdrawn, or an intent its put wrote again after
            // it was committed) is not written again: the transaction fails, and is redone without it.
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        })),
      ];
      try {
        await this.#transact(items, signal);
        log('debug', { message: 'commit', intents: live.length, dropped: dropped.length });
        this.#known = { next: counter.next + todos.length, bytes: counter.bytes + bytesOf(todos) };
        const stored = outcomes.get(mine);
        return stored === undefined ? undefined : toOutcome(stored);
      } catch (error) {
        const reasons = cancellations(error);
        if (reasons === undefined) throw error;
        if (reasons.some(({ code }) => code === 'TransactionConflict')) {
          await backoff(signal);
          return undefined;
        }
        // An intent whose key was claimed before gets the claim's answer, or is refused.
        const claimReasons = reasons.slice(1 + todos.length, 1 + todos.length + keyed.length);
        let settled = false;
        for (const [k, { intent }] of keyed.entries()) {
          const reason = claimReasons[k];
          const outcome =
            reason?.code === 'ConditionalCheckFailed' && reason.item && replayOutcome(reason.item, intent.claim);
          if (!outcome) continue;
          settled = true;
          refused.set(
            intent.uuid,
            outcome instanceof KeyReused ? { refused: 'reused' } : { todo: outcome.value, replayed: true },
          );
        }
        const [counterReason] = reasons;
        const now =
          counterReason?.code === 'ConditionalCheckFailed' ? (counterReason.item as Counter | undefined) : undefined;
        if (now !== undefined) {
          this.#known = now;
          // Someone else committed first: read the queue again.
          if (now.next !== counter.next) return undefined;
          if (!settled) {
            // The list has no room for them all: refuse, in order, those that do not fit.
            let room = MAX_LIST_BYTES - (now.bytes ?? 0);
            for (const { intent, todo } of writes) {
              const size = listBytes(todo);
              if (size <= room) room -= size;
              else refused.set(intent.uuid, { refused: 'full' });
            }
          }
          continue;
        }
        if (settled) continue;
        // Intents whose POST has an outcome already (withdrawn, or written before): deleted, unwritten.
        const outcomeReasons = reasons.slice(items.length - outcomes.size);
        const done = [...outcomes.keys()].filter((_uuid, k) => outcomeReasons[k]?.code === 'ConditionalCheckFailed');
        if (done.length > 0) {
          if (done.includes(mine)) return this.#outcome(mine, signal);
          live = live.filter((intent) => !done.includes(intent.uuid));
          dropped = [...dropped, ...queue.filter((intent) => done.includes(intent.uuid))];
          for (const uuid of done) refused.delete(uuid);
          continue;
        }
        // An intent committed by another meanwhile: read the queue again.
        if (reasons.some(({ code }, i) => code === 'ConditionalCheckFailed' && i > todos.length)) return undefined;
        throw error;
      }
    }
  }

  /**
   * A queued POST's outcome, once its intent is committed (undefined until then): for what the
   * counter's `recent` does not tell (a replay, a refusal, an id from an older commit).
   */
  async #outcome(uuid: string, signal: AbortSignal): Promise<Outcome | undefined> {
    const { Item } = await this.#send('GetItem', signal, (abortSignal) =>
      this.db.send(new GetCommand({ TableName: this.table, Key: outcomeKey(uuid), ConsistentRead: true }), {
        abortSignal,
      }),
    );
    if (Item === undefined) return undefined;
    return toOutcome(Item as StoredOutcome);
  }

  /**
   * Takes a queued POST back, unless it was committed meanwhile (then its outcome): by writing
   * its outcome first, as "withdrawn", on condition that it has none. A commit then leaves its
   * intent unwritten, wherever it is: still queued, or written again by a copy of its put that
   * the network kept back (lib/dynamodb-ids.ts, #commitQueue).
   */
  async #retract(uuid: string, signal: AbortSignal, reason: unknown): Promise<Outcome> {
    try {
      await this.#send('PutItem', signal, (abortSignal) =>
        this.db.send(
          new PutCommand({
            TableName: this.table,
            Item: { ...outcomeKey(uuid), refused: 'withdrawn', [EXPIRES]: expiresIn(OUTCOME_LIFETIME_S) },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
          { abortSignal },
        ),
      );
    } catch (error) {
      if (!conditionFailed(error)) throw error;
      const outcome = await this.#outcome(uuid, signal);
      if (outcome !== undefined) return outcome;
      throw new Error('a queued POST left the queue with no outcome', { cause: error });
    }
    throw reason;
  }

  /**
   * The counter's part of a transaction that writes `todos`: conditional on no one having moved
   * it, and on room in the list. A queue commit leaves the ids it gave in `recent`; a POST alone,
   * which no one waits for, clears them, so that the counter stays small while no queue forms.
   */
  #counterUpdate(counter: Counter, todos: readonly Todo[], recent?: Counter['recent']): TransactItem {
    const bytes = bytesOf(todos);
    return {
      Update: {
        TableName: this.table,
        Key: COUNTER_KEY,
        UpdateExpression: `SET #next = :after, #bytes = #bytes + :bytes${recent ? ', #recent = :recent' : ' REMOVE #recent'}`,
        ConditionExpression: '#next = :first AND #bytes <= :room',
        ExpressionAttributeNames: { '#next': 'next', '#bytes': 'bytes', '#recent': 'recent' },
        ExpressionAttributeValues: {
          ':first': counter.next,
          ':after': counter.next + todos.length,
          ':bytes': bytes,
          ':room': MAX_LIST_BYTES - bytes,
          ...(recent && { ':recent': recent }),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }

  #recordPut(todo: Todo): TransactItem {
    return {
      Put: {
        TableName: this.table,
        Item: { pk: TODO_PARTITION, ...todo },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
  }

  #send<T extends { $metadata: { attempts?: number } }>(
    operation: string,
    signal: AbortSignal,
    request: (abortSignal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    return this.dynamo.send(operation, signal, request);
  }

  /** One transaction with a token of its own, which the SDK's retries of it share (lib/dynamodb-store.ts). */
  async #transact(items: TransactItem[], signal: AbortSignal): Promise<void> {
    const token = randomUUID();
    await this.dynamo.send('TransactWriteItems', signal, (abortSignal) =>
      this.db.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: token }), { abortSignal }),
    );
  }
}

/** What committing an intent writes of its title: in its record, its outcome and, with a key, the claim. */
const committedBytes = (intent: Intent) =>
  (Buffer.byteLength(intent.title) + ITEM_OVERHEAD_BYTES) * (intent.claim ? 3 : 2);

/** Of the ids the counter keeps from earlier commits, those within RECENT_IDS of its next. */
const recentSince = ({ next, recent = {} }: Counter): Record<string, number> =>
  Object.fromEntries(Object.entries(recent).filter(([, id]) => id >= next - RECENT_IDS));

const bytesOf = (todos: readonly Todo[]) => todos.reduce((sum, todo) => sum + listBytes(todo), 0);

/**
 * The answer a claimed key keeps, as an outcome: its replay, or KeyReused; undefined when the
 * claim has just expired (the write may then claim the key anew).
 */
function replayOutcome(kept: Item, claim: IdempotencyClaim | undefined): Written<Todo> | KeyReused | undefined {
  try {
    const replay = replayOf(kept, claim);
    return replay?.value && { value: replay.value, replayed: true };
  } catch (error) {
    if (error instanceof KeyReused) return error;
    throw error;
  }
}

/** With the list as `counter` has it, refuses (ListFull) each open POST, in order, that would not fit. */
function refuseWhatDoesNotFit(
  open: readonly { post: NewTodo; i: number }[],
  counter: Counter,
  outcomes: (Outcome | undefined)[],
): void {
  let room = MAX_LIST_BYTES - (counter.bytes ?? 0);
  let id = counter.next;
  for (const { post, i } of open) {
    const size = listBytes({ id, title: post.title });
    if (size <= room) {
      room -= size;
      id++;
    } else {
      outcomes[i] = new ListFull();
    }
  }
}
