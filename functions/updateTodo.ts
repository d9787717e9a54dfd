import { found } from '../lib/errors';
import { writeCondition } from '../lib/conditional';
import { answer, bodyText, httpHandler, inputOrKept, todoAnswer } from '../lib/http';
import { idempotencyClaim } from '../lib/idempotency';
import { parseJsonObject, parseTodoId, todoPatch } from '../lib/input';
import { kept, update } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/**
 * PUT /todos/{id}: partial update, 200 with the record after it (and its ETag), or 404; 412 when
 * the record fails If-Match (it changed since the client read it) or If-None-Match, and nothing
 * changes.
 */
function updateTodo(todos: Pick<TodoStore, 'update' | 'kept'>) {
  return httpHandler(async (event, deadline) => {
    const body = bodyText(event);
    const claim = idempotencyClaim(event, body);
    // The body is checked before the id: a malformed request is a 400 whatever its id.
    const read = await inputOrKept(
      claim,
      () => todoPatch(parseJsonObject(body)),
      (key) => todos.kept(key, deadline),
    );
    const id = parseTodoId(event.pathParameters?.id);
    const precondition = writeCondition(event);
    const written =
      'kept' in read ? read.kept : found(await todos.update(id, read.input, { deadline, claim, precondition }));
    return answer(written, (todo) => todoAnswer(200, todo));
  });
}

// `export =`, not `export const`: the bundle then ends in one `module.exports = …` where esbuild
// would otherwise add half a kilobyte of ES-module interop (test/support/routes.ts takes the factory from it).
export = { updateTodo, handler: updateTodo({ update, kept }) };
