import { httpHandler, json } from '../lib/http';
import { store } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/** GET /todos: 200, every Todo in list order. */
export const listTodos = (todos: TodoStore) =>
  httpHandler(async (_event, deadline) => json(200, await todos.list(deadline)));

export const handler = listTodos(store);
