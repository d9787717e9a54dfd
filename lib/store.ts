import { memoryStore } from './memory-store';
import type { TodoStore } from './todos';

/** The store every handler uses. Handlers depend only on the TodoStore interface. */
export const store: TodoStore = memoryStore;
