/**
 * The domain of docs/spec.md: what a Todo is, the records the service starts with,
 * and the contract every store keeps. Nothing here knows about HTTP.
 */

// Every rule about a Todo's fields is in this file: what a POST asks for, what a PUT may change,
// the record they make, its JSON and its size in the list. Everything else (the stores, the
// queue, the HTTP edge) carries these values whole and names no field, so that a new field costs
// its type, its validation (lib/input.ts) and its lines here (docs/contributing.md, "Adding a field").

/** What a POST asks for (docs/spec.md §4): the fields a client sets on create. lib/input.ts makes it from a body. */
export interface NewTodo {
  readonly title: string;
}

/** A record, as every answer gives it. */
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

/**
 * The longest title a client may set, in Unicode characters: code points, as JSON Schema's
 * `maxLength` counts them (an emoji is one, where JavaScript's `length` says two). The spec leaves
 * it open; a well-made API refuses an absurd title with a clear 400, as Google Tasks, Microsoft To
 * Do and Todoist do. openapi.yaml's `maxLength` is this figure (test/unit/openapi.test.ts holds them
 * together), and lib/input.ts refuses a longer title.
 */
export const MAX_TITLE_LENGTH = 1_000;

/** A title's length as MAX_TITLE_LENGTH counts it: its code points. */
export function titleLength(title: string): number {
  // A string's iterator steps by code point: a surrogate pair is one character. Code points, not graphemes (which
  // the lint rule would have): JSON Schema's maxLength counts code points, and a client's validator with it.
  // eslint-disable-next-line @typescript-eslint/no-misused-spread
  return [...title].length;
}

/**
 * The record out of anything that holds its fields (a stored item, say), in the answer's field
 * order, and nothing else: the ETag is taken from the record's JSON, so one record must always be
 * the same bytes, and DynamoDB keeps a map's fields in no order.
 */
export function recordOf(fields: Todo): Todo {
  const { id, title, completed } = fields;
  return { id, title, completed };
}

/** The record a POST makes: what it asked for, with its id; a new record is never completed. */
export function createTodo(request: NewTodo, id: number): Todo {
  return recordOf({ ...request, id, completed: false });
}

/** The record after a PUT: the fields the patch names, the others as they were. */
export function applyPatch(current: Todo, patch: TodoPatch): Todo {
  const named = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
  return recordOf({ ...current, ...named });
}

/** A PUT that names no field: it writes nothing, and answers the record as it is. */
export function changesNothing(patch: TodoPatch): boolean {
  return Object.values(patch).every((value) => value === undefined);
}

/** The record's JSON: its answer's body, and its ETag's source (lib/conditional.ts). */
export function todoJson(todo: Todo): string {
  return JSON.stringify(todo);
}

/**
 * What a record adds to the list's answer, in bytes (lib/list-size.ts says why the list has a
 * limit): its JSON, as a string inside the answer's JSON (so each quote and backslash is escaped
 * once more), and a comma. `completed` counts as `false`, the longer of the two, so that a PUT of
 * `completed` alone never changes the size.
 */
export function listBytes(todo: Todo): number {
  const json = todoJson({ ...todo, completed: false });
  return Buffer.byteLength(JSON.stringify(json)) - QUOTES + COMMA;
}

/** The most a record made from `request` adds to the list, whatever id it gets: what a write sizes before it has one. */
export function newTodoBytes(request: NewTodo): number {
  return listBytes(createTodo(request, Number.MAX_SAFE_INTEGER));
}

/**
 * A record before it has its id, as a queued POST's writer made it (lib/dynamodb/queue.ts), told
 * by how it differs from the POST's request, which rides beside it: the fields the record holds
 * otherwise than asked (`fields`: `completed`, a default), those of the request it does not hold
 * (`omit`), and its bytes in the list as its writer counts them at id 0. A commit of any version
 * numbers it and writes it whole, fields that version does not know included, from the request and
 * this difference alone; the request is not stored twice (an intent rides in the queue's looks,
 * which read its items whole).
 */
export interface TodoDraft {
  readonly fields: Readonly<Record<string, unknown>>;
  readonly omit?: readonly string[];
  readonly bytes: number;
}

/** The draft of the record `request` makes. */
export function draftOf(request: NewTodo): TodoDraft {
  const placeholder = createTodo(request, 0);
  const asked: Readonly<Record<string, unknown>> = { ...request };
  const held = Object.entries(placeholder).filter(([field]) => field !== 'id');
  const fields = held.filter(([field, value]) => JSON.stringify(asked[field]) !== JSON.stringify(value));
  const omit = Object.keys(asked).filter((field) => !(field in placeholder));
  return { fields: Object.fromEntries(fields), ...(omit.length > 0 && { omit }), bytes: listBytes(placeholder) };
}

/**
 * The record a draft and its request make with `id`, and its bytes in the list. Every field is kept
 * as the writer made it (no `recordOf`, which keeps only this version's fields); the id is a JSON
 * number, its decimal digits where the placeholder 0 took one.
 */
export function numbered(draft: TodoDraft, request: NewTodo, id: number): { todo: Todo; bytes: number } {
  const asked = Object.entries(request).filter(([field]) => !draft.omit?.includes(field));
  const todo = { ...Object.fromEntries(asked), ...draft.fields, id } as unknown as Todo;
  return { todo, bytes: draft.bytes + String(id).length - 1 };
}

/**
 * What the code before records kept their size counted a record at (up to commit f2aa2fc): its id,
 * title and completed, sized as listBytes sized them then. A record that code wrote, or last PUT,
 * has no stored `size`, and the counter, which that code moved, counts it at this figure
 * (lib/dynamodb/table.ts, storedSize). Frozen: it must not follow a new field, or the list's size
 * would no longer be the sum of what is stored (docs/design.md, "Two versions on one table").
 */
export function sizelessBytes({ id, title }: { readonly id: number; readonly title: string }): number {
  const json = JSON.stringify({ id, title, completed: false });
  return Buffer.byteLength(JSON.stringify(json)) - QUOTES + COMMA;
}

/** The quotes JSON.stringify puts around a string, which the list's JSON does not have around each record. */
const QUOTES = 2;
/** Each record but the last is followed by a comma; the last one's byte goes to the list's brackets. */
const COMMA = 1;

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

/** A list as a store answers it. */
export interface TodoList {
  /**
   * The list's entity tag (lib/conditional.ts, listTag): taken from the list's version, which
   * every write moves, so one tag names one state of the list, and a store tells it from a
   * small read, without reading the records.
   */
  readonly tag: string;
  /** Every record, in list order; absent when the caller said it holds the list with this tag. */
  readonly todos?: readonly Todo[];
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
  /**
   * The list, one snapshot of it, with its tag. `held` is asked the tag first: when it answers
   * true (the caller holds the list with that tag: If-None-Match), the answer is the tag alone.
   */
  readList(deadline?: Deadline, held?: (tag: string) => boolean): Promise<TodoList>;
  get(id: number, deadline?: Deadline): Promise<Todo | undefined>;
  /** The record is `createTodo(request, id)` with the next id. */
  create(request: NewTodo, options?: WriteOptions): Promise<Written<Todo>>;
  update(id: number, patch: TodoPatch, options?: WriteOptions): Promise<Written<Todo> | undefined>;
  remove(id: number, options?: WriteOptions): Promise<Written<true> | undefined>;
  /**
   * What `claim`'s key keeps for this very request (the same fingerprint), if it holds a record: that record, replayed;
   * a refusal it keeps (412, 409) is thrown, replayed. Undefined when the key holds nothing for this request. For a
   * request this version refuses that another version took (lib/http.ts, inputOrKept).
   */
  kept(claim: IdempotencyClaim, deadline?: Deadline): Promise<Written<Todo> | undefined>;
}
