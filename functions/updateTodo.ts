import { found } from '../lib/errors';
import { writeCondition } from '../lib/conditional';
import { answer, bodyText, httpHandler, todoAnswer } from '../lib/http';
import { idempotencyClaim } from '../lib/idempotency';
import { parseJsonObject, parseTodoId, todoPatch } from '../lib/input';
import { update } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/**
 * PUT /todos/{id}: partial update, 200 with the record after it (and its ETag), or 404; 412 when
 * the record fails If-Match (it changed since the client read it) or If-None-Match, and nothing
 * changes.
 */
function updateTodo(todos: Pick<TodoStore, 'update'>) {
  return httpHandler(async (event, deadline) => {
    const body = bodyText(event);
    const claim = idempotencyClaim(event, body);
    // The body is checked before the id: a malformed request is a 400 whatever its id.
    const patch = todoPatch(parseJsonObject(body));
    const id = parseTodoId(event.pathParameters?.id);
    const precondition = writeCondition(event);
    return answer(found(await todos.update(id, patch, { deadline, claim, precondition })), (todo) =>
      todoAnswer(200, todo),
    );
  });
}

// `export =`, not `export const`: the bundle then ends in one `module.exports = …` where esbuild
// would otherwise add half a kilobyte of ES-module interop (test/support/routes.ts takes the factory from it).
export = { updateTodo, handler: updateTodo({ update }) };
