import { found } from '../lib/errors';
import { httpHandler, text, todoId } from '../lib/http';
import { store } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/** DELETE /todos/{id}: 200 with the plain-text body "Deleted", or 404. */
export const deleteTodo = (todos: TodoStore) =>
  httpHandler(async (event, deadline) => {
    found(await todos.remove(todoId(event), deadline));
    return text(200, 'Deleted');
  });

export const handler = deleteTodo(store);
