import { memoryStore } from './memory-store';
import type { TodoStore } from './todos';

/** Defers loading a store until its first use, and loads it once. */
function lazyStore(load: () => Promise<TodoStore>): TodoStore {
  let loaded: Promise<TodoStore> | undefined;
  const target = () => (loaded ??= load());
  return {
    list: async (deadline) => (await target()).list(deadline),
    get: async (id, deadline) => (await target()).get(id, deadline),
    create: async (title, deadline) => (await target()).create(title, deadline),
    update: async (id, patch, deadline) => (await target()).update(id, patch, deadline),
    remove: async (id, deadline) => (await target()).remove(id, deadline),
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
