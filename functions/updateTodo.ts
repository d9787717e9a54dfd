import { found } from '../lib/errors';
import { httpHandler, json, jsonBody, todoId } from '../lib/http';
import { todoPatch } from '../lib/input';
import { store } from '../lib/store';

/** PUT /todos/{id}: partial update, 200 with the record after it, or 404. */
export const handler = httpHandler(async (event) => {
  // The body is checked first: a malformed request is a 400 whatever its id.
  const patch = todoPatch(jsonBody(event));
  return json(200, found(await store.update(todoId(event), patch)));
});
