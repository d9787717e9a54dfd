import { randomUUID } from 'node:crypto';
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

/** A new, empty table on the shared dynalite: each test gets its own, so nothing leaks between tests. */
export async function freshTable(): Promise<string> {
  const table = `todos-${randomUUID()}`;
  await ensureTable(localClient(dynaliteEndpoint()), table);
  return table;
}

export function dynamoDbStore(
  table: string,
  options: DynamoDbStoreOptions = {},
  endpoint = dynaliteEndpoint(),
): DynamoDbTodoStore {
  const db = documentClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  return new DynamoDbTodoStore(db, table, options);
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
