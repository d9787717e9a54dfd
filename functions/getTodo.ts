import { found } from '../lib/errors';
import { httpHandler, json } from '../lib/http';
import { parseTodoId } from '../lib/input';
import { get } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/** GET /todos/{id}: 200 with the Todo, or 404. */
const getTodo = (todos: Pick<TodoStore, 'get'>) =>
  httpHandler(async (event, deadline) =>
    json(200, found(await todos.get(parseTodoId(event.pathParameters?.id), deadline))),
  );

// `export =`, not `export const`: the bundle then ends in one `module.exports = …` where esbuild
// would otherwise add half a kilobyte of ES-module interop, an eighth of the 4 KB budget.
export = { getTodo, handler: getTodo({ get }) };
