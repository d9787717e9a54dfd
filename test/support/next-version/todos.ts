/**
 * Version N+1 of lib/todos.ts, for the deploy tests only (never shipped, never imported by lib/ or
 * functions/): the same domain with one more field, `priority`, added by docs/contributing.md's
 * recipe ("Adding a field"). harness/versions.ts builds the store and the functions with this file
 * in place of lib/todos.ts, so that both versions run on one table (issue 38: a deploy is a fault
 * too). Every export keeps lib/todos.ts's name and signature (for N+1's record).
 *
 * Only what N+1 adds is stated here: the priority's type and default; `recordOf`, `createTodo` and
 * `applyPatch`, which are lib/todos.ts's with the priority; `listBytes`' count of it; and `draftOf`
 * and `newTodoBytes`, which must reach N+1's record (lib/todos.ts's would drop the priority). Every
 * other rule (the record's other fields and their defaults, the title's cap, the JSON, the seed, the
 * frozen size of records stored before sizes, the first id) is lib/todos.ts's, imported, so that it
 * lives in one place and a field added there is in N+1 too (harness/versions.ts leaves this file's
 * own imports of lib/ as they are).
 */
import * as current from '../../../lib/todos';

export {
  FIRST_NEW_ID,
  MAX_TITLE_LENGTH,
  changesNothing,
  numbered,
  sizelessBytes,
  titleLength,
  todoJson,
} from '../../../lib/todos';
export type { Deadline, IdempotencyClaim, TodoDraft, Written } from '../../../lib/todos';

/** How urgent a to-do is: N+1's field. */
export type Priority = 'low' | 'normal' | 'high';

/** Every priority, for lib/input.ts's check (test/support/next-version/input.ts). */
export const PRIORITIES: readonly Priority[] = ['low', 'normal', 'high'];

/** What a record holds when no one set its priority, records stored before the field included. */
export const PRIORITY_DEFAULT: Priority = 'normal';

/** The longest priority: what `listBytes` counts every record's at. */
const LONGEST_PRIORITY: Priority = 'normal';

/** What a POST asks for (docs/spec.md §4): lib/todos.ts's fields, and a priority. */
export interface NewTodo extends current.NewTodo {
  /** Absent: PRIORITY_DEFAULT. */
  readonly priority?: Priority;
}

/** A record, as every answer gives it: lib/todos.ts's fields, then its priority. */
export interface Todo extends current.Todo {
  readonly priority: Priority;
}

/** A partial update: a field is changed only when it is present (docs/spec.md §4, rule 3). */
export interface TodoPatch extends current.TodoPatch {
  readonly priority?: Priority;
}

/**
 * The record out of anything that holds its fields (a stored item, say): lib/todos.ts's record, in
 * its order, then the priority, and nothing else (lib/todos.ts says why the order matters).
 */
export function recordOf(fields: current.Todo & { readonly priority?: Priority }): Todo {
  // An item version N wrote has no priority: it reads as the default.
  const { priority = PRIORITY_DEFAULT } = fields;
  return { ...current.recordOf(fields), priority };
}

/** The record a POST makes: lib/todos.ts's record of what it asked for, with the priority it asked for. */
export function createTodo(request: NewTodo, id: number): Todo {
  return recordOf({
    ...current.createTodo(request, id),
    ...(request.priority !== undefined && { priority: request.priority }),
  });
}

/** The record after a PUT: the fields the patch names, the others as they were. */
export function applyPatch(todo: Todo, patch: TodoPatch): Todo {
  return recordOf({ ...current.applyPatch(todo, patch), priority: patch.priority ?? todo.priority });
}

/**
 * What a record adds to the list's answer, in bytes: lib/todos.ts's count of the record's JSON,
 * with `priority` counted as `"normal"`, the longest, as `completed` counts as `false`, so that a PUT
 * of either alone never changes the size.
 */
export function listBytes(todo: Todo): number {
  const counted: Todo = { ...todo, priority: LONGEST_PRIORITY };
  return current.listBytes(counted);
}

/** The most a record made from `request` adds to the list, whatever id it gets: what a write sizes before it has one. */
export function newTodoBytes(request: NewTodo): number {
  return listBytes(createTodo(request, Number.MAX_SAFE_INTEGER));
}

/** The draft of the record `request` makes (lib/todos.ts says what a draft is): lib/todos.ts's, of N+1's record. */
export function draftOf(request: NewTodo): current.TodoDraft {
  const placeholder = createTodo(request, 0);
  const asked: Readonly<Record<string, unknown>> = { ...request };
  const held = Object.entries(placeholder).filter(([field]) => field !== 'id');
  const fields = held.filter(([field, value]) => JSON.stringify(asked[field]) !== JSON.stringify(value));
  const omit = Object.keys(asked).filter((field) => !(field in placeholder));
  return { fields: Object.fromEntries(fields), ...(omit.length > 0 && { omit }), bytes: listBytes(placeholder) };
}

/** Records 1 and 2 exist at start: lib/todos.ts's, with the default priority. */
export const SEED_TODOS: readonly Todo[] = current.SEED_TODOS.map((todo) => recordOf(todo));

/**
 * What a PUT or DELETE asks of the record before it is written (lib/todos.ts says how a store
 * checks it): true when the record, as it is at the write, meets them.
 */
export type Precondition = (todo: Todo) => boolean;

export interface WriteOptions {
  readonly deadline?: current.Deadline | undefined;
  readonly claim?: current.IdempotencyClaim | undefined;
  readonly precondition?: Precondition | undefined;
}

/** A list as a store answers it (lib/todos.ts says what its tag names). */
export interface TodoList {
  readonly tag: string;
  readonly todos?: readonly Todo[];
}

/** The store contract of lib/todos.ts, for N+1's records. */
export interface TodoStore {
  readList(deadline?: current.Deadline, held?: (tag: string) => boolean): Promise<TodoList>;
  get(id: number, deadline?: current.Deadline): Promise<Todo | undefined>;
  create(request: NewTodo, options?: WriteOptions): Promise<current.Written<Todo>>;
  update(id: number, patch: TodoPatch, options?: WriteOptions): Promise<current.Written<Todo> | undefined>;
  remove(id: number, options?: WriteOptions): Promise<current.Written<true> | undefined>;
}
