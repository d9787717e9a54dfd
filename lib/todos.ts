/**
 * The domain of SPEC.md: what a Todo is, the records the service starts with,
 * and the contract every store keeps. Nothing here knows about HTTP.
 */

export interface Todo {
  readonly id: number;
  readonly title: string;
  readonly completed: boolean;
}

/** A partial update: a field is changed only when it is present (SPEC.md §4 rule 3). */
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
 * Every store keeps list order (creation order), assigns ids from a counter that
 * never goes back, and answers `undefined`/`false` for an id that matches no record.
 * Async because every store worth swapping in (DynamoDB, say) does I/O; a store that does I/O
 * gives up by the deadline (StoreUnavailable) rather than answer after the caller has gone.
 */
export interface TodoStore {
  list(deadline?: Deadline): Promise<Todo[]>;
  get(id: number, deadline?: Deadline): Promise<Todo | undefined>;
  /** A new record always starts with completed = false. */
  create(title: string, deadline?: Deadline): Promise<Todo>;
  update(id: number, patch: TodoPatch, deadline?: Deadline): Promise<Todo | undefined>;
  remove(id: number, deadline?: Deadline): Promise<boolean>;
}
