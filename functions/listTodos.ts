import { httpHandler, json } from '../lib/http';
import { store } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/** GET /todos: 200, every Todo in list order. */
export const listTodos = (todos: TodoStore) => httpHandler(async () => json(200, await todos.list()));

export const handler = listTodos(store);
