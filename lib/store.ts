import { memoryStore } from './memory-store';
import type { TodoStore } from './todos';

/** Defers loading a store until its first use, and loads it once. */
function lazyStore(load: () => Promise<TodoStore>): TodoStore {
  let loaded: Promise<TodoStore> | undefined;
  const target = () => (loaded ??= load());
  return {
    list: async () => (await target()).list(),
    get: async (id) => (await target()).get(id),
    create: async (title) => (await target()).create(title),
    update: async (id, patch) => (await target()).update(id, patch),
    remove: async (id) => (await target()).remove(id),
  };
}

/**
 * The store every deployed handler uses, chosen by configuration: TODO_STORE is `memory`
 * (the default) or `dynamodb`, set from the stage parameter `store` in serverless.yml, which
 * rejects any other value when it packages.
 *
 * serverless.yml also hands that value to esbuild as a constant. Comparing
 * `process.env.TODO_STORE` itself with a literal lets esbuild drop the branch it does not
 * take, so a memory-store bundle holds no DynamoDB code and loads no AWS SDK.
 */
export const store: TodoStore =
  process.env.TODO_STORE === 'dynamodb'
    ? lazyStore(async () => (await import('./dynamodb-store')).dynamoDbStoreFromEnv())
    : memoryStore;
