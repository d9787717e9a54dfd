import { afterEach, describe, expect, it } from '@jest/globals';
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { itemSize, type AttributeMap } from '../../harness/aws-dynamodb/requests';
import { bodyOf, context, event, invoke } from '../support/event';
import { both, mentions, operation, startFaultProxy, type FaultProxy } from '../../harness/fault-proxy';
import { handlersOn } from '../support/routes';
import type { DynamoDb } from '../../lib/dynamodb/client';
import { StoreUnavailable } from '../../lib/errors';
import { PACING, newQueueView, type QueueView } from '../../lib/dynamodb/pacing';
import { outcomeKey, payloadOf, queuePost } from '../../lib/dynamodb/queue';
import { MAX_INTENTS } from '../../lib/dynamodb/queue-plan';
import { claimKey } from '../../lib/dynamodb/claims';
import { COUNTER_KEY, EXPIRES } from '../../lib/dynamodb/table';
import { MAX_LIST_BYTES } from '../../lib/list-size';
import { MAX_TITLE_LENGTH, SEED_TODOS } from '../../lib/todos';
import { eventually } from '../../harness/wait';
import { localClient } from '../support/dynamodb-local-process';
import { fullRequest, recordFrom } from '../support/todo-fields';
import { newTodo } from '../../lib/input';
import { fakeRuntime } from '../support/fake-runtime';
import {
  dynamoDbStore,
  dynamoDbStoreAt,
  freshTable,
  localDocumentClient,
  testDynamoDbEndpoint,
} from '../support/stores';
import { recordsOf } from '../support/records';

/**
 * The queue of POSTs (lib/dynamodb/queue.ts) as containers meet in it: each container a store of
 * its own behind a fault proxy of its own, on one table of DynamoDB Local. What a queued POST
 * costs DynamoDB, and how the queue gets past a head that does not commit.
 */

/** Each test's POSTs: a few round trips each, and at most a few head leases of waiting. */
const WITHIN_MS = 4 * PACING.headLeaseMs + 15_000;
/** One step of a test that the next waits for: a round trip or two, on a busy machine. */
const STEP_MS = 5_000;

let proxies: FaultProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.map((started) => started.close()));
  proxies = [];
});

/** A container on `table`: its store has read the counter, and its network is the test's. */
async function container(table: string) {
  const network = await startFaultProxy(testDynamoDbEndpoint());
  proxies.push(network);
  const store = dynamoDbStoreAt(network.endpoint, table);
  await recordsOf(store);
  const { createTodo } = handlersOn(store);
  /** A POST that sets every field a POST may set (todo-fields.ts), with this title. */
  const post = (title: string) => invoke(createTodo, event({ method: 'POST', body: fullRequest(title) }), context());
  return { network, store, post };
}

/** The record a POST of `post` above, titled `title`, makes with `id`: every field compared, not its title alone. */
const recordOf = (title: string, id: number) => recordFrom(fullRequest(title), id);

/** A queued POST's intent as the store writes it (lib/dynamodb/queue.ts), its payload in it. */
function queuedIntent(uuid: string, id: number, title: string) {
  const payload = payloadOf({ request: newTodo(fullRequest(title)), claim: undefined });
  return { pk: COUNTER_KEY.pk, id, uuid, payload, [EXPIRES]: Math.ceil(Date.now() / 1000) + 600 };
}

/**
 * Containers that have each read the counter, which another container then moves: the next POST
 * of each finds it has company, and queues.
 */
async function contendedContainers(count: number) {
  const table = await freshTable();
  const containers = await Promise.all(Array.from({ length: count }, () => container(table)));
  await dynamoDbStore(table).create({ title: 'from another container' });
  return { table, containers };
}

/** The records the table starts with here: the seed, and the other container's POST. */
const BEFORE = [
  ...SEED_TODOS.map((todo) => expect.objectContaining({ id: todo.id })),
  expect.objectContaining({ id: 3 }),
];

describe('the queue of POSTs, across containers', () => {
  it(
    'a POST that another container commits learns its id from its look at the queue: it reads no outcome',
    async () => {
      const {
        containers: [head, waiter],
      } = await contendedContainers(2);
      if (head === undefined || waiter === undefined) throw new Error('two containers');
      // The head's first look waits until the other POST has queued behind it: it then commits both.
      let release: () => void = () => undefined;
      head.network.inject(operation('Query'), { holdRequest: new Promise<void>((resolve) => (release = resolve)) });
      const headFrom = head.network.seen.length;
      const first = head.post('the head’s own');
      await eventually(() => head.network.seen.slice(headFrom).some(operation('Query')), {
        within: STEP_MS,
        what: 'the head’s first look',
      });
      const from = waiter.network.seen.length;
      let queued = false;
      void waiter.network
        .landed(both(operation('PutItem'), mentions('queued behind the head')))
        .then(() => (queued = true));
      const second = waiter.post('queued behind the head');
      await eventually(() => queued, { within: STEP_MS, what: 'the other POST’s intent' });
      release();
      expect([(await first).statusCode, bodyOf(await second)]).toEqual([201, recordOf('queued behind the head', 5)]);
      const waiterSent = waiter.network.seen.slice(from);
      // It was committed by the head, with the head's own, and found its id in the counter.
      const commitsTheWaiter = both(operation('TransactWriteItems'), mentions('queued behind the head'));
      expect(head.network.seen.filter(commitsTheWaiter).filter(mentions('the head’s own'))).toHaveLength(1);
      expect(waiterSent.filter(operation('TransactWriteItems')).filter(mentions('the head’s own'))).toEqual([]);
      expect(waiterSent.filter(operation('GetItem'))).toEqual([]);
      expect(await recordsOf(head.store)).toEqual([
        ...BEFORE,
        recordOf('the head’s own', 4),
        recordOf('queued behind the head', 5),
      ]);
      // The head waited behind no one (no lease), and knows the counter it moved: its next POST is one transaction.
      const again = head.network.seen.length;
      expect(bodyOf(await head.post('the head’s next'))).toEqual(recordOf('the head’s next', 6));
      expect(head.network.seen.slice(again).map(({ operation: sent }) => sent)).toEqual(['TransactWriteItems']);
    },
    WITHIN_MS,
  );

  it(
    'a look at the queue reads the counter and one intent: behind the longest title, in the longest UTF-8, under 8 KB (two read units)',
    async () => {
      const {
        table,
        containers: [head, waiter],
      } = await contendedContainers(2);
      if (head === undefined || waiter === undefined) throw new Error('two containers');
      // The head's intent stays at the head while its first look is held.
      let release: () => void = () => undefined;
      head.network.inject(operation('Query'), { holdRequest: new Promise<void>((resolve) => (release = resolve)) });
      // The longest title a client may set, each character four bytes of UTF-8: its payload rides in its intent.
      const big = '🚀'.repeat(MAX_TITLE_LENGTH);
      const headFrom = head.network.seen.length;
      const first = head.post(big);
      await eventually(() => head.network.seen.slice(headFrom).some(operation('Query')), {
        within: STEP_MS,
        what: 'the head’s first look',
      });
      const from = waiter.network.seen.length;
      const second = waiter.post('looks behind a big one');
      await eventually(() => waiter.network.seen.slice(from).some(operation('Query')), {
        within: STEP_MS,
        what: 'the waiter’s first look',
      });
      const look = waiter.network.seen.slice(from).find(operation('Query'));
      if (look === undefined) throw new Error('no look');
      // What DynamoDB reads for that look, and charges for: its items whole, before any projection.
      const asRead = JSON.parse(look.body) as QueryCommandInput;
      delete asRead.ProjectionExpression;
      const client = localClient(testDynamoDbEndpoint());
      const items = (await client.send(new QueryCommand(asRead))).Items ?? [];
      client.destroy();
      expect(items.map((item) => item.pk?.S)).toEqual([COUNTER_KEY.pk, COUNTER_KEY.pk]);
      expect(items.reduce((sum, item) => sum + itemSize(item as unknown as AttributeMap), 0)).toBeLessThan(2 * 4_096);
      // Each POST wrote its intent alone: no payload goes apart.
      expect(head.network.seen.slice(headFrom).filter(operation('PutItem'))).toHaveLength(1);
      expect(waiter.network.seen.slice(from).filter(operation('PutItem'))).toHaveLength(1);
      release();
      expect([bodyOf(await first), bodyOf(await second)]).toEqual([
        recordOf(big, 4),
        recordOf('looks behind a big one', 5),
      ]);
      expect(await recordsOf(dynamoDbStore(table))).toEqual([
        ...BEFORE,
        recordOf(big, 4),
        recordOf('looks behind a big one', 5),
      ]);
    },
    WITHIN_MS,
  );

  it(
    'a head that does not commit is taken over by one POST behind it, not by all of them at once',
    async () => {
      const { table, containers } = await contendedContainers(3);
      // The head: an intent whose container has stalled, written as a POST's would be.
      const head = queuedIntent('a stalled container', Date.now() * 1000, 'stalled head');
      await localDocumentClient(testDynamoDbEndpoint()).send(new PutCommand({ TableName: table, Item: head }));
      // A commit of the head takes a while, as under load: every POST that takes over meanwhile races it.
      const commitsHead = both(operation('TransactWriteItems'), mentions('stalled head'));
      for (const { network } of containers) network.inject(commitsHead, { holdRequestMs: 300 }, Infinity);
      const answers = await Promise.all(containers.map(({ post }, i) => post(`behind ${i}`)));
      expect(answers.map((answer) => answer.statusCode)).toEqual([201, 201, 201]);
      // One transaction wrote the stalled head's record: no other POST's attempt raced it and failed.
      const commits = containers.flatMap(({ network }) => network.seen.filter(commitsHead));
      expect(commits).toHaveLength(1);
      const listed = await recordsOf(dynamoDbStore(table));
      expect(listed.slice(0, 4)).toEqual([...BEFORE, recordOf('stalled head', 4)]);
      // The three behind it, in whatever order their POSTs were committed: each whole.
      const behind = listed.slice(4);
      expect(behind.map((todo) => todo.id)).toEqual([5, 6, 7]);
      expect(behind).toEqual(behind.map((todo) => recordOf(todo.title, todo.id)));
      expect(behind.map((todo) => todo.title).sort()).toEqual(['behind 0', 'behind 1', 'behind 2']);
    },
    WITHIN_MS,
  );

  it(
    'a run of withdrawn POSTs at the head does not hold the queue: a POST behind ten of them is written in time',
    async () => {
      const {
        table,
        containers: [behind],
      } = await contendedContainers(1);
      if (behind === undefined) throw new Error('a container');
      // Ten POSTs that took themselves back at their deadline: each left its intent, and its outcome "withdrawn".
      const documents = localDocumentClient(testDynamoDbEndpoint());
      const expires = Math.ceil(Date.now() / 1000) + 600;
      for (let i = 0; i < 10; i++) {
        const uuid = `withdrawn ${i}`;
        const intent = queuedIntent(uuid, Date.now() * 1000 + i, uuid);
        await documents.send(new PutCommand({ TableName: table, Item: intent }));
        const outcome = { ...outcomeKey(uuid), refused: 'withdrawn', [EXPIRES]: expires };
        await documents.send(new PutCommand({ TableName: table, Item: outcome }));
      }
      expect(bodyOf(await behind.post('behind ten withdrawn'))).toEqual(recordOf('behind ten withdrawn', 4));
      // The withdrawn ones are dropped, unwritten.
      expect(await recordsOf(behind.store)).toEqual([...BEFORE, recordOf('behind ten withdrawn', 4)]);
    },
    WITHIN_MS,
  );
});

describe('when a container queues its POST', () => {
  it(
    'a new container’s first POST queues, though its seed read the counter; once that POST was written alone, the next is one transaction',
    async () => {
      const { network, post } = await container(await freshTable());
      const from = network.seen.length;
      expect(bodyOf(await post('first'))).toEqual(recordOf('first', 3));
      // Its intent, a look, the queue's read, the commit: the seed's counter cannot tell whether POSTs wait.
      expect(network.seen.slice(from).map(({ operation: sent }) => sent)).toEqual([
        'PutItem',
        'Query',
        'Query',
        'TransactWriteItems',
      ]);
      const next = network.seen.length;
      expect(bodyOf(await post('second'))).toEqual(recordOf('second', 4));
      expect(network.seen.slice(next).map(({ operation: sent }) => sent)).toEqual(['TransactWriteItems']);
    },
    WITHIN_MS,
  );

  it(
    'a new container’s keyed POST to a full list: the commit refuses it (409) and claims its key, so its retry is the 409 again once a DELETE made room',
    async () => {
      const table = await freshTable();
      const { network, store } = await container(table);
      // The list a few bytes short of full: the counter's size is what every write is held to.
      const documents = localDocumentClient(testDynamoDbEndpoint());
      await documents.send(
        new UpdateCommand({
          TableName: table,
          Key: COUNTER_KEY,
          UpdateExpression: 'SET #bytes = :bytes',
          ExpressionAttributeNames: { '#bytes': 'bytes' },
          ExpressionAttributeValues: { ':bytes': MAX_LIST_BYTES - 10 },
        }),
      );
      const { createTodo, deleteTodo } = handlersOn(store);
      const key = '"one too many"';
      const keyed = event({ method: 'POST', body: { title: 'one too many' }, headers: { 'idempotency-key': key } });
      const from = network.seen.length;
      expect((await invoke(createTodo, keyed, context())).statusCode).toBe(409);
      expect(network.seen[from]?.operation).toBe('PutItem');
      const claim = await documents.send(new GetCommand({ TableName: table, Key: claimKey(key) }));
      expect(claim.Item).toMatchObject({ listFull: true });
      expect((await invoke(deleteTodo, event({ method: 'DELETE', id: '2' }), context())).statusCode).toBe(200);
      const retry = await invoke(createTodo, keyed, context());
      expect([retry.statusCode, retry.headers?.['idempotent-replayed']]).toEqual([409, 'true']);
      expect(await recordsOf(store)).toEqual([expect.objectContaining({ id: 1 })]);
    },
    WITHIN_MS,
  );

  it('queues while it knows no counter or within a lease of another container’s write; not for the `recent` it last saw', () => {
    const now = 1_000_000;
    const view = (counter: QueueView['counter'], othersSeenAt?: number): QueueView => ({
      counter,
      othersSeenAt,
      commitMs: 20,
    });
    const lease = PACING.headLeaseMs;
    expect(PACING.queues(view(undefined), now)).toBe(true);
    expect(PACING.queues(view({ next: 5, bytes: 0 }, now + 1 - lease), now)).toBe(true);
    // At 16 busy containers, queueing for `recent` made every POST a queued one: 122 a second against 129 before it.
    expect(PACING.queues(view({ next: 5, bytes: 0, recent: { other: 4 } } as QueueView['counter']), now)).toBe(false);
    expect(PACING.queues(view({ next: 5, bytes: 0 }, now - lease), now)).toBe(false);
  });
});

describe('a POST far back in the queue, on a clock of the test’s own (no Java)', () => {
  const START = Date.UTC(2026, 10, 28);
  /**
   * The queue as scripted: 250 intents ahead of the POST, a commit of MAX_INTENTS of them every
   * COMMIT_MS by heads of their own; the eleventh takes the last ten and the POST's.
   */
  const AHEAD = 250;
  const COMMIT_MS = 50;
  /** One intent a millisecond before the POST's, in arrival order: ids are arrival times. */
  const FAR_BACK = Array.from({ length: AHEAD }, (_, i) => (START - AHEAD + i) * 1000);

  /**
   * The POST behind intents of ids `ahead`, `perCommit` of them committed every `commitMs` (the
   * commit that takes the last takes the POST's too), its deadline `deadline` ms after the start; what it
   * sent apart from looks.
   */
  function queued({ ahead = FAR_BACK, perCommit = MAX_INTENTS, commitMs = COMMIT_MS, deadline = 9_000 } = {}) {
    const { clock, runtime } = fakeRuntime(START, () => 'mine');
    // Each with its payload inline: short titles.
    const queue = ahead.map((id, i) => ({
      id,
      uuid: `ahead ${i}`,
      payload: payloadOf({ request: { title: `ahead ${i}` }, claim: undefined }),
    }));
    let mine: Record<string, unknown> | undefined;
    let looks = 0;
    const retracted: string[] = [];
    const refuse = () => Promise.reject(new Error('a waiting POST far back sends no such request'));
    const dynamodb: DynamoDb = {
      putItem: ({ Item }) => {
        if (Item.pk === COUNTER_KEY.pk) mine = Item;
        else retracted.push(`outcome ${String(Item.refused)}`);
        return Promise.resolve();
      },
      query: ({ Limit = Infinity }) => {
        looks++;
        const taken = Math.floor((clock.now - START) / commitMs) * perCommit;
        const all = mine === undefined ? queue : [...queue, mine];
        const committed = mine !== undefined && taken >= queue.length;
        const recent = mine !== undefined && committed ? { [String(mine.uuid)]: 3 + queue.length } : {};
        const counter = { ...COUNTER_KEY, next: 3 + (committed ? queue.length + 1 : taken), bytes: 0, recent };
        // The counter and the intents left, to the Query's Limit: the page is cut where intents remain past it.
        const page = all.slice(taken, taken + Limit - 1);
        return Promise.resolve({
          items: [counter, ...page],
          lastKey: all.length > taken + page.length ? page.at(-1) : undefined,
        });
      },
      getItem: refuse,
      updateItem: refuse,
      deleteItem: () => {
        retracted.push('intent deleted');
        return Promise.resolve();
      },
      transactWriteItems: refuse,
    };
    const answer = queuePost(
      { name: 'todos', dynamodb, runtime, maxListBytes: MAX_LIST_BYTES },
      newQueueView(),
      PACING,
      { request: { title: 'far back' }, claim: undefined },
      new AbortController().signal,
      START + deadline,
    );
    return { clock, answer, looks: () => looks, retracted };
  }

  it('looks about once for each commit that must land before it, and learns of its own within a look of it', async () => {
    const { clock, answer, looks } = queued();
    // Its own intent is taken by the eleventh commit; a look every commitMs (20 ms) until then is 28 looks.
    const written = (Math.floor(AHEAD / MAX_INTENTS) + 1) * COMMIT_MS;
    let answeredAt: number | undefined;
    void answer.then(() => {
      answeredAt = clock.now;
    });
    await clock.tickAsync(written + 100);
    await expect(answer).resolves.toEqual({ value: expect.objectContaining({ id: 3 + AHEAD }), replayed: false });
    expect(looks()).toBeLessThanOrEqual(16);
    // Near the head it looks every commitMs, as before: the answer comes a pause after its commit.
    expect(answeredAt).toBeLessThanOrEqual(START + written + 20);
  });

  it('takes itself back as soon as the commits ahead of it cannot land before its deadline, not at the deadline', async () => {
    // 250 intents ahead at 24 a 50 ms take about 520 ms; it has 300 (its deadline 600 ms on, less RETRACT_BEFORE_MS).
    const { clock, answer, retracted } = queued({ deadline: 600 });
    let answeredAt: number | undefined;
    void answer.then(
      () => undefined,
      () => (answeredAt = clock.now),
    );
    await clock.tickAsync(1_000);
    await expect(answer).rejects.toBeInstanceOf(StoreUnavailable);
    expect(retracted).toEqual(['outcome withdrawn', 'intent deleted']);
    // Once it has seen the queue move twice (a commit's time apart), not at 300 ms.
    expect(answeredAt).toBeLessThanOrEqual(START + 3 * COMMIT_MS);
  });

  it('waits on behind a burst of intents and a gap, where the ids alone read as a long queue: the next commit takes it', async () => {
    // Eight POSTs half a second before this one, microseconds apart, written one a commit of 800 ms: the head crosses
    // one microsecond a commit, so the ids read as 500,000 intents ahead; the queue's first intents show seven.
    const burst = Array.from({ length: 8 }, (_, i) => (START - 500) * 1000 + i);
    const { clock, answer, retracted } = queued({ ahead: burst, perCommit: 1, commitMs: 800 });
    await clock.tickAsync(9 * 800 + 100);
    await expect(answer).resolves.toEqual({
      value: expect.objectContaining({ id: 3 + burst.length }),
      replayed: false,
    });
    expect(retracted).toEqual([]);
  });
});
