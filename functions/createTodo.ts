import { httpHandler, json, jsonBody } from '../lib/http';
import { newTodoTitle } from '../lib/input';
import { store } from '../lib/store';

/** POST /todos: 201 with the new Todo (next id, completed = false); other fields are ignored. */
export const handler = httpHandler(async (event) => json(201, await store.create(newTodoTitle(jsonBody(event)))));
