import { randomUUID } from 'node:crypto';
import { equal, fieldsOf, nonLinearizableRecords, type Fields, type Timed } from './record-model';

/**
 * A concurrent mixed workload against a running API, every request and answer kept, and the
 * checks of what the whole history allows: the tests run it on the fleet, with and without
 * faults, and the bench counts what it finds (`npm run bench -- exactlyOnce`).
 *
 * Each client sends one request at a time, to records of its own and, when asked, to records
 * every client shares, so that writes to one record meet. Titles are unique per logical request,
 * so two records with one title are a request written twice. Every record's history is checked
 * for linearizability (harness/record-model.ts): some order of its requests, each taking effect
 * between its start and its answer, explains every answer, lists included. And for a client's
 * own records, the last answer it got says what the record holds, unless a request after it
 * failed: then the record may hold what that one asked for, or not.
 *
 * The checks compare records whole, field by field, and name none: the fields are the domain's
 * (lib/todos.ts). Only the requests the clients make name the fields they send.
 */

export interface WorkloadOptions {
  /** Clients sending at once, each one request at a time. */
  readonly clients: number;
  /** Requests each client sends (retries not counted). */
  readonly requestsPerClient: number;
  /** Send an Idempotency-Key with every write, and send it again after a failure. */
  readonly keyed: boolean;
  /** Times a keyed write is sent again after a 503, a 5xx or a lost connection. */
  readonly retries: number;
  /** Makes titles and keys unique to this run. */
  readonly tag?: string;
  /** Records that every client reads and writes besides its own (created first), so that writes meet. */
  readonly shared?: number;
  /** What a client may send: by default a mix of all five operations. */
  readonly only?: 'POST';
  /**
   * Resolves once no write of the run can still land (the fault proxy idle): awaited before the
   * final list is read, so that a write held back past every answer is in it.
   */
  readonly settled?: () => Promise<void>;
}

export interface Exchange {
  readonly client: number;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  /** What the request asked a record to hold (a POST's or PUT's fields). */
  readonly asked?: Fields;
  /** The answers of each attempt: the status (0: no answer at all) and the body. */
  readonly attempts: readonly { readonly status: number; readonly body: string }[];
  /** When the first attempt was sent and the last answered (performance.now()). */
  readonly start: number;
  readonly end: number;
}

export interface WorkloadReport {
  readonly history: readonly Exchange[];
  /** GET /todos at the end. */
  readonly final: readonly Listed[];
  /** Every way the history and the final list disagree with the contract; empty when none. */
  readonly problems: string[];
  /** How many answers of each status, over every attempt. */
  readonly statuses: Record<string, number>;
  /** Titles stored more than once: a request written twice. */
  readonly duplicates: number;
  /** Records that hold something no acknowledged write left them with. */
  readonly wrongValues: number;
  /** Records whose history no order of its requests explains. */
  readonly nonLinearizable: number;
}

/** A record as an answer shows it. */
export interface Listed {
  readonly id: number;
  readonly [field: string]: unknown;
}

interface Owned {
  id: number;
  /** Its fields as the last acknowledged write left them (the 201's record, then each 200's). */
  fields: Fields;
  /** Values a failed write may have left, after the last acknowledged one. */
  maybe: Fields[];
  deleted: 'no' | 'yes' | 'maybe';
}

/** Whether any field of `record` is a string that starts with `tag`: a record of this run. */
function tagged(record: Fields, tag: string): boolean {
  return Object.values(record).some((value) => typeof value === 'string' && value.startsWith(tag));
}

/** Equal as JSON values. */
function last<T>(items: readonly T[]): T | undefined {
  return items[items.length - 1];
}

export async function runWorkload(url: string, options: WorkloadOptions): Promise<WorkloadReport> {
  const tag = options.tag ?? randomUUID().slice(0, 8);
  const history: Exchange[] = [];
  const listsSeen: number[][] = [];
  const owned: Owned[][] = Array.from({ length: options.clients }, () => []);

  async function send(
    client: number,
    method: Exchange['method'],
    path: string,
    body: unknown,
    asked: Exchange['asked'],
  ): Promise<Exchange> {
    const key = options.keyed && method !== 'GET' ? `"${tag}-${randomUUID()}"` : undefined;
    const attempts: { status: number; body: string }[] = [];
    const start = performance.now();
    for (let attempt = 0; attempt <= (key === undefined ? 0 : options.retries); attempt++) {
      try {
        const response = await fetch(`${url}${path}`, {
          method,
          headers: {
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(key === undefined ? {} : { 'idempotency-key': key }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(30_000),
        });
        attempts.push({ status: response.status, body: await response.text() });
      } catch {
        attempts.push({ status: 0, body: '' });
      }
      const status = last(attempts)?.status ?? 0;
      if (status !== 0 && status < 500) break;
    }
    const exchange: Exchange = {
      client,
      method,
      path,
      ...(asked === undefined ? {} : { asked }),
      attempts,
      start,
      end: performance.now(),
    };
    history.push(exchange);
    return exchange;
  }

  /** Every client's shared records: their ids, whatever became of them since. */
  const sharedIds: number[] = [];

  /** A PUT, DELETE or GET of a shared record: what it left is for the history check to judge. */
  async function touchShared(index: number, n: number, id: number): Promise<void> {
    const roll = Math.random();
    if (roll < 0.5) {
      const change = Math.random() < 0.5 ? { title: `${tag}-c${index}-${n}-put` } : { completed: Math.random() < 0.5 };
      await send(index, 'PUT', `/todos/${id}`, change, change);
    } else if (roll < 0.65) await send(index, 'DELETE', `/todos/${id}`, undefined, undefined);
    else await send(index, 'GET', `/todos/${id}`, undefined, undefined);
  }

  async function client(index: number): Promise<void> {
    const mine = owned[index] ?? [];
    for (let n = 0; n < options.requestsPerClient; n++) {
      const shared = sharedIds[Math.floor(Math.random() * sharedIds.length)];
      if (shared !== undefined && options.only !== 'POST' && Math.random() < 0.3) {
        await touchShared(index, n, shared);
        continue;
      }
      const alive = mine.filter((record) => record.deleted === 'no');
      const target = alive[Math.floor(Math.random() * alive.length)];
      const roll = options.only === 'POST' || target === undefined ? 0 : Math.random();
      if (roll < 0.4) {
        const title = `${tag}-c${index}-${n}`;
        const exchange = await send(index, 'POST', '/todos', { title }, { title });
        const answer = last(exchange.attempts);
        if (answer?.status === 201) {
          const todo = JSON.parse(answer.body) as Listed;
          mine.push({ id: todo.id, fields: fieldsOf(todo), maybe: [], deleted: 'no' });
        }
      } else if (target !== undefined && roll < 0.65) {
        const change =
          Math.random() < 0.5
            ? { title: `${tag}-c${index}-${n}-put` }
            : { completed: target.fields.completed !== true };
        const exchange = await send(index, 'PUT', `/todos/${target.id}`, change, change);
        const answer = last(exchange.attempts);
        if (answer?.status === 200) {
          target.fields = fieldsOf(JSON.parse(answer.body) as Listed);
          target.maybe = [];
        } else {
          target.maybe.push(change);
        }
      } else if (target !== undefined && roll < 0.75) {
        const exchange = await send(index, 'DELETE', `/todos/${target.id}`, undefined, undefined);
        target.deleted = last(exchange.attempts)?.status === 200 ? 'yes' : 'maybe';
      } else if (target !== undefined && roll < 0.9) {
        await send(index, 'GET', `/todos/${target.id}`, undefined, undefined);
      } else {
        const exchange = await send(index, 'GET', '/todos', undefined, undefined);
        const answer = last(exchange.attempts);
        if (answer?.status === 200)
          listsSeen.push((JSON.parse(answer.body) as { id: number }[]).map((todo) => todo.id));
      }
    }
  }

  for (let i = 0; i < (options.shared ?? 0); i++) {
    const exchange = await send(-1, 'POST', '/todos', { title: `${tag}-shared-${i}` }, { title: `${tag}-shared-${i}` });
    const answer = last(exchange.attempts);
    if (answer?.status === 201) sharedIds.push((JSON.parse(answer.body) as { id: number }).id);
  }
  await Promise.all(Array.from({ length: options.clients }, (_, i) => client(i)));
  await options.settled?.();
  const finalStart = performance.now();
  const finalBody = await (await fetch(`${url}/todos`)).text();
  const final = JSON.parse(finalBody) as Listed[];
  const finalRead: Timed = {
    method: 'GET',
    path: '/todos',
    start: finalStart,
    end: performance.now(),
    status: 200,
    body: finalBody,
  };

  const problems: string[] = [];
  const statuses: Record<string, number> = {};
  for (const exchange of history)
    for (const { status } of exchange.attempts) statuses[status] = (statuses[status] ?? 0) + 1;
  const created = history
    .filter((exchange) => exchange.method === 'POST' && last(exchange.attempts)?.status === 201)
    .map((exchange) => ({
      asked: exchange.asked ?? {},
      todo: JSON.parse(last(exchange.attempts)?.body ?? '{}') as Listed,
    }));
  const createdIds = created.map(({ todo }) => todo.id);
  if (new Set(createdIds).size !== createdIds.length) problems.push('an id was answered to two POSTs');
  // Ids are consecutive from the first created: every id is a 201's or a listed record's.
  const known = new Set([...createdIds, ...final.map((todo) => todo.id)]);
  const lowest = Math.min(...known);
  const highest = Math.max(...known);
  const gaps: number[] = [];
  for (let id = lowest; id <= highest; id++) if (!known.has(id)) gaps.push(id);
  if (gaps.length > 0) problems.push(`${gaps.length} ids skipped: ${gaps.slice(0, 10).join(', ')}`);
  // What a POST asks for is its own (each carries a tagged value no other request sends): two records
  // that both carry one POST's request are that request written twice. A record since changed by a
  // PUT carries it no more, and is not counted.
  const posted = history.filter((exchange) => exchange.method === 'POST' && exchange.asked !== undefined);
  const carrying = posted.map(({ asked = {} }) => {
    const ids = new Set<number>();
    for (const { asked: answered, todo } of created) if (equal(answered, asked)) ids.add(todo.id);
    for (const todo of final)
      if (Object.entries(asked).every(([field, value]) => equal(todo[field], value))) ids.add(todo.id);
    return ids;
  });
  const duplicates = carrying.filter((ids) => ids.size > 1).length;
  if (duplicates > 0) problems.push(`${duplicates} requests stored twice`);
  // The final list holds what the history implies.
  const listed = new Map(final.map((todo) => [todo.id, todo]));
  let wrongValues = 0;
  for (const record of owned.flat()) {
    const found = listed.get(record.id);
    if (record.deleted === 'yes' && found !== undefined)
      problems.push(`record ${record.id} is listed after its DELETE`);
    if (record.deleted === 'no' && found === undefined) problems.push(`record ${record.id} is missing`);
    if (found === undefined) continue;
    // Each field as the last acknowledged write left it, or as a later failed write asked; a field no
    // answer of the client showed (a newer version's, during a deploy) is the history check's to judge.
    const known = [record.fields, ...record.maybe];
    const allowed = Object.entries(fieldsOf(found)).every(
      ([field, value]) =>
        known.every((values) => !(field in values)) ||
        known.some((values) => field in values && equal(values[field], value)),
    );
    if (!allowed) {
      wrongValues++;
      problems.push(`record ${record.id} holds ${JSON.stringify(found)}, which no acknowledged write left it with`);
    }
  }
  // Lists are in id order.
  for (const ids of [...listsSeen, final.map((todo) => todo.id)]) {
    if (ids.some((id, i) => i > 0 && id <= (ids[i - 1] ?? 0))) problems.push('a list out of id order');
  }
  const unexpected = Object.keys(statuses).filter((status) => Number(status) >= 500 && status !== '503');
  if (unexpected.length > 0) problems.push(`answers ${unexpected.join(', ')}`);
  const timed = [...history.map(timedOf), finalRead];
  const nonLinearizable = nonLinearizableRecords(timed, (record) => tagged(record, tag));
  problems.push(...nonLinearizable);
  return { history, final, problems, statuses, duplicates, wrongValues, nonLinearizable: nonLinearizable.length };
}

/** An exchange as the history check reads it: sent at its first attempt, answered by its last. */
function timedOf({ method, path, asked, start, end, attempts }: Exchange): Timed {
  const final = last(attempts) ?? { status: 0, body: '' };
  return {
    method,
    path,
    ...(asked === undefined ? {} : { asked }),
    start,
    end,
    status: final.status,
    body: final.body,
  };
}
