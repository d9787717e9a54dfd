import { afterEach, describe, expect, it } from '@jest/globals';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { bodyOf, context, event, invoke, type EventOptions } from '../../harness/event';
import {
  both,
  mentions,
  operation,
  startFaultProxy,
  transactionConflict,
  type FaultProxy,
  type Match,
  type SeenRequest,
} from '../../harness/fault-proxy';
import { handlersOn } from '../../harness/routes';
import { REQUEST_TIMEOUT_MS } from '../../lib/dynamodb-client';
import { EXPIRES, claimKey } from '../../lib/dynamodb-table';
import type { HttpResponse } from '../../lib/http';
import { idempotencyClaim } from '../../lib/idempotency';
import { expectCreated } from '../support/expectations';
import {
  dynamoDbStore,
  dynamoDbStoreAt,
  freshTable,
  localDocumentClient,
  testDynamoDbEndpoint,
} from '../support/stores';

/**
 * Every write happens once, on the DynamoDB store, with a fault proxy between the store's
 * client and DynamoDB Local. A write the network holds back past the SDK's request timeout is
 * sent again by the SDK; the retry is applied and answered, later writes follow, and then the
 * first attempt lands: it must change nothing. And a client that retries with an
 * Idempotency-Key gets the first answer, whatever the faults did to it.
 */

/** Any write, however the store words it: a plain item write or a transaction. */
const write: Match = ({ operation: name }) =>
  ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems'].includes(name);
const keyHeader = (value: string) => ({ 'idempotency-key': `"${value}"` });
const ids = (todos: { id: number }[]) => todos.map((todo) => todo.id);

/** An attempt held past the SDK's timeout, its retry, a later write: the SDK's timeout and a few round trips. */
const LATE_WITHIN_MS = 4 * REQUEST_TIMEOUT_MS + 15_000;

let proxies: FaultProxy[] = [];
async function proxy(): Promise<FaultProxy> {
  const started = await startFaultProxy(testDynamoDbEndpoint());
  proxies.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(proxies.map((started) => started.close()));
  proxies = [];
});

/** A container's store on a new, seeded table, reached through a fault proxy of its own, and its handlers. */
async function containerBehindProxy() {
  const network = await proxy();
  const table = await freshTable();
  const store = dynamoDbStoreAt(network.endpoint, table);
  await store.list();
  const handlers = handlersOn(store);
  const send = (options: EventOptions, timeoutMs?: number): Promise<HttpResponse> => {
    const name =
      options.method === 'POST'
        ? 'createTodo'
        : options.method === 'PUT'
          ? 'updateTodo'
          : options.method === 'DELETE'
            ? 'deleteTodo'
            : 'getTodo';
    return invoke(handlers[name], event(options), context(timeoutMs === undefined ? {} : { timeoutMs }));
  };
  return { network, table, store, send };
}

/**
 * What DynamoDB answers a keyed transaction when the key's claim (its last action) was held by an
 * earlier request whose claim expires in the very second the condition is checked: cancelled, the
 * claim's condition failed, carrying a claim of this very request that has just expired.
 */
function claimExpiredMeanwhile(request: SeenRequest) {
  const { TransactItems = [] } = JSON.parse(request.body) as {
    TransactItems?: { Put?: { Item?: Record<string, unknown> } }[];
  };
  const claim = TransactItems.at(-1)?.Put?.Item;
  if (claim === undefined) throw new Error('a keyed transaction whose last action is not its claim');
  const reasons = TransactItems.map((_item, i) =>
    i === TransactItems.length - 1
      ? {
          Code: 'ConditionalCheckFailed',
          Message: 'The conditional request failed',
          Item: { ...claim, [EXPIRES]: { N: String(Math.floor(Date.now() / 1000) - 1) } },
        }
      : { Code: 'None' },
  );
  return {
    status: 400,
    body: {
      __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
      Message: 'Transaction cancelled, please refer cancellation reasons for specific reasons',
      CancellationReasons: reasons,
    },
  };
}

/**
 * Holds the first request that `match`es until `land()`; `land()` releases it and resolves once
 * DynamoDB has answered it.
 */
function holdFirst(network: FaultProxy, match: Match): { land: () => Promise<unknown> } {
  let release: (value?: unknown) => void = () => undefined;
  network.inject(match, { holdRequest: new Promise((resolve) => (release = resolve)) });
  return {
    land: () => {
      const landed = network.landed(match);
      release();
      return landed;
    },
  };
}

describe('a write that lands after its retry and after a later write changes nothing', () => {
  it(
    'PUT: the later PUT stands (it did not: the first attempt brought the older title back)',
    async () => {
      const { network, store, send } = await containerBehindProxy();
      const first = both(write, mentions('the first title'));
      const held = holdFirst(network, first);
      const answer = await send({ method: 'PUT', id: '1', body: { title: 'the first title' } });
      expect(bodyOf(answer)).toEqual({ id: 1, title: 'the first title', completed: false });
      // The SDK gave up on the held attempt and sent it again.
      expect(network.seen.filter(first)).toHaveLength(2);
      expect(bodyOf(await send({ method: 'PUT', id: '1', body: { title: 'the later title' } }))).toMatchObject({
        title: 'the later title',
      });
      await held.land();
      expect(await store.get(1)).toEqual({ id: 1, title: 'the later title', completed: false });
    },
    LATE_WITHIN_MS,
  );

  it(
    'POST: no second record, and a later PUT of the record stands',
    async () => {
      const { network, store, send } = await containerBehindProxy();
      const first = both(write, mentions('posted once'));
      const held = holdFirst(network, first);
      expectCreated(await send({ method: 'POST', body: { title: 'posted once' } }), {
        id: 3,
        title: 'posted once',
        completed: false,
      });
      await send({ method: 'PUT', id: '3', body: { title: 'changed later' } });
      await held.land();
      expect(await store.list()).toEqual([
        expect.objectContaining({ id: 1 }),
        expect.objectContaining({ id: 2 }),
        { id: 3, title: 'changed later', completed: false },
      ]);
    },
    LATE_WITHIN_MS,
  );

  it(
    'DELETE: the record stays deleted, and a record created later stays',
    async () => {
      const { network, store, send } = await containerBehindProxy();
      const first = both(operation('TransactWriteItems'), mentions('"Delete"'));
      const held = holdFirst(network, first);
      expect((await send({ method: 'DELETE', id: '2' })).body).toBe('Deleted');
      expectCreated(await send({ method: 'POST', body: { title: 'created later' } }), {
        id: 3,
        title: 'created later',
        completed: false,
      });
      await held.land();
      expect(ids(await store.list())).toEqual([1, 3]);
    },
    LATE_WITHIN_MS,
  );

  it(
    'the Idempotency-Key’s record: its answer stays the first, and a later keyed write stands',
    async () => {
      const { network, store, send } = await containerBehindProxy();
      const first = both(write, mentions('keyed first'));
      const held = holdFirst(network, first);
      const request = { method: 'PUT', id: '1', body: { title: 'keyed first' }, headers: keyHeader('first') } as const;
      const answer = await send(request);
      await send({ method: 'PUT', id: '1', body: { title: 'keyed later' }, headers: keyHeader('later') });
      await held.land();
      expect(await store.get(1)).toMatchObject({ title: 'keyed later' });
      const replay = await send(request);
      expect(replay).toEqual({ ...answer, headers: { ...answer.headers, 'idempotent-replayed': 'true' } });
    },
    LATE_WITHIN_MS,
  );

  it(
    'a queued POST’s intent: written again after its POST was, it is dropped, not written twice',
    async () => {
      const { network, table, store, send } = await containerBehindProxy();
      // Another container moves the counter: this one's next POST finds it has company, and queues.
      await dynamoDbStore(table).create('from another container');
      const intent = both(operation('PutItem'), mentions('queued once'));
      const held = holdFirst(network, intent);
      expectCreated(await send({ method: 'POST', body: { title: 'queued once' } }), {
        id: 4,
        title: 'queued once',
        completed: false,
      });
      await send({ method: 'PUT', id: '4', body: { title: 'queued, then changed' } });
      await held.land();
      // Its retry was committed, so the late attempt is an intent again, with no POST waiting.
      expect(network.seen.filter(intent)).toHaveLength(2);
      // The other container moves the counter again: the next POST here queues, and commits
      // the queue, the old intent in it. It is dropped: its POST has its outcome.
      await dynamoDbStore(table).create('again from another container');
      expectCreated(await send({ method: 'POST', body: { title: 'after' } }), {
        id: 6,
        title: 'after',
        completed: false,
      });
      expect(network.seen.filter(both(operation('PutItem'), mentions('after')))).toHaveLength(1);
      expect((await store.list()).map(({ id, title }) => [id, title])).toEqual([
        [1, expect.any(String)],
        [2, expect.any(String)],
        [3, 'from another container'],
        [4, 'queued, then changed'],
        [5, 'again from another container'],
        [6, 'after'],
      ]);
    },
    LATE_WITHIN_MS,
  );

  it(
    'a queued POST’s intent whose acknowledgement is lost: the SDK’s retry finds it there, and it is written once',
    async () => {
      const { network, table, store, send } = await containerBehindProxy();
      await dynamoDbStore(table).create('from another container');
      const intent = both(operation('PutItem'), mentions('acknowledged late'));
      network.inject(intent, { dropAnswer: true });
      expectCreated(await send({ method: 'POST', body: { title: 'acknowledged late' } }), {
        id: 4,
        title: 'acknowledged late',
        completed: false,
      });
      expect(network.seen.filter(intent)).toHaveLength(2);
      expect((await store.list()).map(({ id, title }) => [id, title])).toEqual([
        [1, expect.any(String)],
        [2, expect.any(String)],
        [3, 'from another container'],
        [4, 'acknowledged late'],
      ]);
    },
    LATE_WITHIN_MS,
  );
});

describe('a client that retries with an Idempotency-Key', () => {
  it(
    'gets 503 when every acknowledgement of its POST is lost though the record is stored; its retry gets that record’s 201',
    async () => {
      const { network, store, send } = await containerBehindProxy();
      const commit = both(operation('TransactWriteItems'), mentions('acknowledged never'));
      network.inject(commit, { dropAnswer: true }, Infinity);
      const request = { method: 'POST', body: { title: 'acknowledged never' }, headers: keyHeader('lost') } as const;
      const lost = await send(request);
      expect(lost.statusCode).toBe(503);
      expect(await store.list()).toContainEqual({ id: 3, title: 'acknowledged never', completed: false });
      network.heal();
      const retried = await send(request);
      expect(retried.statusCode).toBe(201);
      expect(bodyOf(retried)).toEqual({ id: 3, title: 'acknowledged never', completed: false });
      expect(retried.headers).toMatchObject({ location: '/todos/3', 'idempotent-replayed': 'true' });
      expect((await store.list()).filter((todo) => todo.title === 'acknowledged never')).toHaveLength(1);
    },
    LATE_WITHIN_MS,
  );

  it('makes exactly 100 records of 500 concurrent POSTs carrying 100 keys, 5 each, over 10 containers; the 5 answers of a key agree', async () => {
    const table = await freshTable();
    // Each container with a client of its own, as on Lambda: ten stores on one client would share its 50 sockets.
    const containers = Array.from(
      { length: 10 },
      () => handlersOn(dynamoDbStoreAt(testDynamoDbEndpoint(), table)).createTodo,
    );
    const answers = await Promise.all(
      Array.from({ length: 500 }, async (_, i) => {
        const key = i % 100;
        const container = containers[i % containers.length];
        if (container === undefined) throw new Error('no container');
        const response = await invoke(
          container,
          event({ method: 'POST', body: { title: `key ${key}` }, headers: keyHeader(`burst-${key}`) }),
        );
        return { key, response };
      }),
    );
    for (const { response } of answers) expect(response.statusCode).toBe(201);
    for (let key = 0; key < 100; key++) {
      const bodies = new Set(answers.filter((answer) => answer.key === key).map(({ response }) => response.body));
      expect(bodies.size).toBe(1);
    }
    const records = (await dynamoDbStore(table).list()).filter((todo) => todo.id > 2);
    expect(records).toHaveLength(100);
    expect(new Set(records.map((todo) => todo.title)).size).toBe(100);
    expect(ids(records)).toEqual(Array.from({ length: 100 }, (_, i) => 3 + i));
  }, 120_000);

  it('gets 409 with Retry-After when another request with its key holds it to the deadline (a TransactionConflict on the key)', async () => {
    const { network, store, send } = await containerBehindProxy();
    const keyed = both(operation('TransactWriteItems'), mentions('KEY#'));
    network.inject(keyed, { answerWith: transactionConflict((i, count) => i === count - 1) }, Infinity);
    const response = await send(
      { method: 'PUT', id: '1', body: { title: 'contended' }, headers: keyHeader('busy') },
      3_000,
    );
    expect(response.statusCode).toBe(409);
    expect(response.headers).toEqual({ 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
    expect(bodyOf(response)).toEqual({ error: 'A request with this Idempotency-Key is in progress: retry later' });
    expect(await store.get(1)).not.toMatchObject({ title: 'contended' });
  }, 30_000);

  it.each([
    ['PUT', { method: 'PUT', id: '1', body: { title: 'after a conflict' } }, 200],
    ['DELETE', { method: 'DELETE', id: '1' }, 200],
    ['POST', { method: 'POST', body: { title: 'after a conflict' } }, 201],
  ] as const)(
    'a %s that meets a TransactionConflict (the real service answers it; DynamoDB Local never) is written once, after it',
    async (_name, request, status) => {
      const { network, store, send } = await containerBehindProxy();
      network.inject(operation('TransactWriteItems'), { answerWith: transactionConflict(() => true) }, 2);
      const before = await store.list();
      const from = network.seen.length;
      expect((await send(request)).statusCode).toBe(status);
      expect(network.seen.slice(from).filter(operation('TransactWriteItems'))).toHaveLength(3);
      expect((await store.list()).length - before.length).toBe({ PUT: 0, DELETE: -1, POST: 1 }[request.method]);
    },
    30_000,
  );

  it.each([
    ['POST', { method: 'POST', body: { title: 'claimed anew' } }, 201, 1],
    ['PUT', { method: 'PUT', id: '1', body: { title: 'claimed anew' } }, 200, 0],
    ['DELETE', { method: 'DELETE', id: '1' }, 200, -1],
  ] as const)(
    'a keyed %s whose key’s old claim expired between the condition and the answer claims the key anew',
    async (_name, request, status, added) => {
      const { network, store, send } = await containerBehindProxy();
      network.inject(both(operation('TransactWriteItems'), mentions('KEY#')), { answerWith: claimExpiredMeanwhile });
      const before = await store.list();
      const response = await send({ ...request, headers: keyHeader(`expired meanwhile ${request.method}`) });
      expect(response.statusCode).toBe(status);
      expect(response.headers).not.toHaveProperty('idempotent-replayed');
      expect((await store.list()).length - before.length).toBe(added);
    },
    30_000,
  );

  it('is answered anew once its key has expired, though DynamoDB’s time to live has not deleted it yet', async () => {
    const table = await freshTable();
    const store = dynamoDbStore(table);
    const handler = handlersOn(store).createTodo;
    const request = event({ method: 'POST', body: { title: 'a day ago' }, headers: keyHeader('expired') });
    const claim = idempotencyClaim(request, request.body);
    if (claim === undefined) throw new Error('no claim');
    // What the first request left, 25 hours ago: its key, expired an hour ago.
    await localDocumentClient(testDynamoDbEndpoint()).send(
      new PutCommand({
        TableName: table,
        Item: {
          ...claimKey(claim.key),
          fingerprint: claim.fingerprint,
          [EXPIRES]: Math.floor(Date.now() / 1000) - 3600,
          todo: { id: 99, title: 'a day ago', completed: false },
        },
      }),
    );
    const response = await invoke(handler, request);
    expect(response.headers).not.toHaveProperty('idempotent-replayed');
    expectCreated(response, { id: 3, title: 'a day ago', completed: false });
  });

  it('keeps the answer, not the request: a POST of the largest title leaves a key of its record’s size', async () => {
    const table = await freshTable();
    const handler = handlersOn(dynamoDbStore(table)).createTodo;
    const title = 'x'.repeat(65_536 - 12);
    const request = event({ method: 'POST', body: { title }, headers: keyHeader('big') });
    expect((await invoke(handler, request)).statusCode).toBe(201);
    const claim = idempotencyClaim(request, request.body);
    if (claim === undefined) throw new Error('no claim');
    const { Item } = await localDocumentClient(testDynamoDbEndpoint()).send(
      new GetCommand({ TableName: table, Key: claimKey(claim.key), ConsistentRead: true }),
    );
    expect(Object.keys(Item ?? {}).sort()).toEqual(['expires', 'fingerprint', 'id', 'pk', 'todo']);
    // DynamoDB's limit on an item is 400 KB.
    expect(Buffer.byteLength(JSON.stringify(Item))).toBeLessThan(70_000);
  });
});
