import { found } from '../lib/errors';
import { httpHandler, json, todoId } from '../lib/http';
import { store } from '../lib/store';

/** GET /todos/{id}: 200 with the Todo, or 404. */
export const handler = httpHandler(async (event) => json(200, found(await store.get(todoId(event)))));
