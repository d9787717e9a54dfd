import { found } from '../lib/errors';
import { writeCondition } from '../lib/conditional';
import { answer, httpHandler, text } from '../lib/http';
import { parseTodoId } from '../lib/input';
import { idempotencyClaim } from '../lib/idempotency';
import { remove } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/**
 * DELETE /todos/{id}: 200 with the plain-text body "Deleted", or 404; 412 when the record fails
 * If-Match (it changed since the client read it) or If-None-Match, and nothing changes.
 */
function deleteTodo(todos: Pick<TodoStore, 'remove'>) {
  return httpHandler(async (event, deadline) => {
    const claim = idempotencyClaim(event, undefined);
    const id = parseTodoId(event.pathParameters?.id);
    const precondition = writeCondition(event);
    return answer(found(await todos.remove(id, { deadline, claim, precondition })), () => text(200, 'Deleted'));
  });
}

// `export =`, not `export const`: the bundle then ends in one `module.exports = …` where esbuild
// would otherwise add half a kilobyte of ES-module interop (test/support/routes.ts takes the factory from it).
export = { deleteTodo, handler: deleteTodo({ remove }) };
