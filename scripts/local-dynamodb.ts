import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import {
  CreateTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  waitUntilTableExists,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { TABLE_KEY, dynamoDbClientConfig } from '../lib/dynamodb-store';

/** Any value will do for a local endpoint, but the SDK insists on having some. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
export const LOCAL_REGION = 'us-east-1';

/** The table as serverless.yml's TodosTable declares it; test/system/package.test.ts holds the two together. */
export function tableDefinition(TableName: string): CreateTableCommandInput {
  return {
    TableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: TABLE_KEY.partition, AttributeType: 'S' },
      { AttributeName: TABLE_KEY.sort, AttributeType: 'N' },
    ],
    KeySchema: [
      { AttributeName: TABLE_KEY.partition, KeyType: 'HASH' },
      { AttributeName: TABLE_KEY.sort, KeyType: 'RANGE' },
    ],
  };
}

export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    ...dynamoDbClientConfig(endpoint),
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
}

/** Creates the table unless it is there already, and waits until it can be used. */
export async function ensureTable(client: DynamoDBClient, name: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(tableDefinition(name)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1, maxDelay: 1 }, { TableName: name });
}

export interface LocalDynamoDb {
  readonly endpoint: string;
  close(): Promise<void>;
}

/** An in-memory DynamoDB-compatible server (dynalite) on a free loopback port. */
export async function startDynalite(): Promise<LocalDynamoDb> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
