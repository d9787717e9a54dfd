import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getTodo } from '../support/routes';
import { dynamoDb } from '../../lib/dynamodb/client';
import { EDIT_SLOTS } from '../../lib/dynamodb/counter';
import { DynamoDbTodoStore, dynamoDbStoreFromEnv } from '../../lib/dynamodb/store';
import { StoreUnavailable } from '../../lib/errors';
import type { Written } from '../../lib/todos';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../support/dynamodb-local-process';
import { FUNCTION_TIMEOUT_MS, bodyOf, event, invoke } from '../support/event';
import { freePort } from '../../harness/project';
import { both, mentions, operation, startFaultProxy } from '../../harness/fault-proxy';
import { designSection } from '../support/docs';
import { logLines, withLogLevel } from '../support/logs';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SHARED_KEY } from '../../lib/dynamodb/list';
import { etagOf, listTag } from '../../lib/conditional';
import {
  dynamoDbStore,
  dynamoDbStoreAt,
  freshTable,
  localDocumentClient,
  testDynamoDbEndpoint,
} from '../support/stores';
import { recordsOf } from '../support/records';

const ids = (todos: { id: number }[]) => todos.map((todo) => todo.id);
const values = <T>(results: Written<T>[]) => results.map((result) => result.value);
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe('DynamoDB store under concurrency', () => {
  it('gives 100 parallel creates 100 distinct consecutive ids, all listed in order', async () => {
    const store = dynamoDbStore(await freshTable());
    const created = await Promise.all(range(0, 100).map((i) => store.create({ title: `t${i}` })));
    expect(ids(values(created)).sort((a, b) => a - b)).toEqual(range(3, 100));
    expect(ids(await recordsOf(store))).toEqual([1, 2, ...range(3, 100)]);
  });

  it('seeds exactly once when many cold starts race on a new table', async () => {
    const table = await freshTable();
    // Each store instance is one container's cold start.
    const containers = range(0, 20).map(() => dynamoDbStore(table));
    const lists = await Promise.all(containers.map((store) => recordsOf(store)));
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
    expect(ids(await recordsOf(after))).toEqual([2]);
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
    expect(ids(await recordsOf(store))).toEqual([1, 2]);
  });

  it('lists every page, not just the first', async () => {
    const table = await freshTable();
    await Promise.all(range(0, 9).map((i) => dynamoDbStore(table).create({ title: `t${i}` })));
    expect(ids(await recordsOf(dynamoDbStore(table, { pageSize: 2 })))).toEqual(range(1, 11));
  });

  it('lists one snapshot across pages: a record deleted and one created while its second page is held are not both shown', async () => {
    const table = await freshTable();
    const network = await startFaultProxy(testDynamoDbEndpoint());
    try {
      const writer = dynamoDbStore(table);
      for (const title of ['three', 'four', 'five']) await writer.create({ title });
      // A container that holds no list yet: it reads the whole list, two records a page.
      const reader = dynamoDbStoreAt(network.endpoint, table, { pageSize: 2 });
      // The read's second page is held on its way while record 1, on the first, goes and record 6 comes.
      const secondPage = both(operation('Query'), mentions('ExclusiveStartKey'));
      let release: () => void = () => undefined;
      network.inject(secondPage, { holdRequest: new Promise<void>((resolve) => (release = resolve)) });
      const listed = recordsOf(reader);
      await network.next(secondPage);
      await writer.remove(1);
      await writer.create({ title: 'six' });
      release();
      // The pages alone show 1 to 6, a list that never was; the counter after them says which
      // records changed, and the list answered is the list as it is after both writes.
      expect(ids(await listed)).toEqual([2, 3, 4, 5, 6]);
      expect(designSection('What a list shows')).toContain('never a state that did not exist');
    } finally {
      await network.close();
    }
  });

  it('reads only what changed since the list it holds: the records POSTs added and those PUTs and DELETEs edited', async () => {
    const table = await freshTable();
    const network = await startFaultProxy(testDynamoDbEndpoint());
    try {
      const writer = dynamoDbStore(table);
      const reader = dynamoDbStoreAt(network.endpoint, table);
      const first = await recordsOf(reader);
      const held = network.seen.length;
      await writer.create({ title: 'three' });
      await writer.update(2, { title: 'retitled' });
      await writer.remove(1);
      const second = await recordsOf(reader);
      const requests = network.seen.slice(held).map((seen) => seen.operation);
      // The counter, the records from id 3 on and records 1 and 2 by key, the counter again: no whole list.
      expect([...requests].sort()).toEqual(['GetItem', 'GetItem', 'GetItem', 'GetItem', 'Query']);
      expect(network.seen.slice(held).find((seen) => seen.operation === 'Query')?.body).toContain('ExclusiveStartKey');
      // Byte for byte what a container that held nothing reads.
      expect(JSON.stringify(second)).toBe(JSON.stringify(await recordsOf(dynamoDbStore(table))));
      expect(ids(first)).toEqual([1, 2]);
      expect(ids(second)).toEqual([2, 3]);
      // Unchanged since: the counter alone.
      const before = network.seen.length;
      expect(await recordsOf(reader)).toEqual(second);
      expect(network.seen.slice(before).map((seen) => seen.operation)).toEqual(['GetItem']);
    } finally {
      await network.close();
    }
  });

  it('starts a new container from the list another shared, read eventually consistent, and reads only what changed since; never one of another list, or shown otherwise', async () => {
    const table = await freshTable();
    const network = await startFaultProxy(testDynamoDbEndpoint());
    const documents = localDocumentClient(testDynamoDbEndpoint());
    try {
      // Every list that reads a record shares it: the first reads the whole list.
      const sharer = dynamoDbStore(table, { sharedAfterBytes: 0 });
      await recordsOf(sharer);
      const shared = await documents.send(new GetCommand({ TableName: table, Key: SHARED_KEY }));
      expect(shared.Item).toMatchObject({ listId: expect.any(String), version: expect.any(Number), next: 3 });
      const writer = dynamoDbStore(table);
      await writer.create({ title: 'three' });
      await writer.update(2, { title: 'retitled' });
      /** A new container's list, and whether it read the whole list (a Query from the first record). */
      async function newContainerList() {
        const from = network.seen.length;
        const listed = await recordsOf(dynamoDbStoreAt(network.endpoint, table));
        const sent = network.seen.slice(from);
        const queries = sent.filter(operation('Query'));
        return {
          listed,
          whole: queries.some((seen) => !seen.body.includes('ExclusiveStartKey')),
          sharedRead: sent
            .filter(mentions('SHARED'))
            .map((seen) => (JSON.parse(seen.body) as { ConsistentRead?: boolean }).ConsistentRead),
        };
      }
      const expected = JSON.stringify(await recordsOf(dynamoDbStore(table)));
      const started = await newContainerList();
      expect({ ...started, listed: JSON.stringify(started.listed) }).toEqual({
        listed: expected,
        whole: false,
        sharedRead: [false],
      });
      // The same item, unusable: of a table made again, shown by other code.
      const item = shared.Item ?? {};
      for (const unusable of [
        { ...item, listId: 'another list', tag: listTag('another list', Number(item.version)) },
        { ...item, tag: 'W/"shown otherwise"' },
      ]) {
        await documents.send(new PutCommand({ TableName: table, Item: unusable }));
        const listed = await newContainerList();
        expect({ ...listed, listed: JSON.stringify(listed.listed) }).toEqual({
          listed: expected,
          whole: true,
          sharedRead: [false],
        });
      }
      // A list of a later version replaces it; one shared at a later version stays: sharing never goes back.
      const sharedNow = async () => (await documents.send(new GetCommand({ TableName: table, Key: SHARED_KEY }))).Item;
      await recordsOf(sharer);
      expect(await sharedNow()).toMatchObject({ version: Number(item.version) + 2, next: 4 });
      const later = { ...item, version: Number(item.version) + 100 };
      const laterItem = { ...later, tag: listTag(String(item.listId), later.version) };
      await documents.send(new PutCommand({ TableName: table, Item: laterItem }));
      expect(JSON.stringify(await recordsOf(dynamoDbStore(table, { sharedAfterBytes: 0 })))).toBe(expected);
      expect(await sharedNow()).toEqual(laterItem);
    } finally {
      await network.close();
    }
  });

  it('reads the whole list again when more records were edited than the counter tells apart', async () => {
    const table = await freshTable();
    const network = await startFaultProxy(testDynamoDbEndpoint());
    try {
      const writer = dynamoDbStore(table);
      // Records 1 to EDIT_SLOTS + 3: 3 and 3 + EDIT_SLOTS share a slot.
      for (let i = 0; i <= EDIT_SLOTS; i++) await writer.create({ title: `${i}` });
      const reader = dynamoDbStoreAt(network.endpoint, table);
      await recordsOf(reader);
      // Two edits of records in one slot: the slot tells the last only.
      await writer.update(3, { title: 'first' });
      await writer.update(3 + EDIT_SLOTS, { title: 'second' });
      const held = network.seen.length;
      const listed = await recordsOf(reader);
      const queries = network.seen.slice(held).filter((seen) => seen.operation === 'Query');
      expect(queries.map((seen) => seen.body.includes('ExclusiveStartKey'))).toEqual([false]);
      expect(JSON.stringify(listed)).toBe(JSON.stringify(await recordsOf(dynamoDbStore(table))));
    } finally {
      await network.close();
    }
  });

  it('answers a conditional list from the counter alone: 304 for the tag it gave, with no record read', async () => {
    const table = await freshTable();
    const network = await startFaultProxy(testDynamoDbEndpoint());
    try {
      const reader = dynamoDbStoreAt(network.endpoint, table);
      const { tag, todos } = await dynamoDbStore(table).readList();
      expect(ids([...(todos ?? [])])).toEqual([1, 2]);
      // A new container: its seed's read of the counter is the list's, and the only read.
      const before = network.seen.length;
      expect(await reader.readList(undefined, (current) => current === tag)).toEqual({ tag });
      expect(network.seen.slice(before).map((seen) => seen.operation)).toEqual(['GetItem']);
      await dynamoDbStore(table).update(1, { completed: true });
      const after = await reader.readList(undefined, (current) => current === tag);
      expect(after.tag).not.toBe(tag);
      expect(after.todos?.[0]).toMatchObject({ id: 1, completed: true });
    } finally {
      await network.close();
    }
  });

  it('reads the whole list every time while code from before list versions may write (listVersion written)', async () => {
    const table = await freshTable();
    const trusting = dynamoDbStore(table);
    const wary = dynamoDbStore(table, { listVersion: 'written' });
    await recordsOf(trusting);
    await recordsOf(wary);
    // A PUT of the code before list versions: the record changes, the counter's version does not.
    await localDocumentClient(testDynamoDbEndpoint()).send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: 'TODO', id: 1 },
        UpdateExpression: 'SET title = :title',
        ExpressionAttributeValues: { ':title': 'written by the version before' },
      }),
    );
    // The container that trusts the version answers the list it holds: why a stage upgraded from
    // that code takes two deploys (docs/operations.md). The wary one reads it, and tags it by its content.
    expect((await recordsOf(trusting))[0]?.title).not.toBe('written by the version before');
    const { tag, todos } = await wary.readList();
    expect(todos?.[0]?.title).toBe('written by the version before');
    expect(tag).toBe(`W/${etagOf(JSON.stringify(todos))}`);
  });

  it('lists past DynamoDB’s 1 MB page: 3 MB of titles', async () => {
    const store = dynamoDbStore(await freshTable());
    for (let i = 0; i < 30; i++) await store.create({ title: `${i}`.padEnd(100_000, '.') });
    const listed = await recordsOf(store);
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
    await expect(recordsOf(storeAt(closed))).rejects.toBeInstanceOf(StoreUnavailable);
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
