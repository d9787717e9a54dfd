import { startOffline, type OfflineServer } from '../../harness/offline';
import { ApiClient } from './client';
import { Contract } from '../../smoke/contract';
import { testDynamoDbEndpoint, uniqueTableName } from './stores';

/** The e2e suites run once per store, each file against servers of its own. */
export const E2E_STORES = ['memory', 'dynamodb'] as const;

export type E2eStore = (typeof E2E_STORES)[number];

/** A running server and a client for it that checks every response against openapi.yaml. */
export interface Service extends OfflineServer {
  readonly api: ApiClient;
}

/**
 * A new server of the service on a free port, started as the README says: `npm start` for the
 * memory store, `npm run start:dynamodb` for DynamoDB (on a new table of the run's DynamoDB
 * Local). It starts from the seeded store: records 1 and 2, next id 3.
 */
export async function startService(store: E2eStore, env: NodeJS.ProcessEnv = {}): Promise<Service> {
  const server =
    store === 'memory'
      ? await startOffline({ script: 'start', env })
      : await startOffline({
          script: 'start:dynamodb',
          env: { DYNAMODB_ENDPOINT: testDynamoDbEndpoint(), TODOS_TABLE: uniqueTableName(), ...env },
        });
  return { ...server, api: new ApiClient(server.url, new Contract()) };
}
