import { startDynamoDbLocal, type LocalDynamoDb } from '../scripts/local-dynamodb';
import { DYNAMODB_ENDPOINT_ENV } from './support/stores';

declare global {
  // Read by global-teardown.ts: jest runs both in the same context.
  var testDynamoDb: LocalDynamoDb | undefined;
}

/**
 * One DynamoDB Local (AWS's own implementation) for the whole run, as a CI job has one database:
 * starting the JVM takes a second or more, and every test makes tables of its own on it. Its
 * address reaches the test workers in TODO_TEST_DYNAMODB_ENDPOINT. Without Java 17 this fails,
 * saying what to install.
 */
export default async function globalSetup(): Promise<void> {
  globalThis.testDynamoDb = await startDynamoDbLocal();
  process.env[DYNAMODB_ENDPOINT_ENV] = globalThis.testDynamoDb.endpoint;
}
