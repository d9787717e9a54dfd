import { afterEach, describe, expect, it } from '@jest/globals';
import { createTodo } from '../support/routes';
import { deleteTodo } from '../support/routes';
import { getTodo } from '../support/routes';
import { bodyOf, context, event, invoke } from '../support/event';
import {
  both,
  httpUpstream,
  mentions,
  operation,
  startFaultProxy,
  type FaultProxy,
  type Match,
  type Upstream,
  type UpstreamAnswer,
} from '../../harness/fault-proxy';
import { REQUEST_TIMEOUT_MS } from '../../lib/aws/https';
import type { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import type { HttpResponse } from '../../lib/http';
import * as domain from '../../lib/todos';
import { expectCreated, seed } from '../support/expectations';
import { dynamoDbStore, dynamoDbStoreAt, freshTable, testDynamoDbEndpoint } from '../support/stores';
import { recordsOf } from '../support/records';

/**
 * The DynamoDB store when the network or the store misbehaves, driven by a fault proxy between
 * the store's client and the run's DynamoDB Local. Each test is one wrong answer a store gave
 * before it used idempotent transactions, a deadline and a bounded number of requests in flight.
 */

const ids = (todos: { id: number }[]) => todos.map((todo) => todo.id);

/** Any write, however the store words it: a plain item write or a transaction. */
const write: Match = ({ operation }) =>
  ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems'].includes(operation);
/** The write that deletes record `id`: a DeleteItem, or a transaction that deletes it. */
const deleteOf =
  (id: number): Match =>
  ({ operation, body }) =>
    (operation === 'DeleteItem' || (operation === 'TransactWriteItems' && body.includes('"Delete"'))) &&
    body.includes(`"id":{"N":"${id}"}`);
/** A write of the id counter. */
const counterWrite: Match = both(write, mentions('"COUNTER"'));

/** The faults that lose the answer to a write DynamoDB applied. */
const LOST_ANSWERS = [
  ['closed before the answer', { dropAnswer: true }],
  ['answered after the SDK has given up', { delayAnswerMs: REQUEST_TIMEOUT_MS + 500 }],
] as const;
/** One lost answer costs an attempt's timeout, then a retry; the rest is a few local round trips. */
const LOST_ANSWER_WITHIN_MS = 4 * REQUEST_TIMEOUT_MS + 10_000;

let proxies: FaultProxy[] = [];
async function proxy(upstream: string | Upstream = testDynamoDbEndpoint()): Promise<FaultProxy> {
  const started = await startFaultProxy(upstream);
  proxies.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(proxies.map((started) => started.close()));
  proxies = [];
});

/** A container's store on a new, seeded table, reached through a fault proxy of its own (to the run's DynamoDB Local, unless `upstream`). */
async function seededStoreBehindProxy(upstream?: Upstream): Promise<{ network: FaultProxy; store: DynamoDbTodoStore }> {
  const network = await proxy(upstream);
  const store = dynamoDbStoreAt(network.endpoint, await freshTable());
  // A container's first request seeds the table; a GET by id reads nothing more that a test's upstream may keep.
  await store.get(1);
  return { network, store };
}

function expectStoreUnavailable(response: HttpResponse): void {
  expect(response.statusCode).toBe(503);
  expect(response.headers).toEqual({ 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
  expect(bodyOf(response)).toEqual({ error: 'Service temporarily unavailable, please retry' });
}

describe('seeding a new table', () => {
  it('never brings back a deleted record 1 when another cold start’s seed lands late', async () => {
    const table = await freshTable();
    const network = await proxy();
    // Container A's seed write is held on its way (the issue saw it with 300 ms; here it is held
    // until container B has seeded and a client has deleted record 1, whatever that takes)...
    let land: (value?: unknown) => void = () => undefined;
    network.inject(write, {
      holdRequest: new Promise((resolve) => {
        land = resolve;
      }),
    });
    const containerA = dynamoDbStoreAt(network.endpoint, table);
    const firstRequestOnA = recordsOf(containerA);
    await network.next(write);
    // ...while container B starts, seeds, and deletes record 1 for a client.
    const containerB = dynamoDbStore(table);
    expect((await containerB.remove(1))?.value).toBe(true);
    // Then A's seed lands.
    land();
    await firstRequestOnA;
    expect(ids(await recordsOf(containerA))).toEqual([2]);
    expect(ids(await recordsOf(dynamoDbStore(table)))).toEqual([2]);
    expect(await dynamoDbStore(table).get(1)).toBeUndefined();
  });
});

describe.each(LOST_ANSWERS)('a write applied whose answer was lost: %s', (_name, fault) => {
  it(
    'DELETE answers 200 "Deleted", not 404',
    async () => {
      const { network, store } = await seededStoreBehindProxy();
      network.inject(deleteOf(1), fault);
      const response = await invoke(deleteTodo(store), event({ method: 'DELETE', id: '1' }));
      expect(response).toEqual({
        statusCode: 200,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: 'Deleted',
      });
      expect(await store.get(1)).toBeUndefined();
      // The fault happened: the delete was sent twice.
      expect(network.seen.filter(deleteOf(1))).toHaveLength(2);
    },
    LOST_ANSWER_WITHIN_MS,
  );

  it(
    'POST answers 201 with the stored record, and stores it once (the record write lost its answer)',
    async () => {
      const { network, store } = await seededStoreBehindProxy();
      // A container alone that has written before: its POST is one transaction (a new container's first POST queues).
      await store.create({ title: 'written before' });
      network.inject(both(write, mentions('lost answer')), fault);
      const response = await invoke(createTodo(store), event({ method: 'POST', body: { title: 'lost answer' } }));
      const record = domain.createTodo({ title: 'lost answer' }, 4);
      expectCreated(response, record);
      expect((await recordsOf(store)).filter((todo) => todo.title === 'lost answer')).toEqual([record]);
      expect(network.seen.filter(both(write, mentions('lost answer')))).toHaveLength(2);
    },
    LOST_ANSWER_WITHIN_MS,
  );

  it(
    'POST skips no id (the counter write lost its answer)',
    async () => {
      const { network, store } = await seededStoreBehindProxy();
      network.inject(counterWrite, fault);
      const post = createTodo(store);
      expectCreated(
        await invoke(post, event({ method: 'POST', body: { title: 'a' } })),
        domain.createTodo({ title: 'a' }, 3),
      );
      expectCreated(
        await invoke(post, event({ method: 'POST', body: { title: 'b' } })),
        domain.createTodo({ title: 'b' }, 4),
      );
      expect(ids(await recordsOf(store))).toEqual([1, 2, 3, 4]);
    },
    LOST_ANSWER_WITHIN_MS,
  );
});

describe('the fault proxy', () => {
  it(
    'is idle only once a write it held back has landed, though its retry was answered long before',
    async () => {
      const { network, store } = await seededStoreBehindProxy();
      network.inject(deleteOf(1), { holdRequestMs: REQUEST_TIMEOUT_MS + 3_000 });
      let landed = false;
      void network.landed(deleteOf(1)).then(() => (landed = true));
      const response = await invoke(deleteTodo(store), event({ method: 'DELETE', id: '1' }));
      expect(response.statusCode).toBe(200);
      await network.idle(LOST_ANSWER_WITHIN_MS);
      expect(landed).toBe(true);
      // Held, sent again, and both reached DynamoDB.
      expect(network.seen.filter(deleteOf(1))).toHaveLength(2);
    },
    2 * LOST_ANSWER_WITHIN_MS,
  );
});

describe('a partition past its throughput', () => {
  /** What DynamoDB answers a request past its partition's throughput: not applied, to be sent again. */
  const throttled = () => ({
    status: 400,
    body: {
      __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
      message: 'The level of configured provisioned throughput for the table was exceeded.',
    },
  });

  it(
    'is asked again, within the deadline, after the SDK’s own three attempts were throttled: the read and the write are answered (they were 503)',
    async () => {
      const { network, store } = await seededStoreBehindProxy();
      network.inject(operation('GetItem'), { answerWith: throttled }, 4);
      expect(bodyOf(await invoke(getTodo(store), event({ method: 'GET', id: '1' })))).toEqual(seed(1));
      network.inject(operation('TransactWriteItems'), { answerWith: throttled }, 4);
      expectCreated(
        await invoke(createTodo(store), event({ method: 'POST', body: { title: 'after the throttle' } })),
        domain.createTodo({ title: 'after the throttle' }, 3),
      );
      expect(network.seen.filter(both(operation('TransactWriteItems'), mentions('after the throttle')))).toHaveLength(
        4 + 1,
      );
    },
    LOST_ANSWER_WITHIN_MS,
  );
});

describe('bursts against a healthy but distant store', () => {
  /** Every answer takes this long: a store across a slow network, not a broken one. */
  const LATENCY_MS = 150;
  const BURST = 500;
  /**
   * The function timeout each request of a burst is given: its deadline (ANSWER_MARGIN_MS less)
   * is not what these tests are about (a frozen store's is, below). 500 requests through 50
   * sockets at 150 ms is 1.5 s of queueing, and idle the burst is answered within about 2 s; but
   * its work in this process (500 handlers, their signing, the fault proxy) is what a busy machine
   * slows down: beside two busy loops on 2 cores, with other tests running, GETs were answered
   * about 50 a second, and the last 51, still waiting for a socket, met the 9 s deadline of the
   * default 10 s function (503 "DynamoDB did not answer before the deadline"). 30 s, the longest
   * an API Gateway HTTP API waits for a function, leaves several times that room.
   */
  const BURST_FUNCTION_TIMEOUT_MS = 30_000;
  /** The burst within its functions' timeout, after a new table's creation and seed: a few round trips. */
  const BURST_WITHIN_MS = BURST_FUNCTION_TIMEOUT_MS + 30_000;
  const burstContext = () => context({ timeoutMs: BURST_FUNCTION_TIMEOUT_MS });

  const upstreams: Upstream[] = [];
  afterEach(() => {
    for (const upstream of upstreams.splice(0)) upstream.close();
  });

  /**
   * The run's DynamoDB Local, except that a read it has answered is answered again as it was,
   * without asking it: the burst's GETs all read record 1, which nothing changes meanwhile.
   * DynamoDB Local serves one request at a time, so each of the 50 requests in flight waits for
   * the others' service time too; on a CPU that other processes keep busy that passed the
   * client's 2 s answer timeout on all three attempts (503 "no answer within 2000 ms"), which is
   * a slow store, not the distant one these tests mean, whose every answer takes LATENCY_MS.
   */
  function readsAnsweredOnce(): Upstream {
    const dynamodb = httpUpstream(testDynamoDbEndpoint());
    const answers = new Map<string, Promise<UpstreamAnswer>>();
    const upstream: Upstream = {
      send(request) {
        if (request.seen.operation !== 'GetItem') return dynamodb.send(request);
        const answer = answers.get(request.seen.body) ?? dynamodb.send(request);
        answers.set(request.seen.body, answer);
        return answer;
      },
      close: () => {
        dynamodb.close();
      },
    };
    upstreams.push(upstream);
    return upstream;
  }

  async function slowStore(upstream?: Upstream) {
    const { network, store } = await seededStoreBehindProxy(upstream);
    network.inject(() => true, { delayAnswerMs: LATENCY_MS }, Infinity);
    return store;
  }

  it(
    `answers ${BURST} concurrent POSTs all 201, with consecutive ids`,
    async () => {
      const post = createTodo(await slowStore());
      const responses = await Promise.all(
        Array.from({ length: BURST }, (_, i) =>
          invoke(post, event({ method: 'POST', body: { title: `burst ${i}` } }), burstContext()),
        ),
      );
      expect(responses.filter((response) => response.statusCode !== 201)).toEqual([]);
      const created = responses.map((response) => (bodyOf(response) as { id: number }).id).sort((a, b) => a - b);
      expect(created).toEqual(Array.from({ length: BURST }, (_, i) => 3 + i));
    },
    BURST_WITHIN_MS,
  );

  it(
    `answers ${BURST} concurrent GETs all 200: a wait for a socket is not a failed connect`,
    async () => {
      const get = getTodo(await slowStore(readsAnsweredOnce()));
      const responses = await Promise.all(
        Array.from({ length: BURST }, () => invoke(get, event({ id: '1' }), burstContext())),
      );
      expect(responses.filter((response) => response.statusCode !== 200)).toEqual([]);
    },
    BURST_WITHIN_MS,
  );
});

describe('a frozen store', () => {
  /**
   * A function timeout shorter than the SDK's three attempts at 2 s each: only the deadline can
   * end these requests in time.
   */
  const TIMEOUT_MS = 3_000;
  const CONCURRENT = 50;

  it(
    `answers each of ${CONCURRENT} concurrent requests a JSON 503 with Retry-After before the function times out`,
    async () => {
      const { network, store } = await seededStoreBehindProxy();
      network.freeze();
      const handlers = [getTodo(store), createTodo(store), deleteTodo(store)];
      const answers = await Promise.all(
        Array.from({ length: CONCURRENT }, async (_, i) => {
          const started = Date.now();
          const request = [
            event({ id: '1' }),
            event({ method: 'POST', body: { title: `frozen ${i}` } }),
            event({ method: 'DELETE', id: '2' }),
          ][i % 3];
          const handler = handlers[i % 3];
          if (request === undefined || handler === undefined) throw new Error('no request');
          const response = await invoke(handler, request, context({ timeoutMs: TIMEOUT_MS }));
          return { response, tookMs: Date.now() - started };
        }),
      );
      for (const { response, tookMs } of answers) {
        expectStoreUnavailable(response);
        // Answered inside the function's time: the deadline leaves ANSWER_MARGIN_MS of it.
        expect(tookMs).toBeLessThan(TIMEOUT_MS);
      }
    },
    4 * TIMEOUT_MS,
  );
});
