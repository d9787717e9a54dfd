/**
 * The domain of docs/spec.md: what a Todo is, the records the service starts with,
 * and the contract every store keeps. Nothing here knows about HTTP.
 */

export interface Todo {
  readonly id: number;
  readonly title: string;
  readonly completed: boolean;
}

/** A partial update: a field is changed only when it is present (docs/spec.md §4, rule 3). */
export interface TodoPatch {
  readonly title?: string;
  readonly completed?: boolean;
}

/** Records 1 and 2 exist at start; their titles are sample text, not part of the contract. */
export const SEED_TODOS: readonly Todo[] = [
  { id: 1, title: 'Read the spec', completed: false },
  { id: 2, title: 'Ship the service', completed: true },
];

/** The first id handed to a created record; ids are never reused after that. */
export const FIRST_NEW_ID = 3;

/**
 * When the caller stops waiting for an answer, in epoch milliseconds (`Date.now()`): a request's
 * deadline is its function's timeout less a margin to answer in (lib/http.ts).
 */
export type Deadline = number;

/**
 * What a write with an Idempotency-Key claims (lib/idempotency.ts): the write and the claim are
 * stored together or not at all, and a later request with the same key gets the first answer.
 */
export interface IdempotencyClaim {
  /** The client's key, as sent (lib/idempotency.ts). */
  readonly key: string;
  /** The request it came with (method, path, If-Match, If-None-Match and body), hashed: the key answers this request only. */
  readonly fingerprint: string;
  /** When the claim may be forgotten, in epoch milliseconds. */
  readonly expiresAt: number;
}

/**
 * What a PUT or DELETE asks of the record before it is written (If-Match and If-None-Match,
 * lib/conditional.ts): true when the record, as it is at the write, meets them (with If-Match,
 * when it is the one the client last read). The store checks it against the very record its write
 * is conditioned on, so the check and the write are one step; when it is false nothing changes,
 * and the store throws PreconditionFailed (412).
 */
export type Precondition = (current: Todo) => boolean;

export interface WriteOptions {
  readonly deadline?: Deadline | undefined;
  readonly claim?: IdempotencyClaim | undefined;
  readonly precondition?: Precondition | undefined;
}

/** A write's result: what it wrote, or, for a retry of a keyed write, what the first one wrote. */
export interface Written<T> {
  readonly value: T;
  /** True when this is the answer of an earlier request with the same Idempotency-Key. */
  readonly replayed: boolean;
}

/**
 * Every store keeps list order (creation order), assigns ids from a counter that
 * never goes back, and answers `undefined` for an id that matches no record.
 * Async because every store worth swapping in (DynamoDB, say) does I/O; a store that does I/O
 * gives up by the deadline (StoreUnavailable) rather than answer after the caller has gone.
 *
 * Writes keep the list within MAX_LIST_BYTES (ListFull), and a write with a claim either is
 * stored with it or, when the key was claimed before, answers what the first write answered
 * (KeyReused when that was a different request). A PUT or DELETE with a precondition that the
 * record fails changes nothing and throws PreconditionFailed; with a claim, its key keeps that
 * answer too, so a retry gets the 412 again.
 */
export interface TodoStore {
  list(deadline?: Deadline): Promise<Todo[]>;
  get(id: number, deadline?: Deadline): Promise<Todo | undefined>;
  /** A new record always starts with completed = false. */
  create(title: string, options?: WriteOptions): Promise<Written<Todo>>;
  update(id: number, patch: TodoPatch, options?: WriteOptions): Promise<Written<Todo> | undefined>;
  remove(id: number, options?: WriteOptions): Promise<Written<true> | undefined>;
}
