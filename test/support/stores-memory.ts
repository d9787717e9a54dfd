/**
 * A setup file of the `unit` project: the tests that run on every store (test/support/stores.ts,
 * STORES) run on the memory store alone, so that `npm run test:unit` needs no Java. The
 * `dynamodb` project runs the same files on DynamoDB Local.
 */
process.env.TODO_TEST_STORES = 'memory';
