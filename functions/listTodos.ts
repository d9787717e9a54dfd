import { listCondition } from '../lib/conditional';
import { httpHandler, listAnswer } from '../lib/http';
import { readList } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/**
 * GET /todos: 200, every Todo in list order (gzip-compressed for a client that accepts it), with
 * the list's ETag; 304 when If-None-Match names it; 412 for If-Match other than `*` (the tag is weak).
 */
function listTodos(todos: Pick<TodoStore, 'readList'>) {
  return httpHandler(async (event, deadline) => {
    const held = listCondition(event);
    return listAnswer(event, await todos.readList(deadline, held));
  });
}

// `export =`, not `export const`: the bundle then ends in one `module.exports = …` where esbuild
// would otherwise add half a kilobyte of ES-module interop (test/support/routes.ts takes the factory from it).
export = { listTodos, handler: listTodos({ readList }) };
