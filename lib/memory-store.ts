import { FIRST_NEW_ID, SEED_TODOS, type Todo, type TodoStore } from './todos';

interface MemoryState {
  /** A Map keeps insertion order (the list order) and gives O(1) get, update and delete. */
  readonly todos: Map<number, Todo>;
  nextId: number;
}

/**
 * serverless-esbuild gives every function its own bundle, so each has its own copy
 * of this module. Keeping the state on globalThis under a registry symbol is what
 * lets all five functions, run in one process (`useInProcess`), share one store;
 * it also lets the state outlive a module that is reloaded in development.
 */
const STATE_KEY: unique symbol = Symbol.for('todo-api.memory-store.state');

interface StateHolder {
  [STATE_KEY]?: MemoryState | undefined;
}

function seed(state: MemoryState): MemoryState {
  state.todos.clear();
  for (const todo of SEED_TODOS) state.todos.set(todo.id, { ...todo });
  state.nextId = FIRST_NEW_ID;
  return state;
}

const state: MemoryState = ((globalThis as StateHolder)[STATE_KEY] ??= seed({
  todos: new Map(),
  nextId: FIRST_NEW_ID,
}));

/** Puts the shared store back to its start state: records 1 and 2, next id 3. */
export function resetMemoryStore(): void {
  seed(state);
}

/**
 * Records are replaced, never mutated, so a record handed out earlier keeps the
 * value it had; `Map.set` on an existing key keeps its place in the list.
 */
export const memoryStore: TodoStore = {
  list() {
    return Promise.resolve([...state.todos.values()]);
  },

  get(id) {
    return Promise.resolve(state.todos.get(id));
  },

  create(title) {
    const todo: Todo = { id: state.nextId++, title, completed: false };
    state.todos.set(todo.id, todo);
    return Promise.resolve(todo);
  },

  update(id, patch) {
    const current = state.todos.get(id);
    if (current === undefined) return Promise.resolve(undefined);
    const updated: Todo = {
      id,
      title: patch.title ?? current.title,
      completed: patch.completed ?? current.completed,
    };
    state.todos.set(id, updated);
    return Promise.resolve(updated);
  },

  remove(id) {
    return Promise.resolve(state.todos.delete(id));
  },
};
