import { InvalidInput, TodoNotFound } from './errors';
import type { TodoPatch } from './todos';

export type JsonObject = Readonly<Record<string, unknown>>;

/**
 * The body must be one JSON object. `JSON.parse` makes `__proto__` an own key,
 * never a prototype, and only the named fields below are ever read from it, so
 * no other key can reach a record.
 */
export function parseJsonObject(body: string | undefined): JsonObject {
  if (body === undefined || body === '') throw new InvalidInput('Request body must be a JSON object');
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new InvalidInput('Request body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidInput('Request body must be a JSON object');
  }
  return value as JsonObject;
}

/** POST /todos: `title` is required and must be a string; every other field is ignored. */
export function newTodoTitle(body: JsonObject): string {
  const title = Object.hasOwn(body, 'title') ? body.title : undefined;
  if (typeof title !== 'string') throw new InvalidInput('title is required and must be a string');
  return title;
}

/**
 * PUT /todos/{id}: each field is optional but, when present, must have its type.
 * The whole body is checked before anything changes, so a rejected body changes nothing.
 */
export function todoPatch(body: JsonObject): TodoPatch {
  const patch: { title?: string; completed?: boolean } = {};
  if (Object.hasOwn(body, 'title')) {
    if (typeof body.title !== 'string') throw new InvalidInput('title must be a string');
    patch.title = body.title;
  }
  if (Object.hasOwn(body, 'completed')) {
    if (typeof body.completed !== 'boolean') throw new InvalidInput('completed must be a boolean');
    patch.completed = body.completed;
  }
  return patch;
}

/**
 * SPEC.md §4: the path value goes through `Number(...)`. Anything that is not a
 * positive safe integer (NaN, 1.5, -1, 0, Infinity from "1e309") can match no
 * record, so it is a 404 before any store is asked.
 */
export function parseTodoId(raw: string | undefined): number {
  const id = Number(raw);
  if (!Number.isSafeInteger(id) || id < 1) throw new TodoNotFound();
  return id;
}
