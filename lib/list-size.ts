/**
 * How large the list may grow: GET /todos answers the whole list in one Lambda answer, and Lambda
 * refuses an answer over 6,291,556 bytes (API Gateway then answers every caller 500). The list's
 * JSON travels inside that answer as a JSON string, so each of its quotes and backslashes is
 * escaped again: a record costs its JSON escaped once more. Writes that would take the list past
 * this many bytes (a record's share is `listBytes`, lib/todos.ts) are refused (409), which leaves 291,556 bytes for the answer's status and
 * headers; so no sequence of requests can make the list unanswerable, gzip or not.
 */
export const MAX_LIST_BYTES = 6_000_000;
