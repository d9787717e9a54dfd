import { InvalidInput, PayloadTooLarge, TodoNotFound } from './errors';
import { MAX_TITLE_LENGTH, titleLength, type NewTodo, type TodoPatch } from './todos';

export type JsonObject = Readonly<Record<string, unknown>>;

/**
 * The largest request body accepted, in UTF-8 bytes: room for a title of MAX_TITLE_LENGTH
 * characters however it is escaped (six bytes for `\u0000`), and fields this version ignores
 * (a newer client's), while a body past it costs no parse.
 */
export const MAX_BODY_BYTES = 64 * 1024;

/** What a body that is not one JSON object is told, whether it is missing or JSON of another kind. */
const NOT_AN_OBJECT = 'Request body must be a JSON object';

/**
 * The body must be one JSON object, of at most MAX_BODY_BYTES. `JSON.parse` makes `__proto__`
 * an own key, never a prototype, and only the named fields below are ever read from it, so no
 * other key can reach a record.
 */
export function parseJsonObject(body: string | undefined): JsonObject {
  // No body is no object: refused as one. `!body`, not `=== undefined`: serverless-offline sends
  // `null` for a request without one, and an empty body is none either.
  if (!body) throw new InvalidInput(NOT_AN_OBJECT);
  if (Buffer.byteLength(body) > MAX_BODY_BYTES) {
    throw new PayloadTooLarge(`Request body is larger than ${MAX_BODY_BYTES} bytes`);
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new InvalidInput('Request body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidInput(NOT_AN_OBJECT);
  return value as JsonObject;
}

/**
 * A title must be well-formed Unicode: JSON may carry a lone surrogate (`"\udc00"`), but DynamoDB
 * keeps strings as UTF-8, which cannot encode one, so it could not be stored as sent on AWS. And it
 * is at most MAX_TITLE_LENGTH characters (lib/todos.ts says how they are counted). Both stores refuse
 * either alike, here.
 */
function checkTitle(title: string): string {
  if (!title.isWellFormed()) throw new InvalidInput('title must be well-formed Unicode (no lone surrogates)');
  if (titleLength(title) > MAX_TITLE_LENGTH) {
    throw new InvalidInput(`title must be at most ${MAX_TITLE_LENGTH} characters`);
  }
  return title;
}

/** POST /todos: `title` is required and must be a string; every other field is ignored. */
export function newTodo(body: JsonObject): NewTodo {
  const title = Object.hasOwn(body, 'title') ? body.title : undefined;
  if (typeof title !== 'string') throw new InvalidInput('title is required and must be a string');
  return { title: checkTitle(title) };
}

/**
 * PUT /todos/{id}: each field is optional but, when present, must have its type (and a title be
 * well-formed).
 * The whole body is checked before anything changes, so a rejected body changes nothing.
 */
export function todoPatch(body: JsonObject): TodoPatch {
  const patch: Record<string, unknown> = {};
  for (const [field, type] of [
    ['title', 'string'],
    ['completed', 'boolean'],
  ] as const) {
    if (!Object.hasOwn(body, field)) continue;
    if (typeof body[field] !== type) throw new InvalidInput(`${field} must be a ${type}`);
    patch[field] = body[field];
  }
  if (typeof patch.title === 'string') checkTitle(patch.title);
  return patch;
}

/**
 * docs/spec.md §4: the path value goes through `Number(...)`. Anything that is not a
 * positive safe integer (NaN, 1.5, -1, 0, Infinity from "1e309") can match no
 * record, so it is a 404 before any store is asked.
 */
export function parseTodoId(raw: string | undefined): number {
  const id = Number(raw);
  if (!Number.isSafeInteger(id) || id < 1) throw new TodoNotFound();
  return id;
}
