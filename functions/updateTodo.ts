import { found } from '../lib/errors';
import { answer, bodyText, httpHandler, json } from '../lib/http';
import { idempotencyClaim } from '../lib/idempotency';
import { parseJsonObject, parseTodoId, todoPatch } from '../lib/input';
import { update } from '../lib/store';
import type { TodoStore } from '../lib/todos';

/** PUT /todos/{id}: partial update, 200 with the record after it, or 404. */
function updateTodo(todos: Pick<TodoStore, 'update'>) {
  return httpHandler(async (event, deadline) => {
    const body = bodyText(event);
    const claim = idempotencyClaim(event, body);
    // The body is checked before the id: a malformed request is a 400 whatever its id.
    const patch = todoPatch(parseJsonObject(body));
    const id = parseTodoId(event.pathParameters?.id);
    return answer(found(await todos.update(id, patch, { deadline, claim })), (todo) => json(200, todo));
  });
}

// `export =`, not `export const`: the bundle then ends in one `module.exports = …` where esbuild
// would otherwise add half a kilobyte of ES-module interop (harness/routes.ts takes the factory from it).
export = { updateTodo, handler: updateTodo({ update }) };
