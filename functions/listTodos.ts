import { httpHandler, json } from '../lib/http';
import { store } from '../lib/store';

/** GET /todos: 200, every Todo in list order. */
export const handler = httpHandler(async () => json(200, await store.list()));
