/**
 * Which unit test files (test/unit/<name>.test.ts) need a store, for jest.config.ts's projects:
 * `unit` runs the tests of every store on the memory store and needs no Java; `dynamodb` runs
 * them again on DynamoDB Local, with the DynamoDB store's own.
 *
 * These are the core's: a project started with `npm run starter` has this file and these tests,
 * and its jest.config.ts reads the same lists. The repository's jest.config.ts adds the DynamoDB
 * tests that need its harness (AWS's DynamoDB as modelled, the fault proxy).
 */

/** Test files that run on every store (test/support/stores.ts, STORES). */
export const EVERY_STORE = [
  'conditional',
  'createTodo',
  'deleteTodo',
  'getTodo',
  'idempotency',
  'list-size',
  'listTodos',
  'model',
  'store',
  'updateTodo',
];

/** Test files of the DynamoDB store alone, or of the Java it needs, that need nothing but DynamoDB Local. */
export const DYNAMODB_ONLY = ['dynamodb-local-process', 'dynamodb-log'];
