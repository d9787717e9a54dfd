import * as memory from './memory-store';
import type { TodoStore } from './todos';

/**
 * The store every deployed handler uses, chosen by configuration: TODO_STORE is `memory`
 * (the default) or `dynamodb`, set from the stage parameter `store` in serverless.yml, which
 * rejects any other value when it packages.
 *
 * serverless.yml also hands that value to esbuild as a constant. Comparing
 * `process.env.TODO_STORE` itself with a literal lets esbuild drop the branch it does not
 * take, so a memory-store bundle holds no DynamoDB code and loads no AWS SDK (the comparison
 * must be written where the branch is: esbuild follows no constant, and a dynamic import left
 * anywhere in a bundle makes it wrap every module). And each operation is exported on its own,
 * so that a function's bundle holds only the one its handler calls.
 */
const dynamoDbStore: () => Promise<TodoStore> =
  process.env.TODO_STORE === 'dynamodb'
    ? () => (loaded ??= import('./dynamodb/store').then((module) => module.dynamoDbStoreFromEnv()))
    : () => Promise.reject(new Error('TODO_STORE is not dynamodb'));
/** The DynamoDB store, loaded on first use and once. */
let loaded: Promise<TodoStore> | undefined;

export const readList: TodoStore['readList'] =
  process.env.TODO_STORE === 'dynamodb'
    ? async (deadline, held) => (await dynamoDbStore()).readList(deadline, held)
    : memory.readList;
export const get: TodoStore['get'] =
  process.env.TODO_STORE === 'dynamodb'
    ? async (id, deadline) => (await dynamoDbStore()).get(id, deadline)
    : memory.get;
export const create: TodoStore['create'] =
  process.env.TODO_STORE === 'dynamodb'
    ? async (request, options) => (await dynamoDbStore()).create(request, options)
    : memory.create;
export const update: TodoStore['update'] =
  process.env.TODO_STORE === 'dynamodb'
    ? async (id, patch, options) => (await dynamoDbStore()).update(id, patch, options)
    : memory.update;
export const kept: TodoStore['kept'] =
  process.env.TODO_STORE === 'dynamodb'
    ? async (claim, deadline) => (await dynamoDbStore()).kept(claim, deadline)
    : memory.kept;
export const remove: TodoStore['remove'] =
  process.env.TODO_STORE === 'dynamodb'
    ? async (id, options) => (await dynamoDbStore()).remove(id, options)
    : memory.remove;
