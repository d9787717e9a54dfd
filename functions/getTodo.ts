import { found } from '../lib/errors';
import { httpHandler, todoRead } from '../lib/http';
import { parseTodoId } from '../lib/input';
import { get } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/**
 * GET /todos/{id}: 200 with the Todo and its ETag, 304 when If-None-Match names it, 412 when If-Match
 * does not, or 404.
 */
function getTodo(todos: Pick<TodoStore, 'get'>) {
  return httpHandler(async (event, deadline) => {
    const id = parseTodoId(event.pathParameters?.id);
    return todoRead(event, found(await todos.get(id, deadline)));
  });
}

// `export =`, not `export const`: the bundle then ends in one `module.exports = …` where esbuild
// would otherwise add half a kilobyte of ES-module interop (test/support/routes.ts takes the factory from it).
export = { getTodo, handler: getTodo({ get }) };
