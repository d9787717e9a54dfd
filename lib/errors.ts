import { MAX_LIST_BYTES } from './list-size';
import type { Metric } from './metrics';
import type { Precondition, Todo } from './todos';

/**
 * The failures a request can meet, as types, each with what the client is told about it: its
 * status and message. lib/http.ts turns one into the answer, and anything else into a 500.
 *
 * The answer lives with its type, not in a table in lib/http.ts: a failure's status, message and
 * headers are read in one place, and a function's bundle carries the answers of the failures it
 * can meet and no others (a GET has no 409 to give).
 */
export class Refusal extends Error {
  readonly status: number = 400;
  // `declare`: fields that only some refusals have cost no bytes in the others' bundles.
  /** What the client is told, when it is not the message. */
  declare readonly answer?: string;
  /** Headers of the answer beyond its content type. */
  declare readonly headers?: Record<string, string>;
  /** The service's metric it counts for (lib/metrics.ts), if any. */
  declare readonly metric?: Metric;
}

/** A request the client can fix: 400, with the message it is built with. */
export class InvalidInput extends Refusal {}

/** The request body is over MAX_BODY_BYTES: 413. */
export class PayloadTooLarge extends Refusal {
  override readonly status = 413;
}

/** The id matches no record, or cannot match one: 404 "Todo not found" (docs/spec.md §7). */
export class TodoNotFound extends Refusal {
  override readonly status = 404;
  override readonly message = 'Todo not found';
}

/** The header of an answer an Idempotency-Key kept, given again to a retry. */
const REPLAYED = { 'idempotent-replayed': 'true' };

/** The write would take the list past its limit (MAX_LIST_BYTES, lib/list-size.ts, unless a store is given another): 409. */
export class ListFull extends Refusal {
  override readonly status = 409;
  declare readonly headers?: Record<string, string>;
  /** The 409 an Idempotency-Key kept: its claim is written already (the DynamoDB store writes a new one's). */
  readonly replayed: boolean;
  /** The list's limit, in bytes, that the write would have passed. */
  readonly limit: number;

  constructor({ replayed = false, limit = MAX_LIST_BYTES }: { replayed?: boolean; limit?: number } = {}) {
    super(`The list would be larger than ${limit} bytes: delete records or shorten titles`);
    this.replayed = replayed;
    this.limit = limit;
    if (replayed) this.headers = REPLAYED;
  }
}

/** The Idempotency-Key was used with a different request: 422, as the draft says. */
export class KeyReused extends Refusal {
  override readonly status = 422;
  override readonly message = 'Idempotency-Key was used with a different request';
}

/**
 * A condition of the request (If-Match, If-None-Match) does not hold for the record or list as it
 * is, and nothing was written: 412, as RFC 9110 §13.1 says. Which one failed is the request's to
 * say, not the store's that throws this: lib/http.ts answers with lib/conditional.ts's
 * preconditionFailure. Kept under an Idempotency-Key, it is answered again to a retry, which says
 * so as every replay does.
 */
export class PreconditionFailed extends Refusal {
  override readonly status = 412;
  override readonly message = 'A condition of the request does not hold';
  declare readonly headers?: Record<string, string>;

  constructor({ replayed = false }: { replayed?: boolean } = {}) {
    super();
    if (replayed) this.headers = REPLAYED;
  }
}

const RETRY_LATER = { 'retry-after': '1' };

/** A request with this Idempotency-Key is still being written, and its answer is not known in time: 409. */
export class KeyInFlight extends Refusal {
  override readonly status = 409;
  override readonly message = 'A request with this Idempotency-Key is in progress: retry later';
  override readonly headers = RETRY_LATER;
}

/**
 * The store could not answer (unreachable, throttled, failing), or not before the request's
 * deadline: 503, and the client may retry.
 */
export class StoreUnavailable extends Refusal {
  override readonly name = 'StoreUnavailable';
  override readonly status = 503;
  override readonly metric: Metric;
  // `message` stays the store's own, for the log.
  override readonly answer = 'Service temporarily unavailable, please retry';
  override readonly headers = RETRY_LATER;

  constructor(message: string, options: ErrorOptions & { timedOut?: boolean } = {}) {
    super(message, options);
    this.metric = options.timedOut ? 'StoreTimeouts' : 'StoreErrors';
  }
}

/**
 * The store cannot be reached as it is set up (no usable AWS credentials, say): no retry can fix
 * that, so the answer is a 500 that says what to set, not a 503. Only off AWS: on a deployed
 * stage the same failure is the service's, and stays a 503 (lib/dynamodb/store.ts).
 */
export class StoreMisconfigured extends Refusal {
  override readonly name = 'StoreMisconfigured';
  override readonly status = 500;
}

/** A PUT or DELETE's conditions (lib/todos.ts, Precondition): PreconditionFailed when `current` does not meet them. */
export function checkPrecondition(precondition: Precondition | undefined, current: Todo): void {
  if (precondition !== undefined && !precondition(current)) throw new PreconditionFailed();
}

/** Narrows a store answer: a record (or `true`) when found, otherwise TodoNotFound. */
export function found<T>(value: T | undefined | false): T {
  if (value === undefined || value === false) throw new TodoNotFound();
  return value;
}
