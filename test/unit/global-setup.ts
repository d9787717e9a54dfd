import { startDynalite, type LocalDynamoDb } from '../../scripts/local-dynamodb';
import { DYNALITE_ENV } from '../support/stores';

declare global {
  // Read by global-teardown.ts: jest runs both in the same context.
  var unitDynalite: LocalDynamoDb | undefined;
}

/** One in-memory dynalite on loopback for the DynamoDB half of the unit tests. */
export default async function globalSetup(): Promise<void> {
  globalThis.unitDynalite = await startDynalite();
  process.env[DYNALITE_ENV] = globalThis.unitDynalite.endpoint;
}
