/**
 * The failures a handler can meet, as types. Each maps to one status code in
 * lib/http.ts, the only place that knows what a client is told about them.
 */

// The client errors carry no `name` of their own: they are answered, never logged with a
// stack, and every byte counts in a 4 KB bundle.

/** A request the client can fix: 400, with this message. */
export class InvalidInput extends Error {}

/** The request body is over MAX_BODY_BYTES: 413. */
export class PayloadTooLarge extends Error {}

/** The id matches no record, or cannot match one: 404 "Todo not found". */
export class TodoNotFound extends Error {}

/** Narrows a store answer: a record (or `true`) when found, otherwise TodoNotFound. */
export function found<T>(value: T | undefined | false): T {
  if (value === undefined || value === false) throw new TodoNotFound();
  return value;
}

/** The store could not answer (unreachable, throttled, failing): 503, and the client may retry. */
export class StoreUnavailable extends Error {
  override readonly name = 'StoreUnavailable';
}
