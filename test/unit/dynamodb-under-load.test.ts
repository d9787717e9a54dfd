import { afterEach, describe, expect, it } from '@jest/globals';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { awsDynamoDb, type AwsDynamoDb, type AwsDynamoDbOptions } from '../../harness/aws-dynamodb/dynamodb';
import { context, event, invoke } from '../support/event';
import { both, mentions, operation, startFaultProxy, type FaultProxy } from '../../harness/fault-proxy';
import { handlersOn } from '../support/routes';
import { payloadOf } from '../../lib/dynamodb/queue';
import { COUNTER_KEY, EXPIRES } from '../../lib/dynamodb/table';
import { MAX_TITLE_LENGTH } from '../../lib/todos';
import {
  dynamoDbStore,
  dynamoDbStoreAt,
  freshTable,
  localDocumentClient,
  testDynamoDbEndpoint,
} from '../support/stores';
import { recordsOf } from '../support/records';

/**
 * The DynamoDB store where POSTs of many containers meet, on DynamoDB as AWS runs it
 * (harness/aws-dynamodb/): each container a store of its own behind a network of its own, all on
 * one table. Each test is a way the queue of POSTs that this store once had answered wrong or
 * stalled; with one transaction a POST, none of them may cost a POST its answer.
 */

let proxies: FaultProxy[] = [];
let services: AwsDynamoDb[] = [];
afterEach(async () => {
  await Promise.all(proxies.map((proxy) => proxy.close()));
  for (const service of services) service.close();
  proxies = [];
  services = [];
});

/** Many containers' POSTs: a few round trips each, on a busy machine, with conflicts to retry. */
const WITHIN_MS = 60_000;
/** A request held back lands within a few round trips of its release. */
const STEP_WITHIN_MS = 10_000;

function dynamoDb(options: AwsDynamoDbOptions = {}): AwsDynamoDb {
  const service = awsDynamoDb(testDynamoDbEndpoint(), { internalErrors: { rate: 0 }, ...options });
  services.push(service);
  return service;
}

/** A container on `table`: its store has read the counter, and its network is its own. */
async function container(table: string, dynamodb: AwsDynamoDb) {
  const network = await startFaultProxy(dynamodb);
  proxies.push(network);
  const store = dynamoDbStoreAt(network.endpoint, table);
  await recordsOf(store);
  const { createTodo } = handlersOn(store);
  const post = (title: string) => invoke(createTodo, event({ method: 'POST', body: { title } }), context());
  return { network, store, post };
}

/**
 * `count` containers that have each read the counter, which another container then moves: the
 * next POST of each finds that others are writing too.
 */
async function contendedContainers(count: number, dynamodb: AwsDynamoDb) {
  const table = await freshTable();
  const containers = await Promise.all(Array.from({ length: count }, () => container(table, dynamodb)));
  await dynamoDbStore(table).create({ title: 'from another container' });
  return { table, containers };
}

/**
 * The largest title a client can send that starts with `prefix`, in JSON: at the cap, the rest of characters JSON
 * escapes to six bytes.
 */
const largestTitle = (prefix: string) => prefix + '\u0001'.repeat(MAX_TITLE_LENGTH - prefix.length);

/** A queued POST's intent, its payload in it (lib/dynamodb/queue.ts), as a container that crashed left it. */
function leftoverIntent(uuid: string, id: number) {
  const payload = payloadOf({ request: { title: `left by ${uuid}` }, claim: undefined });
  return { pk: COUNTER_KEY.pk, id, uuid, payload, [EXPIRES]: Math.ceil(Date.now() / 1000) + 600 };
}

describe('POSTs of many containers on DynamoDB as AWS runs it', () => {
  it(
    'answers 20 POSTs of the largest titles from 4 containers at once with 201, none with 503 (a 1 MB page of the queue of 60 KB ones took one for withdrawn)',
    async () => {
      const { containers } = await contendedContainers(4, dynamoDb({ latency: false }));
      const answers = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const container = containers[i % containers.length];
          if (container === undefined) throw new Error('no container');
          return container.post(largestTitle(`${i} `));
        }),
      );
      expect(answers.map((answer) => answer.statusCode)).toEqual(Array.from({ length: 20 }, () => 201));
    },
    WITHIN_MS,
  );

  it(
    'holds no POST up behind a POST that took itself back at its deadline (its intent stayed at the head for a lease)',
    async () => {
      const {
        table,
        containers: [withdrawing, behind],
      } = await contendedContainers(2, dynamoDb({ latency: false }));
      if (withdrawing === undefined || behind === undefined) throw new Error('two containers');
      // The first POST queues, and its commit is held on its way until after its deadline.
      const commit = both(operation('TransactWriteItems'), mentions('"DONE#'));
      let release: () => void = () => undefined;
      withdrawing.network.inject(commit, { holdRequest: new Promise<void>((resolve) => (release = resolve)) });
      const gaveUp = await invoke(
        handlersOn(withdrawing.store).createTodo,
        event({ method: 'POST', body: { title: 'withdrawn' } }),
        context({ timeoutMs: 2_500 }),
      );
      expect(gaveUp.statusCode).toBe(503);
      const from = behind.network.seen.length;
      expect((await behind.post('not held up')).statusCode).toBe(201);
      // It found itself at the head: no lease to wait out, no head to take over.
      expect(behind.network.seen.slice(from).filter(operation('UpdateItem'))).toEqual([]);
      release();
      await withdrawing.network.idle(STEP_WITHIN_MS);
      const titles = (await recordsOf(dynamoDbStore(table))).map((todo) => todo.title);
      expect(titles).toContain('not held up');
      expect(titles).not.toContain('withdrawn');
    },
    WITHIN_MS,
  );

  it(
    'writes one record for one POST, whatever else a crashed container left (two of its queue items with one POST’s id failed the commit)',
    async () => {
      const {
        table,
        containers: [behind],
      } = await contendedContainers(1, dynamoDb({ latency: false }));
      if (behind === undefined) throw new Error('a container');
      const documents = localDocumentClient(testDynamoDbEndpoint());
      const id = Date.now() * 1000;
      for (const item of [leftoverIntent('one post', id), leftoverIntent('one post', id + 1)]) {
        await documents.send(new PutCommand({ TableName: table, Item: item }));
      }
      const answer = await behind.post('after the leftovers');
      expect(answer.statusCode).toBe(201);
      const titles = (await recordsOf(behind.store)).map((todo) => todo.title);
      expect(titles.filter((title) => title === 'after the leftovers')).toHaveLength(1);
      expect(titles.filter((title) => title === 'left by one post').length).toBeLessThanOrEqual(1);
    },
    WITHIN_MS,
  );

  it(
    'answers 5 POSTs of the largest titles in turn from each of 32 containers with 201, each read of DynamoDB costing under 4 read units on average (waiting POSTs that read the whole queue at every look cost 13.5, and polled the counter’s partition toward its 3,000 a second)',
    async () => {
      const dynamodb = dynamoDb();
      const { containers } = await contendedContainers(32, dynamodb);
      const statuses = await Promise.all(
        containers.map(async ({ post }, i) => {
          const answered: number[] = [];
          for (let n = 0; n < 5; n++)
            answered.push((await post(largestTitle(`container ${i}, POST ${n} `))).statusCode ?? 0);
          return answered;
        }),
      );
      expect(statuses.flat().filter((status) => status !== 201)).toEqual([]);
      expect(dynamodb.stats.capacity.throttled.Query ?? 0).toBe(0);
      const { Query = 0, GetItem = 0 } = dynamodb.stats.requests;
      expect(dynamodb.stats.capacity.readUnits / (Query + GetItem)).toBeLessThan(4);
    },
    WITHIN_MS,
  );
});
