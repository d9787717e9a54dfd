import { created, httpHandler, jsonBody } from '../lib/http';
import { newTodoTitle } from '../lib/input';
import { store } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/** POST /todos: 201 with the new Todo (next id, completed = false); other fields are ignored. */
export const createTodo = (todos: TodoStore) =>
  httpHandler(async (event, deadline) => created(await todos.create(newTodoTitle(jsonBody(event)), deadline)));

export const handler = createTodo(store);
