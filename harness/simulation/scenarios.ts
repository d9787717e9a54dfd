import { todoEtag } from '../../lib/conditional';
import { INLINE_PAYLOAD_BYTES, payloadKey } from '../../lib/dynamodb/queue';
import type { NewTodo, Todo } from '../../lib/todos';
import { nonLinearizableRecords, type Fields, type Timed } from '../record-model';
import type { Answered, Container, Scenario, World } from './world';

/**
 * The requests the simulator explores, one scenario each (docs/testing.md, "The simulator"): a
 * POST alone, POSTs batched in one container, a POST queued behind a head that stalled, a PUT,
 * a PUT with If-Match, a DELETE, each unkeyed and keyed, and the seed. Each sets up with no
 * faults, turns them on, sends its request (a keyed one is sent again with its key after a 503,
 * as the docs tell clients), and checks what every run must keep:
 *
 * - one record for one POST, and none for a POST that was not answered 201 unless it may still be
 *   (a 503);
 * - no id skipped or reused: the records' ids from 3 are exactly those the counter gave;
 * - every answer true to what was stored: a 201's record is the stored one; a PUT answered 200
 *   stored its patch; a DELETE answered 200 removed the record; no 404 or 412 for what the
 *   request's own late copy did.
 */

const KEY = '"simulated-key"';

/** Sends a request, and again with its key after a 503 (up to twice), as a client that follows the docs. */
async function withRetries<T>(world: World, keyed: boolean, send: () => Promise<T>): Promise<Answered<T>> {
  let answered = await world.answer(send());
  for (let retry = 0; keyed && retry < 2 && 'failed' in answered && answered.failed === 'StoreUnavailable'; retry++) {
    await world.wait(1_000);
    answered = await world.answer(send());
  }
  return answered;
}

/** A 503, which a request may answer under faults (it may still be applied): with none, it is a violation too. */
function unavailable(world: World, answered: { readonly failed: string }): boolean {
  return answered.failed === 'StoreUnavailable' && !world.faultFree;
}

/** The seeded table, and a container that has seen it: set-up, with no faults. */
async function seededContainer(world: World): Promise<Container> {
  const container = world.container();
  await container.list();
  return container;
}

/** The checks of the ids: from 3 to the counter's next, each used by exactly one record (none deleted here). */
function idsIntact(world: World): string[] {
  const [counter] = world.queueItems();
  const next = Number(counter?.next);
  const ids = world
    .records()
    .map(({ id }) => id)
    .filter((id) => id >= 3);
  const expected = Array.from({ length: Math.max(0, next - 3) }, (_, i) => i + 3);
  return JSON.stringify(ids) === JSON.stringify(expected)
    ? []
    : [`ids ${JSON.stringify(ids)} where the counter (next ${next}) gave ${JSON.stringify(expected)}`];
}

/** What one POST's answer and the records must agree on. */
function postChecks(world: World, title: string, answered: Answered<{ value: Todo }>): string[] {
  const stored = world.records().filter((todo) => todo.title === title);
  if ('ok' in answered) {
    const { value } = answered.ok;
    if (stored.length !== 1) return [`POST "${title}" answered 201 with id ${value.id}, stored ${stored.length} times`];
    if (JSON.stringify(stored[0]) !== JSON.stringify(value))
      return [`POST "${title}" answered ${JSON.stringify(value)}, stored ${JSON.stringify(stored[0])}`];
    return [];
  }
  if (!unavailable(world, answered)) return [`POST "${title}" answered ${answered.failed}`];
  return stored.length > 1 ? [`POST "${title}" answered 503, stored ${stored.length} times`] : [];
}

function post(keyed: boolean): Scenario {
  return async (world) => {
    const container = await seededContainer(world);
    world.startFaults();
    const answered = await withRetries(world, keyed, () =>
      container.create({ title: 'alone' }, world.options(keyed ? KEY : undefined)),
    );
    return () => [...postChecks(world, 'alone', answered), ...idsIntact(world)];
  };
}

/** Three POSTs at once in one container: the first alone, the other two in one transaction behind it. */
function batched(keyed: boolean): Scenario {
  return async (world) => {
    const container = await seededContainer(world);
    world.startFaults();
    const titles = ['first', 'second', 'third'];
    const answers = await Promise.all(
      titles.map((title, i) =>
        withRetries(world, keyed, () => container.create({ title }, world.options(keyed ? `"key ${i}"` : undefined))),
      ),
    );
    return () => [
      ...titles.flatMap((title, i) => postChecks(world, title, answers[i] ?? { failed: '?' })),
      ...idsIntact(world),
    ];
  };
}

/**
 * A POST of a container that found the counter moved (another container wrote), so it queues;
 * at the queue's head, another container's intent that never commits: the POST waits out the
 * head's lease, takes it over, and commits both. The head's payload is an item apart, as a big
 * request's is (lib/dynamodb/queue.ts, INLINE_PAYLOAD_BYTES); the POST's own rides in its intent,
 * or, `big`, is put apart first too.
 */
function queued(keyed: boolean, big = false): Scenario {
  const title = big ? 'queued, a big request'.padEnd(INLINE_PAYLOAD_BYTES + 1, '.') : 'queued';
  return async (world) => {
    const mine = await seededContainer(world);
    const other = world.container();
    await other.create({ title: 'other container' });
    // Its intent, and its payload apart, as its container left them.
    const expires = { N: String(Math.ceil(world.now() / 1000) + 600) };
    const stalled = [
      { pk: { S: 'COUNTER' }, id: { N: String(world.now() * 1000) }, uuid: { S: 'stalled-head' }, expires },
      {
        pk: { S: payloadKey('stalled-head').pk },
        id: { N: '0' },
        request: { M: { title: { S: 'stalled head' } } },
        expires,
      },
    ];
    for (const Item of stalled) world.dynamodb.handle('PutItem', JSON.stringify({ TableName: 'todos', Item }));
    world.startFaults();
    const answered = await withRetries(world, keyed, () =>
      mine.create({ title }, world.options(keyed ? KEY : undefined)),
    );
    return () => {
      const stalled = world.records().filter(({ title }) => title === 'stalled head').length;
      return [
        ...postChecks(world, title, answered),
        ...(stalled > 1 ? [`the stalled head's POST stored ${stalled} times`] : []),
        ...idsIntact(world),
      ];
    };
  };
}

function put(keyed: boolean, ifMatch: boolean): Scenario {
  return async (world) => {
    const container = await seededContainer(world);
    const before = await container.get(1);
    world.startFaults();
    const precondition = ifMatch && before ? (current: Todo) => todoEtag(current) === todoEtag(before) : undefined;
    const answered = await withRetries(world, keyed, () =>
      container.update(1, { title: 'changed' }, world.options(keyed ? KEY : undefined, { precondition })),
    );
    return () => {
      const [stored] = world.records().filter(({ id }) => id === 1);
      const violations = idsIntact(world);
      if ('ok' in answered) {
        if (answered.ok?.value.title !== 'changed') violations.push(`PUT answered ${JSON.stringify(answered.ok)}`);
        if (stored?.title !== 'changed') violations.push(`PUT answered 200, stored ${JSON.stringify(stored)}`);
      } else if (!unavailable(world, answered)) {
        violations.push(`PUT of a record no one else wrote answered ${answered.failed}`);
      }
      return violations;
    };
  };
}

function remove(keyed: boolean): Scenario {
  return async (world) => {
    const container = await seededContainer(world);
    world.startFaults();
    const answered = await withRetries(world, keyed, () => container.remove(1, world.options(keyed ? KEY : undefined)));
    return () => {
      const stored = world.records().some(({ id }) => id === 1);
      const violations = idsIntact(world);
      if ('ok' in answered && answered.ok === undefined)
        violations.push('DELETE of a record no one else deleted answered 404');
      else if ('ok' in answered && stored) violations.push('DELETE answered 200, and the record is still there');
      else if ('failed' in answered && !unavailable(world, answered))
        violations.push(`DELETE answered ${answered.failed}`);
      return violations;
    };
  };
}

/** Two containers start on an empty table at once: seeded once, records 1 and 2 and the counter at 3. */
const seed: Scenario = async (world) => {
  world.startFaults();
  const lists = await Promise.all([world.answer(world.container().list()), world.answer(world.container().list())]);
  return () => {
    const records = world.records();
    const violations = idsIntact(world);
    if (records.filter(({ id }) => id === 1 || id === 2).length !== 2)
      violations.push(`seeded as ${JSON.stringify(records)}`);
    for (const listed of lists) {
      if ('failed' in listed && !unavailable(world, listed)) violations.push(`a list answered ${listed.failed}`);
      if ('ok' in listed && listed.ok.length !== 2) violations.push(`a list answered ${JSON.stringify(listed.ok)}`);
    }
    return violations;
  };
};

/** One request of a workload's client, as harness/record-model.ts reads it. */
interface Request {
  readonly method: Timed['method'];
  readonly id?: number;
  readonly asked?: Fields;
}

/** What each client sends, one request at a time: records 3 and 4 are made, for all of them, before the faults. */
const CLIENTS: readonly (readonly Request[])[] = [
  [
    { method: 'PUT', id: 3, asked: { title: 'one, by 0' } },
    { method: 'GET', id: 3 },
    { method: 'POST', asked: { title: 'from 0' } },
    { method: 'PUT', id: 4, asked: { completed: true } },
  ],
  [{ method: 'PUT', id: 3, asked: { completed: true } }, { method: 'DELETE', id: 4 }, { method: 'GET' }],
  [
    { method: 'POST', asked: { title: 'from 2' } },
    { method: 'GET', id: 4 },
    { method: 'PUT', id: 3, asked: { title: 'one, by 2' } },
  ],
  [{ method: 'DELETE', id: 3 }, { method: 'POST', asked: { title: 'from 3' } }, { method: 'GET' }],
];

/** A request's answer as HTTP would give it: its status and body. */
function asHttp(request: Request, answered: Answered<unknown>): { status: number; body: string } {
  if ('failed' in answered) {
    const status = { StoreUnavailable: 503, KeyInFlight: 409, PreconditionFailed: 412 }[answered.failed] ?? 500;
    return { status, body: status === 409 ? 'in progress' : '' };
  }
  const { ok } = answered;
  if (ok === undefined) return { status: 404, body: '{"error":"Todo not found"}' };
  if (request.method === 'DELETE') return { status: 200, body: 'Deleted' };
  const value = request.method === 'GET' ? ok : (ok as { value: unknown }).value;
  return { status: request.method === 'POST' ? 201 : 200, body: JSON.stringify(value) };
}

/** Sends `request` from `container`, and again with its key after a 503 when keyed; its exchange, in simulated time. */
async function exchange(world: World, container: Container, request: Request, key: string | undefined): Promise<Timed> {
  const { method, id = 0, asked = {} } = request;
  function send(): Promise<unknown> {
    const options = world.options(key);
    // A request's fields as the scenario wrote them: a POST's NewTodo, a PUT's TodoPatch.
    if (method === 'POST') return container.create(asked as unknown as NewTodo, options);
    if (method === 'PUT') return container.update(id, asked, options);
    if (method === 'DELETE') return container.remove(id, options);
    return id === 0 ? container.list() : container.get(id);
  }
  const start = world.now();
  const answered = await withRetries(world, key !== undefined, send);
  const path = id === 0 ? '/todos' : `/todos/${id}`;
  return { method, path, asked, start, end: world.now(), ...asHttp(request, answered) };
}

/**
 * Many containers and clients at once, for the random search: four containers, each a client
 * sending one request at a time to two records every client shares and to records of its own; a
 * keyed one sends a write again with its key after a 503, as the docs tell clients. Every request
 * and its answer are kept in simulated time, and each record's history must be linearizable
 * (harness/record-model.ts, the fleet's check): some order of its requests, each taking effect
 * between its start and its answer, explains every answer. And no id is skipped: an id the counter
 * gave with no record is one a DELETE was sent for.
 */
function workload(keyed: boolean): Scenario {
  return async (world) => {
    const containers = await Promise.all(CLIENTS.map(() => seededContainer(world)));
    const [first] = containers;
    if (first === undefined) throw new Error('no container');
    const history: Timed[] = [];
    for (const title of ['shared one', 'shared two']) {
      history.push(await exchange(world, first, { method: 'POST', asked: { title } }, undefined));
    }
    world.startFaults();
    await Promise.all(
      CLIENTS.map(async (requests, client) => {
        for (const [n, request] of requests.entries()) {
          const key = keyed && request.method !== 'GET' ? `"client ${client}, ${n}"` : undefined;
          history.push(await exchange(world, containers[client] ?? first, request, key));
        }
      }),
    );
    return () => {
      const seeded = new Set(['Read the spec', 'Ship the service']);
      const violations = nonLinearizableRecords(history, (record) => !seeded.has(String(record.title)));
      const deleted = CLIENTS.flat().flatMap((request) => (request.method === 'DELETE' ? [request.id] : []));
      const [counter] = world.queueItems();
      const ids = new Set(world.records().map(({ id }) => id));
      for (let id = 3; id < Number(counter?.next); id++) {
        if (!ids.has(id) && !deleted.includes(id)) violations.push(`id ${id} given, and no record has it`);
      }
      if (world.faultFree) {
        const failed = history.filter(({ status }) => ![200, 201, 404].includes(status));
        for (const { method, path, status } of failed)
          violations.push(`${method} ${path} answered ${status} with no fault`);
      }
      return violations;
    };
  };
}

/**
 * The workloads of many requests, whose scripts are too many to search each: searched exhaustively
 * to one fault only, and at random.
 */
export const WORKLOADS: readonly string[] = [
  'workload: four containers, shared records',
  'workload: four containers, shared records, keyed',
];

/** Every scenario the simulator explores, by name. */
export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'POST alone': post(false),
  'POST alone, keyed': post(true),
  'POST batched': batched(false),
  'POST batched, keyed': batched(true),
  'POST queued behind a stalled head': queued(false),
  'POST queued behind a stalled head, keyed': queued(true),
  'POST of a big request queued behind a stalled head': queued(false, true),
  'POST of a big request queued behind a stalled head, keyed': queued(true, true),
  PUT: put(false, false),
  'PUT, keyed': put(true, false),
  'PUT with If-Match': put(false, true),
  'PUT with If-Match, keyed': put(true, true),
  DELETE: remove(false),
  'DELETE, keyed': remove(true),
  seed,
  'workload: four containers, shared records': workload(false),
  'workload: four containers, shared records, keyed': workload(true),
};
