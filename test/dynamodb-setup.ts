import { startDynamoDbLocal, type LocalDynamoDb } from './support/dynamodb-local-process';
import { DYNAMODB_ENDPOINT_ENV } from './support/stores';

declare global {
  // Read by dynamodb-teardown.ts: jest runs both in the same context.
  var testDynamoDb: LocalDynamoDb | undefined;
}

/**
 * One DynamoDB Local (AWS's own implementation) for the whole run, as a CI job has one database:
 * starting the JVM takes a second or more, and every test makes tables of its own on it. Its
 * address reaches the test workers in TODO_TEST_DYNAMODB_ENDPOINT. Every project but `unit` has
 * this setup (jest.config.ts), and jest runs it once; without Java 17 it fails, saying what to
 * install.
 */
export default async function dynamoDbSetup(): Promise<void> {
  globalThis.testDynamoDb ??= await startDynamoDbLocal();
  process.env[DYNAMODB_ENDPOINT_ENV] = globalThis.testDynamoDb.endpoint;
}
