import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbTodoStore, documentClient, type DynamoDbStoreOptions } from '../../lib/dynamodb-store';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';
import type { TodoStore } from '../../lib/todos';
import { LOCAL_CREDENTIALS, LOCAL_REGION, ensureTable, localClient } from '../../scripts/local-dynamodb';

/** Set by test/unit/global-setup.ts: one dynalite for the whole unit run. */
export const DYNALITE_ENV = 'TODO_TEST_DYNAMODB_ENDPOINT';

export interface StoreUnderTest {
  readonly name: 'memory' | 'dynamodb';
  /** A store in its start state: records 1 and 2, next id 3. */
  fresh(options?: DynamoDbStoreOptions): Promise<TodoStore>;
}

export function dynaliteEndpoint(): string {
  const endpoint = process.env[DYNALITE_ENV];
  if (endpoint === undefined) throw new Error(`${DYNALITE_ENV} is not set: is the unit global setup running?`);
  return endpoint;
}

// One client of each kind per test worker, made on first use: tests create hundreds of tables and stores.
let admin: DynamoDBClient | undefined;
let documents: DynamoDBDocumentClient | undefined;

/** A new, empty table on the shared dynalite: each test gets its own, so nothing leaks between tests. */
export async function freshTable(): Promise<string> {
  const table = `todos-${randomUUID()}`;
  await ensureTable((admin ??= localClient(dynaliteEndpoint())), table);
  return table;
}

/**
 * A store on a table of the shared dynalite. Each one seeds on its first call, as a container
 * does on its cold start, so several on one table stand for several containers.
 */
export function dynamoDbStore(table: string, options: DynamoDbStoreOptions = {}): DynamoDbTodoStore {
  documents ??= documentClient({
    endpoint: dynaliteEndpoint(),
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 1,
  });
  return new DynamoDbTodoStore(documents, table, options);
}

/** Every store implementation; handler and store tests run once per entry (`describe.each`). */
export const STORES: readonly StoreUnderTest[] = [
  {
    name: 'memory',
    fresh: () => {
      resetMemoryStore();
      return Promise.resolve(memoryStore);
    },
  },
  {
    name: 'dynamodb',
    fresh: async (options) => dynamoDbStore(await freshTable(), options),
  },
];
