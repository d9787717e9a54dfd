import { KeyReused, ListFull, PreconditionFailed, checkPrecondition } from './errors';
import { listTag } from './conditional';
import { MAX_LIST_BYTES } from './list-size';
import {
  FIRST_NEW_ID,
  applyPatch,
  changesNothing,
  createTodo,
  listBytes,
  SEED_TODOS,
  type IdempotencyClaim,
  type Todo,
  type TodoStore,
  type WriteOptions,
  type Written,
} from './todos';

/** What a claimed Idempotency-Key keeps: the claim, and the answer its write gave (a 412 or a 409 included). */
interface KeptClaim extends IdempotencyClaim {
  readonly value: unknown;
  readonly refused?: Refused;
}

/** A refusal a key keeps for its retries: a 412 or a 409. */
type Refused = typeof PreconditionFailed | typeof ListFull;

interface MemoryState {
  /** A Map keeps insertion order (the list order) and gives O(1) get, update and delete. */
  readonly todos: Map<number, Todo>;
  nextId: number;
  /** The list's size as GET /todos answers it (lib/list-size.ts). */
  bytes: number;
  /** How large the list may grow: MAX_LIST_BYTES, or a test's smaller limit (resetMemoryStore). */
  maxListBytes: number;
  /** Claimed keys, oldest first: a Map keeps insertion order. */
  readonly claims: Map<string, KeptClaim>;
  /** The list's version, moved by every write, and its name (new at each seed): the list's tag (lib/conditional.ts). */
  version: number;
  listId: string;
}

/**
 * The most keys kept at once: each may hold a record of up to 64 KB, so a flood of keys is
 * bounded at about 64 MB. Past it the oldest is forgotten; a key older than its claim's
 * expiry (KEY_LIFETIME_MS) answers nothing, whether or not it is still kept.
 */
export const MAX_KEPT_CLAIMS = 1_000;

/**
 * serverless-esbuild gives every function its own bundle, so each has its own copy
 * of this module. Keeping the state on globalThis under a registry symbol is what
 * lets all five functions, run in one process (`useInProcess`), share one store;
 * it also lets the state outlive a module that is reloaded in development.
 */
const STATE_KEY: unique symbol = Symbol.for('todo-api.memory-store.state');

interface StateHolder {
  [STATE_KEY]?: MemoryState | undefined;
}

function seed(state: MemoryState, { maxListBytes = MAX_LIST_BYTES }: MemoryStoreOptions = {}): MemoryState {
  state.todos.clear();
  state.claims.clear();
  state.bytes = 0;
  for (const todo of SEED_TODOS) {
    state.todos.set(todo.id, { ...todo });
    state.bytes += listBytes(todo);
  }
  state.nextId = FIRST_NEW_ID;
  state.maxListBytes = maxListBytes;
  state.version = 0;
  state.listId = process.getBuiltinModule('node:crypto').randomUUID();
  return state;
}

const state: MemoryState = ((globalThis as StateHolder)[STATE_KEY] ??= seed({
  todos: new Map(),
  nextId: FIRST_NEW_ID,
  bytes: 0,
  maxListBytes: MAX_LIST_BYTES,
  claims: new Map(),
  version: 0,
  listId: '',
}));
/** The state's maps: a reset clears them, and nothing ever replaces them. */
const { todos, claims } = state;

export interface MemoryStoreOptions {
  /** How large the list may grow, in bytes: MAX_LIST_BYTES unless a test needs a full list of few records. */
  readonly maxListBytes?: number | undefined;
}

/** Puts the shared store back to its start state: records 1 and 2, next id 3, and these options. */
export function resetMemoryStore(options?: MemoryStoreOptions): void {
  seed(state, options);
}

/**
 * A write under an Idempotency-Key: the answer an earlier request with the key got, while the
 * claim lasts (KeyReused when it came with another request); otherwise `write`'s answer, kept
 * with the claim, a PreconditionFailed or ListFull included. Undefined when there is no such record.
 */
function claimed<T>(
  claim: IdempotencyClaim | undefined,
  write: () => T,
  kept: readonly Refused[] = [PreconditionFailed],
): Written<NonNullable<T>> | Extract<T, undefined> {
  const earlier = claim && claims.get(claim.key);
  if (claim && earlier && earlier.expiresAt > Date.now()) {
    if (earlier.fingerprint !== claim.fingerprint) throw new KeyReused();
    return replayOf(earlier) as Written<NonNullable<T>>;
  }
  let value: T;
  try {
    value = write();
  } catch (error) {
    // A refusal is the write's answer, and its retry's, as on DynamoDB (lib/dynamodb/rewrite.ts).
    const refused = kept.find((refusal) => error instanceof refusal);
    if (claim && refused) keep({ ...claim, value: undefined, refused });
    throw error;
  }
  if (value === undefined || value === null) return undefined as Extract<T, undefined>;
  if (claim) keep({ ...claim, value });
  return { value, replayed: false };
}

/** The answer a kept claim gives its request's retry: its value, or its refusal thrown, replayed. */
function replayOf(earlier: KeptClaim): Written<unknown> {
  if (earlier.refused === ListFull) throw new ListFull({ replayed: true, limit: state.maxListBytes });
  if (earlier.refused) throw new earlier.refused({ replayed: true });
  return { value: earlier.value, replayed: true };
}

function keep(kept: KeptClaim): void {
  // An expired key claimed again goes to the back, as the newest; only a new key evicts the oldest.
  claims.delete(kept.key);
  if (claims.size >= MAX_KEPT_CLAIMS) claims.delete(claims.keys().next().value ?? '');
  claims.set(kept.key, kept);
}

// Every change of the list goes through these two, one for each direction of its size
// (state.bytes); each moves the list's version.

/** A record added, or made longer: refused (ListFull) when it takes the list past its limit. */
function grow(bytes: number): void {
  if (state.bytes + bytes > state.maxListBytes) throw new ListFull({ limit: state.maxListBytes });
  state.bytes += bytes;
  state.version += 1;
}

/** A record deleted, or made shorter or no longer: never refused. */
function shrink(bytes: number): void {
  state.bytes -= bytes;
  state.version += 1;
}

// Records are replaced, never mutated, so a record handed out earlier keeps the value it had;
// `Map.set` on an existing key keeps its place in the list. Each operation is a function of its
// own, so that a function's bundle carries only the one it calls (lib/store.ts).

/** The store's answer: at once, but as a promise, as every store answers. */
function now<T>(value: T): Promise<T> {
  return Promise.resolve(value);
}

export const readList: TodoStore['readList'] = (_deadline, held) => {
  const tag = listTag(state.listId, state.version);
  return now(held?.(tag) ? { tag } : { tag, todos: [...todos.values()] });
};

export const get: TodoStore['get'] = (id) => now(todos.get(id));

export const create: TodoStore['create'] = (request, { claim }: WriteOptions = {}) =>
  now(
    claimed(claim, () => {
      const todo = createTodo(request, state.nextId);
      grow(listBytes(todo));
      todos.set(state.nextId++, todo);
      return todo;
    }, [ListFull]),
  );

export const update: TodoStore['update'] = (id, patch, { claim, precondition }: WriteOptions = {}) => {
  // Nothing to change: the answer is the record as it is, and no key is claimed (as on DynamoDB).
  if (changesNothing(patch)) {
    const current = todos.get(id);
    if (current !== undefined) checkPrecondition(precondition, current);
    return now(current && { value: current, replayed: false });
  }
  return now(
    claimed(claim, () => {
      const current = todos.get(id);
      if (current === undefined) return undefined;
      checkPrecondition(precondition, current);
      const todo = applyPatch(current, patch);
      const added = listBytes(todo) - listBytes(current);
      if (added > 0) grow(added);
      else shrink(-added);
      todos.set(id, todo);
      return todo;
    }, [PreconditionFailed, ListFull]),
  );
};

export const remove: TodoStore['remove'] = (id, { claim, precondition }: WriteOptions = {}) =>
  now(
    claimed(claim, () => {
      const current = todos.get(id);
      if (current === undefined) return undefined;
      checkPrecondition(precondition, current);
      shrink(listBytes(current));
      todos.delete(id);
      return true as const;
    }),
  );

export const kept: TodoStore['kept'] = (claim) => {
  const earlier = claims.get(claim.key);
  const forThisRequest = earlier && earlier.expiresAt > Date.now() && earlier.fingerprint === claim.fingerprint;
  const replay = forThisRequest ? (replayOf(earlier) as Written<Todo | undefined>) : undefined;
  return now(replay?.value === undefined ? undefined : { value: replay.value, replayed: true });
};

/** The memory store as one TodoStore, for whatever takes a whole store (the tests, the bench). */
export const memoryStore: TodoStore = { readList, get, create, update, remove, kept };
