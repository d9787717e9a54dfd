import type { Todo } from './todos';

/**
 * How large the list may grow: GET /todos answers the whole list in one Lambda answer, and Lambda
 * refuses an answer over 6,291,556 bytes (API Gateway then answers every caller 500). The list's
 * JSON travels inside that answer as a JSON string, so each of its quotes and backslashes is
 * escaped again: a record costs its JSON escaped once more. Writes that would take the list past
 * this many bytes are refused (409), which leaves 291,556 bytes for the answer's status and
 * headers; so no sequence of requests can make the list unanswerable, gzip or not.
 */
export const MAX_LIST_BYTES = 6_000_000;

/**
 * What a record adds to the list's answer, in bytes: its JSON, as a string inside the answer's
 * JSON, and a comma. `completed` counts as `false`, the longer of the two, so that a PUT of
 * `completed` alone never changes the size.
 */
export function listBytes({ id, title }: Pick<Todo, 'id' | 'title'>): number {
  // Most titles are plain: the sum, without the two JSON.stringify calls (about 1 µs a write).
  if (PLAIN.test(title)) return RECORD_BYTES + String(id).length + title.length;
  return Buffer.byteLength(JSON.stringify(JSON.stringify({ id, title, completed: false }))) - 1;
}

/** Characters that JSON writes as they are, escaped once or twice: printable ASCII but `"` and `\`. */
const PLAIN = /^[ !#-[\]-~]*$/;
/** `{"id":,"title":"","completed":false}` with its 8 quotes escaped, 2 quotes around it, and a comma, less the one after the last. */
const RECORD_BYTES = 36 + 8 + 2 - 1;
