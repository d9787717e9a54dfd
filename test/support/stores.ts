import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbTodoStore, type DynamoDbStoreOptions } from '../../lib/dynamodb/store';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';
import type { TodoStore } from '../../lib/todos';
import { LOCAL_CREDENTIALS, LOCAL_REGION, ensureTable, localClient } from './dynamodb-local-process';
import { dynamoDb, type DynamoDb } from '../../lib/dynamodb/client';

/** Set by test/dynamodb-setup.ts: the DynamoDB Local that the whole run shares. */
export const DYNAMODB_ENDPOINT_ENV = 'TODO_TEST_DYNAMODB_ENDPOINT';

export interface StoreUnderTest {
  readonly name: 'memory' | 'dynamodb';
  /**
   * A store in its start state: records 1 and 2, next id 3. `maxListBytes` is the one option both stores take (a
   * test that needs a full list of few records); the others are the DynamoDB store's alone.
   */
  fresh(options?: DynamoDbStoreOptions): Promise<TodoStore>;
}

export function testDynamoDbEndpoint(): string {
  const endpoint = process.env[DYNAMODB_ENDPOINT_ENV];
  if (endpoint === undefined) {
    throw new Error(`${DYNAMODB_ENDPOINT_ENV} is not set: is test/dynamodb-setup.ts running?`);
  }
  return endpoint;
}

/** A table name no other test uses. */
export const uniqueTableName = (): string => `todos-${randomUUID()}`;

// One client of each kind per test worker, made on first use: tests create hundreds of tables and stores.
let admin: DynamoDBClient | undefined;
let shared: DynamoDb | undefined;

/** A new, empty table on the shared DynamoDB Local: each test gets its own, so nothing leaks between tests. */
export async function freshTable(): Promise<string> {
  const table = uniqueTableName();
  await ensureTable((admin ??= localClient(testDynamoDbEndpoint())), table);
  return table;
}

/** An AWS SDK document client for `endpoint`, with local credentials: for what a test writes beside the store. */
export function localDocumentClient(endpoint: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(localClient(endpoint));
}

/** The store's own DynamoDB client (lib/dynamodb/client.ts) for `endpoint`, configured as deployed, with local credentials. */
export function localDynamoDb(endpoint: string): DynamoDb {
  return dynamoDb({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
}

/**
 * A store on a table of the shared DynamoDB Local, with the client settings it has when
 * deployed. Each one seeds on its first call, as a container does on its cold start, so several
 * on one table stand for several containers.
 */
export function dynamoDbStore(table: string, options: DynamoDbStoreOptions = {}): DynamoDbTodoStore {
  return new DynamoDbTodoStore((shared ??= localDynamoDb(testDynamoDbEndpoint())), table, options);
}

/**
 * A store on `table` reached through `endpoint` (a fault proxy, say), with a client of its own
 * configured as deployed: a container whose network the test controls.
 */
export function dynamoDbStoreAt(
  endpoint: string,
  table: string,
  options: DynamoDbStoreOptions = {},
): DynamoDbTodoStore {
  return new DynamoDbTodoStore(localDynamoDb(endpoint), table, options);
}

/** Every store implementation. */
const ALL_STORES: readonly StoreUnderTest[] = [
  {
    name: 'memory',
    fresh: (options) => {
      resetMemoryStore({ maxListBytes: options?.maxListBytes });
      return Promise.resolve(memoryStore);
    },
  },
  {
    name: 'dynamodb',
    fresh: async (options) => dynamoDbStore(await freshTable(), options),
  },
];

/**
 * The stores this run tests; handler and store tests run once per entry (`describe.each`). A
 * jest project picks them with TODO_TEST_STORES (jest.config.ts): `unit` the memory store,
 * `dynamodb` DynamoDB Local; a run outside the projects, both.
 */
export const STORES: readonly StoreUnderTest[] = ALL_STORES.filter((store) =>
  (process.env.TODO_TEST_STORES ?? 'memory,dynamodb').split(',').includes(store.name),
);
