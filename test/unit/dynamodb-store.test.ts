import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getTodo } from '../../harness/routes';
import { dynamoDb } from '../../lib/dynamodb/client';
import { DynamoDbTodoStore, dynamoDbStoreFromEnv } from '../../lib/dynamodb/store';
import { StoreUnavailable } from '../../lib/errors';
import type { Written } from '../../lib/todos';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../scripts/dynamodb-local-process';
import { FUNCTION_TIMEOUT_MS, bodyOf, event, invoke } from '../../harness/event';
import { freePort } from '../../harness/project';
import { both, mentions, operation, startFaultProxy } from '../../harness/fault-proxy';
import { designSection } from '../support/docs';
import { logLines, withLogLevel } from '../support/logs';
import { dynamoDbStore, dynamoDbStoreAt, freshTable, testDynamoDbEndpoint } from '../support/stores';

const ids = (todos: { id: number }[]) => todos.map((todo) => todo.id);
const values = <T>(results: Written<T>[]) => results.map((result) => result.value);
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe('DynamoDB store under concurrency', () => {
  it('gives 100 parallel creates 100 distinct consecutive ids, all listed in order', async () => {
    const store = dynamoDbStore(await freshTable());
    const created = await Promise.all(range(0, 100).map((i) => store.create({ title: `t${i}` })));
    expect(ids(values(created)).sort((a, b) => a - b)).toEqual(range(3, 100));
    expect(ids(await store.list())).toEqual([1, 2, ...range(3, 100)]);
  });

  it('seeds exactly once when many cold starts race on a new table', async () => {
    const table = await freshTable();
    // Each store instance is one container's cold start.
    const containers = range(0, 20).map(() => dynamoDbStore(table));
    const lists = await Promise.all(containers.map((store) => store.list()));
    for (const list of lists) expect(ids(list)).toEqual([1, 2]);
    const created = await Promise.all(containers.map((store, i) => store.create({ title: `from ${i}` })));
    expect(ids(values(created)).sort((a, b) => a - b)).toEqual(range(3, 20));
  });

  it('never seeds a table twice: a deleted record 1 stays deleted after a restart, and the counter goes on', async () => {
    const table = await freshTable();
    const before = dynamoDbStore(table);
    await before.create({ title: 'three' });
    await before.remove(1);
    await before.remove(3);
    const after = dynamoDbStore(table);
    expect(ids(await after.list())).toEqual([2]);
    expect((await after.create({ title: 'four' })).value.id).toBe(4);
  });

  it('never lets a PUT racing a DELETE resurrect the record', async () => {
    const store = dynamoDbStore(await freshTable());
    for (let round = 0; round < 25; round++) {
      const { id } = (await store.create({ title: `race ${round}` })).value;
      // Both orders of sending: the DELETE first is the one that could resurrect.
      const [updated, removed] =
        round % 2 === 0
          ? await Promise.all([store.update(id, { completed: true }), store.remove(id)])
          : await Promise.all([store.remove(id), store.update(id, { completed: true })]).then(
              ([r, u]) => [u, r] as const,
            );
      expect(removed?.value).toBe(true);
      expect(updated === undefined || updated.value.id === id).toBe(true);
      expect(await store.get(id)).toBeUndefined();
    }
    expect(ids(await store.list())).toEqual([1, 2]);
  });

  it('lists every page, not just the first', async () => {
    const table = await freshTable();
    await Promise.all(range(0, 9).map((i) => dynamoDbStore(table).create({ title: `t${i}` })));
    expect(ids(await dynamoDbStore(table, { pageSize: 2 }).list())).toEqual(range(1, 11));
  });

  it('lists a record as its page found it: a record deleted and one created during a read of several pages may both be shown, as docs/design.md says', async () => {
    const table = await freshTable();
    const network = await startFaultProxy(testDynamoDbEndpoint());
    try {
      const reader = dynamoDbStoreAt(network.endpoint, table, { pageSize: 2 });
      const writer = dynamoDbStore(table);
      for (const title of ['three', 'four', 'five']) await writer.create({ title });
      await reader.list();
      // The read's second page is held on its way while record 1, on the first, goes and record 6 comes.
      const secondPage = both(operation('Query'), mentions('ExclusiveStartKey'));
      let release: () => void = () => undefined;
      network.inject(secondPage, { holdRequest: new Promise<void>((resolve) => (release = resolve)) });
      const listed = reader.list();
      await network.next(secondPage);
      await writer.remove(1);
      await writer.create({ title: 'six' });
      release();
      expect(ids(await listed)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(ids(await reader.list())).toEqual([2, 3, 4, 5, 6]);
      expect(designSection('What a list shows')).toContain(
        'a record deleted during the read may be shown beside one created after it was deleted',
      );
    } finally {
      await network.close();
    }
  });

  it('lists past DynamoDB’s 1 MB page: 3 MB of titles', async () => {
    const store = dynamoDbStore(await freshTable());
    for (let i = 0; i < 30; i++) await store.create({ title: `${i}`.padEnd(100_000, '.') });
    const listed = await store.list();
    expect(listed).toHaveLength(32);
    expect(ids(listed)).toEqual(range(1, 32));
  });
});

describe('DynamoDB store failures', () => {
  const savedEnv = { ...process.env };
  let silent: Server;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    // The SDK resolves region and credentials from the environment, as on Lambda.
    Object.assign(process.env, {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    });
    // Accepts connections and never answers: a DynamoDB that hangs.
    silent = createServer((socket) => sockets.push(socket));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
  });

  afterAll(async () => {
    process.env = savedEnv;
    for (const socket of sockets) socket.destroy();
    silent.close();
    await once(silent, 'close');
  });

  const storeAt = (endpoint: string): DynamoDbTodoStore =>
    dynamoDbStoreFromEnv({ TODOS_TABLE: 'todos', DYNAMODB_ENDPOINT: endpoint });

  async function expect503(store: DynamoDbTodoStore): Promise<void> {
    const response = await invoke(getTodo(store), event({ id: '1' }));
    expect(response.statusCode).toBe(503);
    expect(response.headers).toEqual({ 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
    expect(bodyOf(response)).toEqual({ error: expect.any(String) });
    expect(response.body).not.toMatch(/at |ECONNREFUSED|Timeout/);
  }

  it('answers a JSON 503 with Retry-After when DynamoDB is unreachable', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    await expect(storeAt(closed).list()).rejects.toBeInstanceOf(StoreUnavailable);
    await expect503(storeAt(closed));
  });

  it(
    'answers a JSON 503 within the function timeout when DynamoDB hangs',
    async () => {
      const { port } = silent.address() as { port: number };
      const started = Date.now();
      await expect503(storeAt(`http://127.0.0.1:${port}`));
      // The SDK's three attempts of at most 2 s each, plus backoff, end before the deadline does.
      expect(Date.now() - started).toBeLessThan(FUNCTION_TIMEOUT_MS);
    },
    2 * FUNCTION_TIMEOUT_MS,
  );

  it('answers a JSON 503 when the table does not exist', async () => {
    await expect503(dynamoDbStore('no-such-table'));
  });

  describe('without usable AWS credentials', () => {
    /** A store whose client finds no credentials, as the SDK says it when none is set anywhere. */
    async function withoutCredentials(): Promise<DynamoDbTodoStore> {
      const noCredentials = Object.assign(new Error('Could not load credentials from any providers'), {
        name: 'CredentialsProviderError',
      });
      const client = dynamoDb({
        endpoint: testDynamoDbEndpoint(),
        region: LOCAL_REGION,
        credentials: () => Promise.reject(noCredentials),
      });
      return new DynamoDbTodoStore(client, await freshTable());
    }

    it('answers a JSON 500 that says what to set, off AWS (npm start), and logs one line: no retry can fix it', async () => {
      delete process.env.AWS_EXECUTION_ENV;
      const handler = getTodo(await withoutCredentials());
      let response: Awaited<ReturnType<typeof invoke>> | undefined;
      const lines = await withLogLevel('info', () =>
        logLines(async () => {
          response = await invoke(handler, event({ id: '1' }));
        }),
      );
      const advice =
        'No usable AWS credentials for DynamoDB (CredentialsProviderError): set AWS_PROFILE, or AWS_ACCESS_KEY_ID ' +
        'and AWS_SECRET_ACCESS_KEY (any values do for DynamoDB Local)';
      expect(response?.statusCode).toBe(500);
      expect(response?.headers).toEqual({ 'content-type': 'application/json; charset=utf-8' });
      expect(response && bodyOf(response)).toEqual({ error: advice });
      expect(lines).toEqual([
        expect.objectContaining({
          level: 'error',
          status: 500,
          error: expect.objectContaining({ name: 'StoreMisconfigured', message: advice }),
        }),
      ]);
    });

    it('answers a JSON 503 on a deployed stage, where the function’s role gives them', async () => {
      process.env.AWS_EXECUTION_ENV = 'AWS_Lambda_nodejs22.x';
      try {
        await expect503(await withoutCredentials());
      } finally {
        delete process.env.AWS_EXECUTION_ENV;
      }
    });
  });
});
