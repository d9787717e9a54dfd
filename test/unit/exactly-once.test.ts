import { afterEach, describe, expect, it } from '@jest/globals';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { bodyOf, context, event, invoke, type EventOptions } from '../support/event';
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
import { awsDynamoDb, type AwsDynamoDb } from '../../harness/aws-dynamodb/dynamodb';
import { handlersOn } from '../support/routes';
import { eventually, sleep } from '../../harness/wait';
import { REQUEST_TIMEOUT_MS } from '../../lib/aws/https';
import { claimKey } from '../../lib/dynamodb/claims';
import { EXPIRES } from '../../lib/dynamodb/table';
import type { HttpResponse } from '../../lib/http';
import { idempotencyClaim } from '../../lib/idempotency';
import { MAX_TITLE_LENGTH, applyPatch, createTodo } from '../../lib/todos';
import { designSection } from '../support/docs';
import { expectCreated, seed } from '../support/expectations';
import {
  dynamoDbStore,
  dynamoDbStoreAt,
  freshTable,
  localDocumentClient,
  testDynamoDbEndpoint,
} from '../support/stores';
import { recordsOf } from '../support/records';

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
let services: AwsDynamoDb[] = [];
async function proxy(upstream: string | AwsDynamoDb = testDynamoDbEndpoint()): Promise<FaultProxy> {
  const started = await startFaultProxy(upstream);
  proxies.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(proxies.map((started) => started.close()));
  for (const service of services) service.close();
  proxies = [];
  services = [];
});

/** A container's store on `table` (a new, seeded one by default), reached through a fault proxy of its own, and its handlers. */
async function containerBehindProxy(upstream?: AwsDynamoDb, table?: string) {
  const network = await proxy(upstream);
  const ownTable = table ?? (await freshTable());
  const store = dynamoDbStoreAt(network.endpoint, ownTable);
  await recordsOf(store);
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
  return { network, table: ownTable, store, send };
}

/** Two containers on one table of DynamoDB as AWS runs it (no delays, no 500s: the test places each event). */
async function twoContainersOnAws() {
  const dynamodb = awsDynamoDb(testDynamoDbEndpoint(), { latency: false, internalErrors: { rate: 0 } });
  services.push(dynamodb);
  const a = await containerBehindProxy(dynamodb);
  const b = await containerBehindProxy(dynamodb, a.table);
  return { dynamodb, a, b };
}

/** The ClientRequestToken of a TransactWriteItems, as the proxy saw it. */
const tokenOf = (request: SeenRequest) =>
  (JSON.parse(request.body) as { ClientRequestToken?: string }).ClientRequestToken ?? '';

/**
 * A write of container A whose first attempt the network holds past the SDK's timeout, while B's
 * transaction on an item that A's write also touches is in progress at DynamoDB: the SDK's retry
 * (the same token) is cancelled with TransactionConflict, as the real service cancels it. Then B's
 * transaction completes, and A's first attempt lands; any attempt of A with another token is held
 * until then. Each step waits on DynamoDB itself, not on a client's answer. Resolves with A's answer.
 */
async function retryMeetsATransaction(
  { dynamodb, a, b }: Awaited<ReturnType<typeof twoContainersOnAws>>,
  others: { send: () => Promise<HttpResponse>; match: Match },
  mine: { send: () => Promise<HttpResponse>; match: Match },
): Promise<HttpResponse> {
  let releaseOther: () => void = () => undefined;
  dynamodb.slow(others.match, new Promise<void>((resolve) => (releaseOther = resolve)));
  const otherInProgress = dynamodb.inProgress(others.match);
  const other = others.send();
  await otherInProgress;
  const held = holdFirst(a.network, mine.match);
  const firstSeen = a.network.next(mine.match);
  const answer = mine.send();
  const token = tokenOf(await firstSeen);
  let firstLanded: () => void = () => undefined;
  a.network.inject(
    (request) => mine.match(request) && tokenOf(request) !== token,
    { holdRequest: new Promise<void>((resolve) => (firstLanded = resolve)) },
    Infinity,
  );
  await eventually(() => dynamodb.stats.conflicts.transactionsCancelled > 0, {
    within: LATE_WITHIN_MS,
    what: 'the SDK’s retry of the held attempt, cancelled by the other transaction',
    every: 5,
  });
  const otherDone = b.network.landed(others.match);
  releaseOther();
  await otherDone;
  await held.land();
  firstLanded();
  await other;
  return answer;
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
      expect(bodyOf(answer)).toEqual(applyPatch(seed(1), { title: 'the first title' }));
      // The SDK gave up on the held attempt and sent it again.
      expect(network.seen.filter(first)).toHaveLength(2);
      const later = applyPatch(seed(1), { title: 'the later title' });
      expect(bodyOf(await send({ method: 'PUT', id: '1', body: { title: 'the later title' } }))).toEqual(later);
      await held.land();
      expect(await store.get(1)).toEqual(later);
    },
    LATE_WITHIN_MS,
  );

  it(
    'POST: no second record, and a later PUT of the record stands',
    async () => {
      const { network, store, send } = await containerBehindProxy();
      const first = both(write, mentions('posted once'));
      const held = holdFirst(network, first);
      expectCreated(
        await send({ method: 'POST', body: { title: 'posted once' } }),
        createTodo({ title: 'posted once' }, 3),
      );
      await send({ method: 'PUT', id: '3', body: { title: 'changed later' } });
      await held.land();
      expect(await recordsOf(store)).toEqual([
        seed(1),
        seed(2),
        applyPatch(createTodo({ title: 'posted once' }, 3), { title: 'changed later' }),
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
      expectCreated(
        await send({ method: 'POST', body: { title: 'created later' } }),
        createTodo({ title: 'created later' }, 3),
      );
      await held.land();
      expect(ids(await recordsOf(store))).toEqual([1, 3]);
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
      expect(await store.get(1)).toEqual(applyPatch(seed(1), { title: 'keyed later' }));
      const replay = await send(request);
      expect(replay).toEqual({ ...answer, headers: { ...answer.headers, 'idempotent-replayed': 'true' } });
    },
    LATE_WITHIN_MS,
  );
});

describe('a write whose retry meets another transaction in progress (as real DynamoDB cancels it)', () => {
  it(
    'POST without a key: stored once, with the id it answered (it was stored twice: the retry went on with a new token, and the first attempt landed)',
    async () => {
      const containers = await twoContainersOnAws();
      const { a, b } = containers;
      const answer = await retryMeetsATransaction(
        containers,
        // B's DELETE moves the list's size on the counter, which A's POST moves too.
        {
          send: () => b.send({ method: 'DELETE', id: '1' }),
          match: both(operation('TransactWriteItems'), mentions('"Delete"')),
        },
        {
          send: () => a.send({ method: 'POST', body: { title: 'stored once' } }),
          match: both(operation('TransactWriteItems'), mentions('stored once')),
        },
      );
      const stored = (await recordsOf(a.store)).filter((todo) => todo.title === 'stored once');
      expect(stored).toHaveLength(1);
      expectCreated(answer, createTodo({ title: 'stored once' }, stored[0]?.id ?? -1));
    },
    LATE_WITHIN_MS,
  );

  it(
    'DELETE: answered 200 for the record it deleted (it answered 404: the retry read the record gone, and took its own delete for another’s)',
    async () => {
      const containers = await twoContainersOnAws();
      const { a, b } = containers;
      const deleteOf = (id: number): Match =>
        both(both(operation('TransactWriteItems'), mentions('"Delete"')), mentions(`"id":{"N":"${id}"}`));
      const answer = await retryMeetsATransaction(
        containers,
        { send: () => b.send({ method: 'DELETE', id: '1' }), match: deleteOf(1) },
        { send: () => a.send({ method: 'DELETE', id: '2' }), match: deleteOf(2) },
      );
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toBe('Deleted');
      expect(ids(await recordsOf(a.store))).toEqual([]);
    },
    LATE_WITHIN_MS,
  );
});

/** Times a client sends a keyed request again: a few, as any client would, each after its Retry-After. */
const CONTRACT_RETRIES = 5;
/** 500 POSTs through ten containers, and up to CONTRACT_RETRIES rounds of 1 s retries on a busy machine. */
const BURST_WITHIN_MS = 180_000;

/**
 * Sends a keyed request as the contract (README, Retrying) tells a client: again, with the same
 * key, after a 409 (its key in progress) or a 503, once the Retry-After has passed.
 */
async function sendAsTheContractSays(send: () => Promise<HttpResponse>): Promise<HttpResponse> {
  let response = await send();
  for (let retry = 0; retry < CONTRACT_RETRIES; retry++) {
    const status = response.statusCode ?? 0;
    if (status !== 409 && status !== 503) return response;
    const retryAfter = Number((response.headers as Record<string, string> | undefined)?.['retry-after'] ?? 1);
    await sleep(retryAfter * 1000);
    response = await send();
  }
  return response;
}

describe('what a 503 promises (docs/design.md)', () => {
  it(
    'a POST answered 503 may still be applied after its answer; its retry with the same key gets that record, and it is stored once',
    async () => {
      const { network, store, send } = await containerBehindProxy();
      // A container alone that has written before: its POST is one transaction (a new container's first POST queues).
      await store.create({ title: 'written before' });
      const request = { method: 'POST', body: { title: 'applied after its 503' }, headers: keyHeader('late') } as const;
      // Its transaction is held on its way past the request's deadline (1.5 s of a 2.5 s function), then lands.
      const held = holdFirst(network, both(operation('TransactWriteItems'), mentions('applied after its 503')));
      const answered = await send(request, 2_500);
      expect(answered.statusCode).toBe(503);
      await held.land();
      network.heal();
      await network.idle(LATE_WITHIN_MS);
      const stored = (await recordsOf(store)).filter((todo) => todo.title === 'applied after its 503');
      expect(stored).toHaveLength(1);
      const retried = await send(request);
      expect(retried.statusCode).toBe(201);
      expect(bodyOf(retried)).toEqual(stored[0]);
      expect((await recordsOf(store)).filter((todo) => todo.title === 'applied after its 503')).toHaveLength(1);
      const promise = designSection('What a 503 promises');
      expect(promise).toContain('a write answered 503 may still be applied after the answer');
      expect(promise).toContain('with the same Idempotency-Key');
      expect(promise).not.toMatch(/look at `?GET \/todos`? before retrying/i);
    },
    LATE_WITHIN_MS,
  );
});

describe('a client that retries with an Idempotency-Key', () => {
  it(
    'gets 503 when every acknowledgement of its POST is lost though the record is stored; its retry gets that record’s 201',
    async () => {
      const { network, store, send } = await containerBehindProxy();
      // A container alone that has written before: its POST is one transaction (a new container's first POST queues).
      await store.create({ title: 'written before' });
      const commit = both(operation('TransactWriteItems'), mentions('acknowledged never'));
      network.inject(commit, { dropAnswer: true }, Infinity);
      const request = { method: 'POST', body: { title: 'acknowledged never' }, headers: keyHeader('lost') } as const;
      const lost = await send(request);
      expect(lost.statusCode).toBe(503);
      const record = createTodo({ title: 'acknowledged never' }, 4);
      expect(await recordsOf(store)).toContainEqual(record);
      network.heal();
      const retried = await send(request);
      expect(retried.statusCode).toBe(201);
      expect(bodyOf(retried)).toEqual(record);
      expect(retried.headers).toMatchObject({ location: '/todos/4', 'idempotent-replayed': 'true' });
      expect((await recordsOf(store)).filter((todo) => todo.title === 'acknowledged never')).toHaveLength(1);
    },
    LATE_WITHIN_MS,
  );

  it(
    'makes exactly 100 records of 500 concurrent POSTs carrying 100 keys, 5 each, over 10 containers, each client retrying as the contract says; the 5 answers of a key agree',
    async () => {
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
          const request = event({ method: 'POST', body: { title: `key ${key}` }, headers: keyHeader(`burst-${key}`) });
          return { key, response: await sendAsTheContractSays(() => invoke(container, request)) };
        }),
      );
      expect(answers.filter(({ response }) => response.statusCode !== 201)).toEqual([]);
      for (let key = 0; key < 100; key++) {
        const bodies = new Set(answers.filter((answer) => answer.key === key).map(({ response }) => response.body));
        expect(bodies.size).toBe(1);
      }
      const records = (await recordsOf(dynamoDbStore(table))).filter((todo) => todo.id > 2);
      expect(records).toHaveLength(100);
      expect(new Set(records.map((todo) => todo.title)).size).toBe(100);
      expect(ids(records)).toEqual(Array.from({ length: 100 }, (_, i) => 3 + i));
    },
    BURST_WITHIN_MS,
  );

  /** A new table and its seed, then a PUT held by conflicts to its function's 3 s deadline: a few round trips besides. */
  const HELD_TO_THE_DEADLINE_WITHIN_MS = 30_000;
  it(
    'gets 409 with Retry-After when another request with its key holds it to the deadline (a TransactionConflict on the key)',
    async () => {
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
    },
    HELD_TO_THE_DEADLINE_WITHIN_MS,
  );

  it.each([
    ['PUT', { method: 'PUT', id: '1', body: { title: 'after a conflict' } }, 200],
    ['DELETE', { method: 'DELETE', id: '1' }, 200],
    ['POST', { method: 'POST', body: { title: 'after a conflict' } }, 201],
  ] as const)(
    'a %s that meets a TransactionConflict (the real service answers it; DynamoDB Local never) is written once, after it',
    async (_name, request, status) => {
      const { network, store, send } = await containerBehindProxy();
      network.inject(operation('TransactWriteItems'), { answerWith: transactionConflict(() => true) }, 2);
      const before = await recordsOf(store);
      const from = network.seen.length;
      expect((await send(request)).statusCode).toBe(status);
      expect(network.seen.slice(from).filter(operation('TransactWriteItems'))).toHaveLength(3);
      expect((await recordsOf(store)).length - before.length).toBe({ PUT: 0, DELETE: -1, POST: 1 }[request.method]);
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
      const before = await recordsOf(store);
      const response = await send({ ...request, headers: keyHeader(`expired meanwhile ${request.method}`) });
      expect(response.statusCode).toBe(status);
      expect(response.headers).not.toHaveProperty('idempotent-replayed');
      expect((await recordsOf(store)).length - before.length).toBe(added);
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
          todo: createTodo({ title: 'a day ago' }, 99),
        },
      }),
    );
    const response = await invoke(handler, request);
    expect(response.headers).not.toHaveProperty('idempotent-replayed');
    expectCreated(response, createTodo({ title: 'a day ago' }, 3));
  });

  it('keeps the answer, not the request: a POST of the largest title leaves a key of its record’s size', async () => {
    const table = await freshTable();
    const handler = handlersOn(dynamoDbStore(table)).createTodo;
    // The longest title a client may set, in UTF-8 bytes: four a character.
    const title = '🚀'.repeat(MAX_TITLE_LENGTH);
    const request = event({ method: 'POST', body: { title }, headers: keyHeader('big') });
    expect((await invoke(handler, request)).statusCode).toBe(201);
    const claim = idempotencyClaim(request, request.body);
    if (claim === undefined) throw new Error('no claim');
    const { Item } = await localDocumentClient(testDynamoDbEndpoint()).send(
      new GetCommand({ TableName: table, Key: claimKey(claim.key), ConsistentRead: true }),
    );
    expect(Object.keys(Item ?? {}).sort()).toEqual(['expires', 'fingerprint', 'id', 'pk', 'todo']);
    // The title once, the record's, and not the request's besides (DynamoDB's limit on an item is 400 KB).
    expect(Buffer.byteLength(JSON.stringify(Item))).toBeLessThan(2 * Buffer.byteLength(title));
  });
});
