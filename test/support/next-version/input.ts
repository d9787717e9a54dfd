import { InvalidInput } from '../../../lib/errors';
import * as current from '../../../lib/input';
import { PRIORITIES, type NewTodo, type Priority, type TodoPatch } from './todos';

// Version N+1 of lib/input.ts, for the deploy tests only (test/support/next-version/todos.ts says
// why): lib/input.ts's validation, imported (the body, the title and its cap, completed, the id), and
// `priority`'s, the one rule N+1 adds.

export { MAX_BODY_BYTES, parseJsonObject, parseTodoId, type JsonObject } from '../../../lib/input';

/** A priority, if the body has one: one of PRIORITIES. */
function checkPriority(value: unknown): Priority {
  const known: readonly unknown[] = PRIORITIES;
  if (!known.includes(value)) throw new InvalidInput(`priority must be one of ${PRIORITIES.join(', ')}`);
  return value as Priority;
}

/** POST /todos: lib/input.ts's fields, and `priority`, optional; every other field is ignored. */
export function newTodo(body: current.JsonObject): NewTodo {
  const request = current.newTodo(body);
  const priority = Object.hasOwn(body, 'priority') ? checkPriority(body.priority) : undefined;
  return { ...request, ...(priority === undefined ? {} : { priority }) };
}

/**
 * PUT /todos/{id}: lib/input.ts's fields, and `priority`, each optional but, when present, valid.
 * The whole body is checked before anything changes, so a rejected body changes nothing.
 */
export function todoPatch(body: current.JsonObject): TodoPatch {
  const patch = current.todoPatch(body);
  return Object.hasOwn(body, 'priority') ? { ...patch, priority: checkPriority(body.priority) } : patch;
}
