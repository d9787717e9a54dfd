import { found } from '../lib/errors';
import { httpHandler, json, todoId } from '../lib/http';
import { store } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/** GET /todos/{id}: 200 with the Todo, or 404. */
export const getTodo = (todos: TodoStore) =>
  httpHandler(async (event, deadline) => json(200, found(await todos.get(todoId(event), deadline))));

export const handler = getTodo(store);
