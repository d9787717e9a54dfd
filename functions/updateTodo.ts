import { found } from '../lib/errors';
import { httpHandler, json, jsonBody, todoId } from '../lib/http';
import { todoPatch } from '../lib/input';
import { store } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/** PUT /todos/{id}: partial update, 200 with the record after it, or 404. */
export const updateTodo = (todos: TodoStore) =>
  httpHandler(async (event, deadline) => {
    // The body is checked first: a malformed request is a 400 whatever its id.
    const patch = todoPatch(jsonBody(event));
    return json(200, found(await todos.update(todoId(event), patch, deadline)));
  });

export const handler = updateTodo(store);
