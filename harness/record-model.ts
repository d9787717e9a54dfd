import { createTodo, type NewTodo } from '../lib/todos';
import { isLinearizable, type Operation } from './linearizability';

/**
 * One record's history, checked for linearizability (harness/linearizability.ts): every request
 * of a workload that touches record `id` becomes an operation on it, with what its answer says:
 *
 * - its POST (201 with this id) creates it, as the domain makes a record of what it asked (lib/todos.ts,
 *   `createTodo`); a POST with no answer whose fields the record first seen carries may have
 *   created it, at any instant after it was sent;
 * - a PUT answered 200 found it and left it as the answer shows (the patch applied to what it
 *   was); a DELETE answered 200 found it and removed it; either answered 404 found no record;
 * - a GET by id, and every GET /todos (a list is a read of each record), saw it as answered, or
 *   saw no record;
 * - a write with no answer (a lost connection, a 503, a 409 "in progress") may take effect at any
 *   instant after it was sent, or never; an answer that refused it (400, 409 full, 413, 422)
 *   changed nothing, and is left out.
 *
 * So a DELETE answered 404 for the record it removed is caught even when the final list is right.
 *
 * A record is compared whole, field by field, naming none: a state holds the fields known of the
 * record, and an answer must agree with it on every field they both hold. A field the state does
 * not hold yet (one the version that created the record does not make, during a deploy) is learnt
 * from the first answer that shows it, and holds from then on; a field an answer does not show (an
 * older version's view of the record) is not compared. In a history of one version every answer
 * shows every field, so every field is compared in every answer.
 */

export interface Timed {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  /** What the request asked the record to hold (a POST's or PUT's fields). */
  readonly asked?: Fields;
  /** When it was first sent and finally answered, on one clock (performance.now()). */
  readonly start: number;
  readonly end: number;
  /** The final answer: its status (0: none) and body. */
  readonly status: number;
  readonly body: string;
}

/** A record's fields, its id aside, as a request asks for them or an answer shows them. */
export type Fields = Readonly<Record<string, unknown>>;

type RecordState =
  { readonly kind: 'unborn' } | { readonly kind: 'present'; readonly fields: Fields } | { readonly kind: 'gone' };

interface Listed {
  readonly id: number;
  readonly [field: string]: unknown;
}

/** The fields of a record, its id aside. */
export function fieldsOf(record: { readonly id: number }): Fields {
  const fields: Record<string, unknown> = { ...record };
  delete fields.id;
  return fields;
}

const UNBORN: RecordState = { kind: 'unborn' };
const GONE: RecordState = { kind: 'gone' };

/** No answer that says what happened: the write may take effect later, or may never. */
export function unanswered({ status, body }: Pick<Timed, 'status' | 'body'>): boolean {
  return status === 0 || status >= 500 || (status === 409 && body.includes('in progress'));
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** The record an answer carries, if it carries one. */
function todoIn(body: string): Listed | undefined {
  const parsed = parseJson(body);
  return typeof parsed === 'object' && parsed !== null && 'id' in parsed ? (parsed as Listed) : undefined;
}

/** The records a list answer carries. */
function listIn(body: string): Listed[] {
  const parsed = parseJson(body);
  return Array.isArray(parsed) ? (parsed as Listed[]) : [];
}

/** Equal as JSON values: a field may be any JSON the domain gives it. */
export function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The state after an answer that showed `seen` (undefined: no record), if the two agree: the fields
 * both hold are equal, and the fields only `seen` shows are learnt.
 */
function agree(state: RecordState, seen: Listed | undefined): RecordState | undefined {
  if (seen === undefined) return state.kind === 'present' ? undefined : state;
  if (state.kind !== 'present') return undefined;
  const shown = fieldsOf(seen);
  if (Object.entries(shown).some(([field, value]) => field in state.fields && !equal(state.fields[field], value)))
    return undefined;
  return { kind: 'present', fields: { ...shown, ...state.fields } };
}

/** A read that saw `seen` (undefined: no record). */
function reads(seen: Listed | undefined): (state: RecordState) => RecordState | undefined {
  return (state) => agree(state, seen);
}

/** The record after a write of `asked`: the fields it names, the others as they were. */
function patched(state: RecordState, asked: Timed['asked']): RecordState {
  if (state.kind !== 'present') return state;
  return { kind: 'present', fields: { ...state.fields, ...asked } };
}

/** The record the domain makes of a POST's request, its id aside. */
function created(asked: Timed['asked']): RecordState {
  return { kind: 'present', fields: fieldsOf(createTodo({ ...asked } as unknown as NewTodo, 0)) };
}

/** What `exchange` did to record `id`, as an operation; undefined when it did nothing to it. */
function operationOn(id: number, exchange: Timed): Operation<RecordState> | undefined {
  const { method, status, body } = exchange;
  const open = unanswered(exchange);
  const timing = {
    start: exchange.start,
    end: open ? Infinity : exchange.end,
    label: `${method} ${exchange.path} → ${status}`,
  };
  if (method === 'GET' && exchange.path === '/todos') {
    if (status !== 200) return undefined;
    const listed = listIn(body).find((todo) => todo.id === id);
    return { ...timing, step: reads(listed) };
  }
  if (method === 'POST') {
    const made = created(exchange.asked);
    // Answered, the record must be as the domain makes it, and what the answer shows besides is learnt.
    const answered = status === 201 ? todoIn(body) : undefined;
    return {
      ...timing,
      step: (state) => (state.kind !== 'unborn' ? undefined : answered === undefined ? made : agree(made, answered)),
    };
  }
  if (open) {
    const step =
      method === 'DELETE'
        ? (state: RecordState) => (state.kind === 'present' ? GONE : state)
        : (state: RecordState) => patched(state, exchange.asked);
    return method === 'GET' ? undefined : { ...timing, step };
  }
  if (status === 404) return { ...timing, step: reads(undefined) };
  if (status !== 200) return undefined;
  if (method === 'GET') return { ...timing, step: reads(todoIn(body)) };
  if (method === 'DELETE') return { ...timing, step: (state) => (state.kind === 'present' ? GONE : undefined) };
  const answered = todoIn(body);
  return {
    ...timing,
    step: (state) => (state.kind === 'present' ? agree(patched(state, exchange.asked), answered) : undefined),
  };
}

/**
 * Whether `record` holds every field `asked` names that the domain keeps as asked. A field the
 * domain does not keep (one only another version knows: a POST through the version before it asks
 * for it in vain) says nothing of which POST made the record.
 */
function carries(record: Listed, asked: Timed['asked']): boolean {
  const kept = fieldsOf(createTodo({ ...asked } as unknown as NewTodo, 0));
  return Object.entries(asked ?? {})
    .filter(([field, value]) => field in kept && equal(kept[field], value))
    .every(([field, value]) => equal(record[field], value));
}

/** The POST that created record `id`: answered 201 with it, or unanswered with what it was first seen with. */
function creationOf(id: number, history: readonly Timed[], first: Listed): Timed | undefined {
  const posts = history.filter((exchange) => exchange.method === 'POST');
  return (
    posts.find((exchange) => exchange.status === 201 && todoIn(exchange.body)?.id === id) ??
    posts.find((exchange) => unanswered(exchange) && carries(first, exchange.asked))
  );
}

/**
 * The records of the workload whose history no order explains, each with its operations: empty
 * when every record's history is linearizable. `ours` tells the workload's records by what they hold.
 */
export function nonLinearizableRecords(history: readonly Timed[], ours: (record: Fields) => boolean): string[] {
  const firstSeen = new Map<number, Listed>();
  for (const exchange of history) {
    const seen =
      exchange.method === 'GET' && exchange.path === '/todos' && exchange.status === 200
        ? listIn(exchange.body)
        : exchange.status === 201 || (exchange.method === 'GET' && exchange.status === 200)
          ? [todoIn(exchange.body)].filter((todo) => todo !== undefined)
          : [];
    for (const todo of seen) if (ours(todo) && !firstSeen.has(todo.id)) firstSeen.set(todo.id, todo);
  }
  const problems: string[] = [];
  for (const [id, first] of firstSeen) {
    const creation = creationOf(id, history, first);
    if (creation === undefined) {
      problems.push(`record ${id} (${JSON.stringify(first)}) was created by no POST`);
      continue;
    }
    const touching = history.filter(
      (exchange) => exchange.path === `/todos/${id}` || (exchange.method === 'GET' && exchange.path === '/todos'),
    );
    const operations = [creation, ...touching].flatMap((exchange) => operationOn(id, exchange) ?? []);
    if (!isLinearizable(operations, UNBORN, (state) => JSON.stringify(state))) {
      const own = operations.filter((operation) => !operation.label.startsWith('GET /todos →'));
      problems.push(
        `record ${id}: no order of its operations explains their answers: ${own.map((op) => op.label).join(', ')}`,
      );
    }
  }
  return problems;
}
