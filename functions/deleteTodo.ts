import { found } from '../lib/errors';
import { httpHandler, text, todoId } from '../lib/http';
import { store } from '../lib/store';

/** DELETE /todos/{id}: 200 with the plain-text body "Deleted", or 404. */
export const handler = httpHandler(async (event) => {
  found(await store.remove(todoId(event)));
  return text(200, 'Deleted');
});
