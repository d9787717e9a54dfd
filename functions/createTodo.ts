import { answer, bodyText, created, httpHandler, inputOrKept } from '../lib/http';
import { idempotencyClaim } from '../lib/idempotency';
import { newTodo, parseJsonObject } from '../lib/input';
import { create, kept } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/**
 * POST /todos: 201 with the new Todo (next id, completed = false); other fields are ignored.
 * With an Idempotency-Key, a retry answers the first request's 201 again.
 */
function createTodo(todos: Pick<TodoStore, 'create' | 'kept'>) {
  return httpHandler(async (event, deadline) => {
    const body = bodyText(event);
    const claim = idempotencyClaim(event, body);
    const read = await inputOrKept(
      claim,
      () => newTodo(parseJsonObject(body)),
      (key) => todos.kept(key, deadline),
    );
    const written = 'kept' in read ? read.kept : await todos.create(read.input, { deadline, claim });
    return answer(written, created);
  });
}

// `export =`, not `export const`: the bundle then ends in one `module.exports = …` where esbuild
// would otherwise add half a kilobyte of ES-module interop (test/support/routes.ts takes the factory from it).
export = { createTodo, handler: createTodo({ create, kept }) };
