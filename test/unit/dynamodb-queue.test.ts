import { afterEach, describe, expect, it } from '@jest/globals';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { bodyOf, context, event, invoke } from '../../harness/event';
import { both, mentions, operation, startFaultProxy, type FaultProxy } from '../../harness/fault-proxy';
import { handlersOn } from '../../harness/routes';
import { HEAD_LEASE_MS, outcomeKey } from '../../lib/dynamodb/queue';
import { COUNTER_KEY, EXPIRES } from '../../lib/dynamodb/table';
import { eventually } from '../../harness/wait';
import {
  dynamoDbStore,
  dynamoDbStoreAt,
  freshTable,
  localDocumentClient,
  testDynamoDbEndpoint,
} from '../support/stores';

/**
 * The queue of POSTs (lib/dynamodb/queue.ts) as containers meet in it: each container a store of
 * its own behind a fault proxy of its own, on one table of DynamoDB Local. What a queued POST
 * costs DynamoDB, and how the queue gets past a head that does not commit.
 */

/** Each test's POSTs: a few round trips each, and at most a few head leases of waiting. */
const WITHIN_MS = 4 * HEAD_LEASE_MS + 15_000;
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
  await store.list();
  const { createTodo } = handlersOn(store);
  const post = (title: string) => invoke(createTodo, event({ method: 'POST', body: { title } }), context());
  return { network, store, post };
}

/**
 * Containers that have each read the counter, which another container then moves: the next POST
 * of each finds it has company, and queues.
 */
async function contendedContainers(count: number) {
  const table = await freshTable();
  const containers = await Promise.all(Array.from({ length: count }, () => container(table)));
  await dynamoDbStore(table).create('from another container');
  return { table, containers };
}

const titles = async (store: { list: () => Promise<{ id: number; title: string }[]> }) =>
  (await store.list()).map(({ id, title }) => [id, title]);

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
      expect([(await first).statusCode, bodyOf(await second)]).toEqual([
        201,
        { id: 5, title: 'queued behind the head', completed: false },
      ]);
      const waiterSent = waiter.network.seen.slice(from);
      // It was committed by the head, with the head's own, and found its id in the counter.
      const commitsTheWaiter = both(operation('TransactWriteItems'), mentions('queued behind the head'));
      expect(head.network.seen.filter(commitsTheWaiter).filter(mentions('the head’s own'))).toHaveLength(1);
      expect(waiterSent.filter(operation('TransactWriteItems')).filter(mentions('the head’s own'))).toEqual([]);
      expect(waiterSent.filter(operation('GetItem'))).toEqual([]);
      expect(await titles(head.store)).toEqual([
        [1, expect.any(String)],
        [2, expect.any(String)],
        [3, 'from another container'],
        [4, 'the head’s own'],
        [5, 'queued behind the head'],
      ]);
    },
    WITHIN_MS,
  );

  it(
    'a head that does not commit is taken over by one POST behind it, not by all of them at once',
    async () => {
      const { table, containers } = await contendedContainers(3);
      // The head: an intent whose container has stalled, written as a POST's would be.
      await localDocumentClient(testDynamoDbEndpoint()).send(
        new PutCommand({
          TableName: table,
          Item: {
            pk: COUNTER_KEY.pk,
            id: Date.now() * 1000,
            uuid: 'a stalled container',
            title: 'stalled head',
            [EXPIRES]: Math.ceil(Date.now() / 1000) + 600,
          },
        }),
      );
      // A commit of the head takes a while, as under load: every POST that takes over meanwhile races it.
      const commitsHead = both(operation('TransactWriteItems'), mentions('stalled head'));
      for (const { network } of containers) network.inject(commitsHead, { holdRequestMs: 300 }, Infinity);
      const answers = await Promise.all(containers.map(({ post }, i) => post(`behind ${i}`)));
      expect(answers.map((answer) => answer.statusCode)).toEqual([201, 201, 201]);
      // One transaction wrote the stalled head's record: no other POST's attempt raced it and failed.
      const commits = containers.flatMap(({ network }) => network.seen.filter(commitsHead));
      expect(commits).toHaveLength(1);
      const listed = await titles(dynamoDbStore(table));
      expect(listed.slice(0, 4)).toEqual([
        [1, expect.any(String)],
        [2, expect.any(String)],
        [3, 'from another container'],
        [4, 'stalled head'],
      ]);
      expect(listed.slice(4).map(([, title]) => title)).toEqual(
        expect.arrayContaining(['behind 0', 'behind 1', 'behind 2']),
      );
      expect(listed).toHaveLength(7);
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
        const intent = { pk: COUNTER_KEY.pk, id: Date.now() * 1000 + i, uuid, title: uuid, [EXPIRES]: expires };
        await documents.send(new PutCommand({ TableName: table, Item: intent }));
        const outcome = { ...outcomeKey(uuid), refused: 'withdrawn', [EXPIRES]: expires };
        await documents.send(new PutCommand({ TableName: table, Item: outcome }));
      }
      expect(bodyOf(await behind.post('behind ten withdrawn'))).toEqual({
        id: 4,
        title: 'behind ten withdrawn',
        completed: false,
      });
      // The withdrawn ones are dropped, unwritten.
      expect(await titles(behind.store)).toEqual([
        [1, expect.any(String)],
        [2, expect.any(String)],
        [3, 'from another container'],
        [4, 'behind ten withdrawn'],
      ]);
    },
    WITHIN_MS,
  );
});
