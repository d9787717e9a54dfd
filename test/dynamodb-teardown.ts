export default async function dynamoDbTeardown(): Promise<void> {
  await globalThis.testDynamoDb?.close();
  globalThis.testDynamoDb = undefined;
}
