/** A setup file of the `dynamodb` project: the tests that run on every store run on DynamoDB Local here (test/support/stores-memory.ts). */
process.env.TODO_TEST_STORES = 'dynamodb';
