import { todoEtag } from '../../lib/conditional';
import { marshall } from '@aws-sdk/util-dynamodb';
import { payloadOf } from '../../lib/dynamodb/queue';
import { MAX_TITLE_LENGTH, listBytes, recordOf, type NewTodo, type Todo } from '../../lib/todos';
import * as next from '../../test/support/next-version/todos';
import type { Version } from '../versions';
import { nonLinearizableRecords, type Fields, type Timed } from '../record-model';
import type { Item } from './dynamodb';
import { KEY_EXPIRY } from './key-expiry';
import { LIST_EDITS, LIST_SNAPSHOTS } from './list-snapshots';
import { LIST_LIMITS } from './list-limits';
import { QUEUE_SEEDS_AT_MOST, QUEUE_UNDER_CONCURRENCY } from './queue-concurrency';
import {
  KEY,
  idsIntact,
  listOf,
  postChecks,
  seededContainer,
  unavailable,
  warmContainer,
  withRetries,
} from './clients';
import {
  TABLE,
  answeringWithinRetries,
  withOptions,
  type Answered,
  type Container,
  type Scenario,
  type World,
} from './world';
import { READ_REPAIR } from './read-repair';
import { MAX_RAISES } from '../../lib/dynamodb/repair';

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

/** A POST of a container alone, written in one transaction. */
function post(keyed: boolean): Scenario {
  return async (world) => {
    const container = await warmContainer(world);
    world.startFaults();
    const answered = await withRetries(world, keyed, () =>
      container.create({ title: 'alone' }, world.options(keyed ? KEY : undefined)),
    );
    return () => [...postChecks(world, 'alone', answered), ...idsIntact(world)];
  };
}

/** Three POSTs at once in a container alone: the first in a transaction of its own, the other two in one behind it. */
function batched(keyed: boolean): Scenario {
  return async (world) => {
    const container = await warmContainer(world);
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
 * A POST of a container alone that found the counter moved (another container wrote), so it queues;
 * at the queue's head, another container's intent that never commits: the POST waits out the
 * head's lease, takes it over, and commits both; `big`, the POST's title has MAX_TITLE_LENGTH
 * characters.
 */
function queued(keyed: boolean, big = false): Scenario {
  const title = big ? 'queued, a big request'.padEnd(MAX_TITLE_LENGTH, '.') : 'queued';
  return async (world) => {
    const mine = await warmContainer(world);
    const other = world.container();
    await other.create({ title: 'other container' });
    // Its intent, as its container left it.
    const stalled = marshall({
      pk: 'COUNTER',
      id: world.now() * 1000,
      uuid: 'stalled-head',
      payload: payloadOf({ request: { title: 'stalled head' }, claim: undefined }),
      expires: Math.ceil(world.now() / 1000) + 600,
    });
    world.dynamodb.handle('PutItem', JSON.stringify({ TableName: 'todos', Item: stalled }));
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
  const lists = await Promise.all([world.answer(listOf(world.container())), world.answer(listOf(world.container()))]);
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
    return id === 0 ? listOf(container) : container.get(id);
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
 * A deploy is a fault too (issue 38): versions N and N+1 of the code (harness/versions.ts: N+1's
 * domain has one more field, `priority`, "normal" when absent) on one table, while the five
 * functions switch from one version to the other one at a time, as a deploy of five Lambda
 * functions does, each in the middle of the traffic. Each operation is served by the containers
 * of its function's version: a switch starts new containers of the new version, and the old ones
 * finish what they were doing. Between switches a round of requests: a POST asking for a high
 * priority, a PUT (plain, with If-Match, keyed) of a record the other version may have made, a
 * read, a DELETE now and then. When the POSTs switch, containers of both versions POST at once
 * with a counter another container moved, so a queue forms whose head commits POSTs of the other
 * version; and a keyed POST and a keyed PUT (of a record the new version wrote) answered by the old
 * version are sent again, with their keys, to the new one: each must replay, not be refused (422) or
 * written twice, and show the record as first answered and stored, in every field it shows.
 *
 * What every run checks, besides the table's invariants after each step (invariants.ts: no stored
 * field lost, the list's size a recount of the records' sizes): each record's history is
 * linearizable, on every field (harness/record-model.ts); every field a 201 answered is on the
 * record at the end (a PUT may have changed the fields it named); no id given without its record
 * but a deleted one's; each record's stored size covers the answer of the version that serves the
 * list at the end; the keyed requests sent again replayed their first answers (`replayChecks`); with
 * no fault, every request succeeded.
 */

/** The five functions, by what they do: a deploy switches each on its own. */
type Operation = 'list' | 'get' | 'create' | 'update' | 'remove';
/** The order the functions switch in: the POSTs first, so that the other version's PUTs meet their records. */
const SWITCH_ORDER: readonly Operation[] = ['create', 'update', 'get', 'remove', 'list'];

/** The functions' containers, each serving the version its function is at. */
class Deployment {
  readonly #serving: Record<Operation, Version>;
  readonly #containers = new Map<string, Container>();

  constructor(
    private readonly world: World,
    version: Version,
    /** Where each container's version is kept, for the requests' log. */
    private readonly versionOf: Map<Container, Version>,
  ) {
    this.#serving = { list: version, get: version, create: version, update: version, remove: version };
  }

  version(operation: Operation): Version {
    return this.#serving[operation];
  }

  switch(operation: Operation, to: Version): void {
    this.#serving[operation] = to;
  }

  /** A container of `operation`'s function at `version` (its current one by default); `slot` tells several apart. */
  container(operation: Operation, slot = 0, version = this.#serving[operation]): Container {
    const name = `${operation} ${version} ${slot}`;
    const known = this.#containers.get(name);
    if (known !== undefined) return known;
    // Every list shares what it read: a new container of either version meets the other's shared list.
    const made = this.world.container({ version, sharedAfterBytes: 0 });
    this.#containers.set(name, made);
    this.versionOf.set(made, version);
    return made;
  }
}

/** What a deploy scenario's requests were and were answered, for its checks. */
interface DeployLog {
  readonly history: Timed[];
  /** Ids a DELETE was sent for. */
  readonly deleted: Set<number>;
  /** If-Match PUTs whose read and write went through different versions: a 412 is their right answer (the ETag is the version's JSON). */
  readonly acrossVersions: Set<Timed>;
  /** The version that answered each request. */
  readonly versions: Map<Timed, Version>;
  /** Each container's version. */
  readonly versionOf: Map<Container, Version>;
  /** Keyed requests sent again to the other version, each with its first and its second answer. */
  readonly resent: Resent[];
}

/** A keyed request sent again to the other version: its answers, and its record as stored when first answered. */
interface Resent {
  readonly label: string;
  readonly first: Answered<unknown>;
  readonly again: Answered<unknown>;
  /** The version that answered it again. */
  readonly againBy: Version;
  /** The item of the record the first answer named, as stored then: what its key's claim keeps. */
  readonly stored: Item | undefined;
}

/** The item of the record `answered` names, as stored now. */
function storedItem(world: World, answered: Answered<unknown>): Item | undefined {
  const id = recordIn(answered)?.id;
  return world.dynamodb.items(TABLE).find((item) => item.pk === 'TODO' && item.id === id);
}

/** The record an answer carries: a 201's or a PUT's (a Written), or a GET's. */
function recordIn(answered: Answered<unknown>): Todo | undefined {
  if (!('ok' in answered) || answered.ok === undefined || answered.ok === null) return undefined;
  const value: unknown = typeof answered.ok === 'object' && 'value' in answered.ok ? answered.ok.value : answered.ok;
  return typeof value === 'object' && value !== null && 'id' in value ? (value as Todo) : undefined;
}

/** Sends one request through `container` (with its key after a 503 when keyed), and keeps its exchange. */
async function sendOn(
  world: World,
  log: DeployLog,
  container: Container,
  request: Request,
  options: { readonly key?: string; readonly precondition?: (current: Todo) => boolean } = {},
): Promise<{ answered: Answered<unknown>; timed: Timed }> {
  const { method, id = 0, asked = {} } = request;
  const { key, precondition } = options;
  function send(): Promise<unknown> {
    const writeOptions = world.options(key, precondition === undefined ? {} : { precondition });
    if (method === 'POST') return container.create(asked as unknown as NewTodo, writeOptions);
    if (method === 'PUT') return container.update(id, asked, writeOptions);
    if (method === 'DELETE') return container.remove(id, writeOptions);
    return id === 0 ? listOf(container) : container.get(id);
  }
  const start = world.now();
  const answered = await withRetries(world, key !== undefined, send);
  const path = id === 0 ? '/todos' : `/todos/${id}`;
  const timed: Timed = { method, path, asked, start, end: world.now(), ...asHttp(request, answered) };
  log.history.push(timed);
  log.versions.set(timed, log.versionOf.get(container) ?? 'current');
  if (method === 'DELETE') log.deleted.add(id);
  return { answered, timed };
}

/** A round's PUT of record `id`: plain, with If-Match (after a read through the get function), or keyed, by round. */
async function putRound(
  world: World,
  deployment: Deployment,
  log: DeployLog,
  round: number,
  id: number,
): Promise<void> {
  const asked = round % 2 === 0 ? { title: `deploy, put in round ${round}` } : { completed: round % 4 === 1 };
  const kind = round % 3;
  if (kind === 1) {
    const read = await sendOn(world, log, deployment.container('get'), { method: 'GET', id });
    const seen = recordIn(read.answered);
    if (seen === undefined) return;
    const across = deployment.version('get') !== deployment.version('update');
    const { timed } = await sendOn(
      world,
      log,
      deployment.container('update'),
      { method: 'PUT', id, asked },
      {
        precondition: (current) => todoEtag(current) === todoEtag(seen),
      },
    );
    if (across) log.acrossVersions.add(timed);
    return;
  }
  await sendOn(
    world,
    log,
    deployment.container('update'),
    { method: 'PUT', id, asked },
    {
      ...(kind === 2 && { key: `"put, round ${round}"` }),
    },
  );
}

/** One round of requests between two switches. */
async function deployRound(world: World, deployment: Deployment, log: DeployLog, round: number): Promise<void> {
  // The newest record a POST made, whatever version made it: PUTs of the other version meet it.
  const target = [...log.history]
    .reverse()
    .map((timed) => (timed.method === 'POST' && timed.status === 201 ? (JSON.parse(timed.body) as Todo).id : 0))
    .find((id) => id > 0 && !log.deleted.has(id));
  const older = log.history.find(
    (timed) => timed.method === 'POST' && timed.status === 201 && (JSON.parse(timed.body) as Todo).id !== target,
  );
  const olderId = older === undefined ? undefined : (JSON.parse(older.body) as Todo).id;
  await Promise.all([
    sendOn(world, log, deployment.container('create'), {
      method: 'POST',
      asked: { title: `deploy, round ${round}`, priority: 'high' },
    }),
    target === undefined ? Promise.resolve() : putRound(world, deployment, log, round, target),
    round % 2 === 0
      ? sendOn(world, log, deployment.container('list'), { method: 'GET' })
      : olderId !== undefined && !log.deleted.has(olderId)
        ? sendOn(world, log, deployment.container('remove'), { method: 'DELETE', id: olderId })
        : Promise.resolve(),
  ]);
}

/**
 * The switch of the POSTs, in the middle of traffic: containers of both versions POST at once
 * (each had read the counter before another container moved it, so each finds it moved and queues:
 * the queue's head commits POSTs of the other version too); a keyed POST answered by the old
 * version is sent again with its key to the new one.
 */
async function switchPosts(world: World, deployment: Deployment, log: DeployLog, to: Version, round: number) {
  const from = deployment.version('create');
  const keyed = { method: 'POST', asked: { title: `deploy, keyed in round ${round}`, priority: 'high' } } as const;
  const key = `"post, round ${round}"`;
  const first = await sendOn(world, log, deployment.container('create'), keyed, { key });
  const stored = storedItem(world, first.answered);
  const burst = [
    deployment.container('create', round + 1, from),
    deployment.container('create', round + 1, to),
    deployment.container('create', round + 2, from),
  ];
  // Each reads the counter (its seed) before the round's POST moves it.
  await Promise.all(burst.map((container) => world.answer(listOf(container))));
  await sendOn(world, log, deployment.container('create'), {
    method: 'POST',
    asked: { title: `deploy, before the queue in round ${round}`, priority: 'high' },
  });
  deployment.switch('create', to);
  const again = sendOn(world, log, deployment.container('create'), keyed, { key });
  await Promise.all(
    burst.map((container, i) =>
      sendOn(world, log, container, {
        method: 'POST',
        asked: { title: `deploy, queued ${i} in round ${round}`, priority: 'high' },
      }),
    ),
  );
  log.resent.push({ label: `POST ${key}`, first: first.answered, again: (await again).answered, againBy: to, stored });
}

/**
 * The switch of the PUTs: a keyed PUT answered by the old version is sent again with its key to the new one, to a
 * record the new version wrote if there is one (its fields the old version does not know: the replay shows them).
 */
async function switchPuts(world: World, deployment: Deployment, log: DeployLog, to: Version, round: number) {
  const written = log.history
    .filter((timed) => timed.method === 'POST' && timed.status === 201)
    .filter((timed) => !log.deleted.has((JSON.parse(timed.body) as Todo).id));
  const byNew = written.filter((timed) => log.versions.get(timed) === to);
  const id = [...byNew, ...written].map((timed) => (JSON.parse(timed.body) as Todo).id).at(0);
  if (id === undefined) {
    deployment.switch('update', to);
    return;
  }
  const key = `"put across, round ${round}"`;
  const request = { method: 'PUT', id, asked: { title: `deploy, keyed put in round ${round}` } } as const;
  const first = await sendOn(world, log, deployment.container('update'), request, { key });
  const stored = storedItem(world, first.answered);
  deployment.switch('update', to);
  const again = await sendOn(world, log, deployment.container('update'), request, { key });
  log.resent.push({ label: `PUT ${key}`, first: first.answered, again: again.answered, againBy: to, stored });
}

/** A deploy through `versions` (N→N+1, N+1→N, or N→N+1→N, a rollback), one function at a time. */
function deploy(versions: readonly Version[]): Scenario {
  return async (world) => {
    const [initial = 'current', ...later] = versions;
    const log: DeployLog = {
      history: [],
      deleted: new Set(),
      acrossVersions: new Set(),
      versions: new Map(),
      versionOf: new Map(),
      resent: [],
    };
    const deployment = new Deployment(world, initial, log.versionOf);
    await listOf(deployment.container('list'));
    world.startFaults();
    let round = 0;
    await deployRound(world, deployment, log, round++);
    for (const to of later) {
      for (const operation of SWITCH_ORDER) {
        if (operation === 'create') await switchPosts(world, deployment, log, to, round);
        else if (operation === 'update') await switchPuts(world, deployment, log, to, round);
        else deployment.switch(operation, to);
        await deployRound(world, deployment, log, round++);
      }
    }
    // Lists once the faults are over raise what earlier lists could not (their raise is best effort): as many as the
    // read repair says it needs (lib/dynamodb/repair.ts), a list a raise's records and one for a raise a fault left
    // unknown. After them the counter covers what the version answering lists answers (deployChecks).
    world.stopFaults();
    const lists = Math.ceil(world.records().length / MAX_RAISES) + 1;
    let lastList: Timed | undefined;
    for (let list = 0; list < lists; list++) {
      ({ timed: lastList } = await sendOn(world, log, deployment.container('list'), { method: 'GET' }));
    }
    if (lastList === undefined) throw new Error('no list after the faults');
    const listed = lastList;
    return () => deployChecks(world, log, deployment.version('list'), listed);
  };
}

/** A record as each version reads its item, and its bytes in that version's list. */
const VIEWS: Readonly<Record<Version, { read(item: Item): Todo | next.Todo; bytes(item: Item): number }>> = {
  current: {
    read: (item) => recordOf(item as unknown as Todo),
    bytes: (item) => listBytes(recordOf(item as unknown as Todo)),
  },
  next: {
    read: (item) => next.recordOf(item as unknown as next.Todo),
    bytes: (item) => next.listBytes(next.recordOf(item as unknown as next.Todo)),
  },
};

function deployChecks(world: World, log: DeployLog, listedBy: Version, lastList: Timed): string[] {
  const violations = nonLinearizableRecords(log.history, (record) => String(record.title).startsWith('deploy'));
  const items = world.dynamodb.items(TABLE).filter((item) => item.pk === 'TODO');
  const byId = new Map(items.map((item) => [Number(item.id), item]));
  // Every field a 201 answered is on its record, as the version that answered reads it, unless a PUT
  // sent since asked for that field.
  for (const timed of log.history.filter(({ method, status }) => method === 'POST' && status === 201)) {
    const answered = JSON.parse(timed.body) as Todo;
    const item = byId.get(answered.id);
    if (item === undefined) {
      if (!log.deleted.has(answered.id)) violations.push(`record ${answered.id}, answered 201, is gone`);
      continue;
    }
    const put = log.history.filter(({ method, path }) => method === 'PUT' && path === `/todos/${answered.id}`);
    const stored: Readonly<Record<string, unknown>> = { ...VIEWS[log.versions.get(timed) ?? 'current'].read(item) };
    for (const [field, value] of Object.entries(answered)) {
      const changed = put.some(({ asked = {} }) => field in asked);
      if (!changed && JSON.stringify(stored[field]) !== JSON.stringify(value))
        violations.push(
          `record ${answered.id} answered 201 with ${field} ${JSON.stringify(value)}, holds ${JSON.stringify(item)}`,
        );
    }
  }
  const [counter] = world.queueItems();
  for (let id = 3; id < Number(counter?.next); id++) {
    if (!byId.has(id) && !log.deleted.has(id)) violations.push(`id ${id} given, and no record has it`);
  }
  // The list's limit holds for the version that answers it: each record its last list saw (with no fault, so
  // its raise applied) is stored with a size that covers its answer there. A copy held until the end may
  // still write a record after that list: the next list raises it.
  if (lastList.status !== 200) violations.push(`the list with no fault answered ${lastList.status}`);
  const listed = new Set(
    lastList.status === 200 ? (JSON.parse(lastList.body) as { id: number }[]).map(({ id }) => id) : [],
  );
  for (const item of items.filter(({ id }) => listed.has(Number(id)))) {
    const answers = VIEWS[listedBy].bytes(item);
    if (!(Number(item.size) >= answers))
      violations.push(
        `record ${String(item.id)} is stored with size ${String(item.size)}, its answer takes ${answers} bytes (${listedBy})`,
      );
  }
  for (const resent of log.resent) violations.push(...replayChecks(resent));
  if (world.faultFree) {
    for (const timed of log.history) {
      const fine = [200, 201, 404].includes(timed.status) || (timed.status === 412 && log.acrossVersions.has(timed));
      if (!fine) violations.push(`${timed.method} ${timed.path} answered ${timed.status} with no fault`);
    }
  }
  return violations;
}

/**
 * A keyed request sent again to the other version replays its first answer (docs/design.md, "Keys and tags across
 * versions"): the record as its key's claim kept it, shown in the replaying version's contract. So every field the
 * replay shows is the first answer's where that answer shows it too, and as stored when it was answered where only
 * the replaying version knows it (a field the other version wrote, kept by the first version's write).
 */
function replayChecks({ label, first, again, againBy, stored }: Resent): string[] {
  const was = recordIn(first);
  if (was === undefined) return [];
  const now = recordIn(again);
  const replayed =
    'ok' in again && typeof again.ok === 'object' && again.ok !== null && 'replayed' in again.ok && again.ok.replayed;
  const sent = `${label}, answered ${JSON.stringify(first)}, answered ${JSON.stringify(again)} when sent again to the other version`;
  if (now?.id !== was.id || replayed !== true) return [sent];
  if (stored === undefined) return [`${sent}, and its record was not stored when first answered`];
  const expected: Readonly<Record<string, unknown>> = { ...VIEWS[againBy].read(stored) };
  const firstShown: Readonly<Record<string, unknown>> = { ...was };
  const shown: Readonly<Record<string, unknown>> = { ...now };
  const fields = [...new Set([...Object.keys(expected), ...Object.keys(shown)])];
  const differ = fields.filter((field) => {
    const want = field in firstShown ? firstShown[field] : expected[field];
    return !(field in expected) || JSON.stringify(shown[field]) !== JSON.stringify(want);
  });
  return differ.length === 0
    ? []
    : [`${sent}: ${differ.join(', ')} not as first answered and stored (${JSON.stringify(stored)})`];
}

/** The deploys the simulator explores: both orders, and a rollback. */
export const DEPLOYS: Readonly<Record<string, Scenario>> = {
  'deploy: N to N+1, one function at a time': deploy(['current', 'next']),
  'deploy: N+1 to N, one function at a time': deploy(['next', 'current']),
  'deploy: N to N+1 and back, a rollback': deploy(['current', 'next', 'current']),
};

/**
 * The scenarios whose runs send many copies of writes, whose scripts are too many to search each:
 * searched exhaustively to one fault only, and at random with faults at a rate (on every copy, not
 * the first five). The workloads and deploys, of many requests; the queue of POSTs of many
 * containers (25 to 55 copies a run); the list's refusals, where a write goes on sending its
 * transaction until its deadline while a copy is unanswered (up to 55 copies); and a key that
 * expires, whose run spans 45 s of simulated time. To three faults, a list's refusal took 2,380
 * runs, none pruned, 38 to 58 s of CPU, and the key's 18,401 runs, 75 s; to one fault (the held
 * first copy the full list and the key are about among them), each takes about a second.
 */
export const WORKLOADS: readonly string[] = [
  'workload: four containers, shared records',
  'workload: four containers, shared records, keyed',
  ...Object.keys(DEPLOYS),
  ...Object.keys(LIST_LIMITS),
  ...Object.keys(QUEUE_UNDER_CONCURRENCY),
  ...Object.keys(KEY_EXPIRY),
  ...Object.keys(LIST_SNAPSHOTS),
  ...Object.keys(LIST_EDITS),
];

/** The scenarios searched with fewer random runs than asked (explore.ts, `searchScenario`), each at most this many. */
export const SEEDS_AT_MOST: Readonly<Record<string, number>> = { ...QUEUE_SEEDS_AT_MOST };

/**
 * Every scenario the simulator explores, by name. Those of one request each, and those of the modules marked so,
 * answer every request when the client's retries cover the script's faults (retries.ts): not the full list's, where
 * a copy held past a refusal makes a 503 the honest answer, nor the workloads and deploys, whose faults are drawn
 * at a rate and whose checks read statuses of their own.
 */
export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'POST alone': answeringWithinRetries(post(false)),
  'POST alone, keyed': answeringWithinRetries(post(true)),
  'POST batched': answeringWithinRetries(batched(false)),
  'POST batched, keyed': answeringWithinRetries(batched(true)),
  'POST queued behind a stalled head': answeringWithinRetries(queued(false)),
  'POST queued behind a stalled head, keyed': answeringWithinRetries(queued(true)),
  // Taken over, or giving up, whenever an adversarial pacing says so: exact whatever it decides.
  'POST queued behind a stalled head, keyed, under an adversarial pacing': withOptions(
    { pacing: 'adversarial' },
    queued(true),
  ),
  'POST of a big request queued behind a stalled head': answeringWithinRetries(queued(false, true)),
  'POST of a big request queued behind a stalled head, keyed': answeringWithinRetries(queued(true, true)),
  PUT: answeringWithinRetries(put(false, false)),
  'PUT, keyed': answeringWithinRetries(put(true, false)),
  'PUT with If-Match': answeringWithinRetries(put(false, true)),
  'PUT with If-Match, keyed': answeringWithinRetries(put(true, true)),
  DELETE: answeringWithinRetries(remove(false)),
  'DELETE, keyed': answeringWithinRetries(remove(true)),
  seed: answeringWithinRetries(seed),
  ...LIST_LIMITS,
  ...QUEUE_UNDER_CONCURRENCY,
  ...KEY_EXPIRY,
  ...LIST_SNAPSHOTS,
  ...LIST_EDITS,
  ...READ_REPAIR,
  'workload: four containers, shared records': workload(false),
  'workload: four containers, shared records, keyed': workload(true),
  ...DEPLOYS,
};
