import { join } from 'node:path';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { COUNTER_KEY, storedSize, todoKey } from '../../lib/dynamodb/table';
import { MAX_LIST_BYTES } from '../../lib/list-size';
import { MAX_TITLE_LENGTH, applyPatch, createTodo, newTodoBytes } from '../../lib/todos';
import type { FunctionPool } from '../../harness/container';
import { COSTLIEST_CHARACTER, fillTable, fullList, titleAtTheCap } from '../../harness/filled-table';
import { startFleet, type Fleet } from '../../harness/fleet';
import { idGaps, openLoopPosts, postLoad, type PostAnswer } from '../../harness/load';
import { eventually } from '../../harness/wait';
import { ensureTable, localClient, startDynamoDbLocal } from '../../test/support/dynamodb-local-process';
import { median, round, type BenchOptions, type Row } from '../lib';
import { fleetCpuMs, machineCpuMs } from '../proc';
import { THIS_TREE, packagedAt, treesFor, type Tree } from '../trees';
import { packageWith } from '../../harness/versions';
import { PROJECT_ROOT } from '../../harness/project';

/**
 * The shipped zips as AWS runs them (harness/fleet.ts): each function a pool of single-invocation
 * containers on Node 22, behind an HTTP API gateway, on DynamoDB as AWS runs it
 * (harness/aws-dynamodb/: conflicts, throughput per partition, service times, 500s) over DynamoDB
 * Local. Two designs of this tree: the queue of POSTs (as it ships) and one transaction a POST
 * (its zips built with harness/one-transaction-pacing.ts); `--baseline <ref>` adds that revision's zips. All
 * in the same run, on the same DynamoDB Local, each point of one next to the same point of the others.
 *
 * - POSTs at offered rates of 25, 50 and 100 a second (open loop: clients that do not wait for
 *   each other), over 16 createTodo containers; 50 a second is a deployed stage's throttle;
 * - POSTs of titles at the cap (MAX_TITLE_LENGTH characters) at 25 and 50 a second, with what a
 *   look at the queue costs: a janitor deletes their records behind the API, so the list stays
 *   far from its 6 MB limit whatever the cap;
 * - POSTs from 1, 4, 8 and 16 containers, each kept busy (closed loop): the curve;
 * - for each point, the rate achieved, p50 and p99, answers other than 201, what each POST cost
 *   DynamoDB (requests, read and write units, throttles, conflicts) and the machine (CPU, by
 *   process), and how busy the machine was: a point whose CPU is saturated measures the
 *   machine, not the design;
 * - a burst of 200 concurrent POSTs on 16 warm containers;
 * - a list written full (harness/filled-table.ts) but for room for 10 records at the cap, 20 POSTs
 *   of titles at the cap, then GET /todos with and without gzip (Lambda's 6 MB limit);
 * - GET /todos latency and the listTodos container's peak RSS at 10^4 and 10^5 records.
 */

/** Offered rates, POSTs a second, over OPEN_LOOP_CONTAINERS. */
const OFFERED_RATES = [25, 50, 100];
/** Offered rates of POSTs of titles at the cap. */
const CAP_TITLE_RATES = [25, 50];
const OPEN_LOOP_CONTAINERS = 16;
/** Seconds of warm-up at the point's own load, then of measurement. */
const WARM_SECONDS = 2;
const OPEN_SECONDS = 10;
const CLOSED_LOOP_CONTAINERS = [1, 4, 8, 16];
const CLOSED_SECONDS = 5;
/** Above this share of both cores busy, a point measures the machine. */
const SATURATED = 0.9;
/** What "holds the rate" means: every POST answered 201, the slowest 1 % within a second. */
const HOLDS_P99_MS = 1_000;
const BURST = 200;
/** Records at the cap a full list is left room for, and the POSTs of such titles sent to it, 10 at a time. */
const FULL_LIST_ROOM_FOR = 10;
const FULL_LIST_POSTS = 20;
const LIST_SIZES = [10_000, 100_000];
/** Titles of the records in the list figures: short enough that 10^5 of them fit in any budget. */
const LIST_TITLE = 'to-do 00';

/** What a row measures: a tree, in one of its designs. */
interface Contender {
  readonly name: string;
  readonly tree: Tree;
  /** A design of the tree's own: its zips built again with these stand-ins (harness/versions.ts, packageWith). */
  readonly swaps?: Readonly<Record<string, string>>;
}

/** The trees asked for, and this tree once more without its queue of POSTs: the design it was chosen over. */
function contenders(baseline: string | undefined): Contender[] {
  return [
    ...treesFor(baseline).map((tree) => ({ name: tree.name, tree })),
    {
      name: 'one transaction a POST (this tree, its pacing never queues)',
      tree: THIS_TREE,
      swaps: {
        [join(PROJECT_ROOT, 'lib/dynamodb/pacing.ts')]: join(PROJECT_ROOT, 'harness/one-transaction-pacing.ts'),
      },
    },
  ];
}

/** The Query of a look at the queue of POSTs (lib/dynamodb/queue.ts), as the AWS profile counts queries. */
const LOOK = 'COUNTER, Limit 2';

function operations(fleet: Fleet, from: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const request of fleet.proxy.seen.slice(from)) counts[request.operation] = (counts[request.operation] ?? 0) + 1;
  return counts;
}

async function post(url: string, title: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  const response = await fetch(`${url}/todos`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ title }),
  });
  const text = await response.text();
  return {
    status: response.status,
    id: response.status === 201 ? (JSON.parse(text) as { id: number }).id : undefined,
    ms: performance.now() - started,
  };
}

/** GET /todos as a client that does or does not accept gzip; fetch would otherwise ask for it itself. */
async function list(url: string, gzip: boolean) {
  const started = performance.now();
  const response = await fetch(`${url}/todos`, { headers: { 'accept-encoding': gzip ? 'gzip' : 'identity' } });
  const body = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    encoding: response.headers.get('content-encoding') ?? 'identity',
    bytes: body.length,
    ms: performance.now() - started,
  };
}

/** What DynamoDB (as AWS runs it) counted so far, as plain numbers. */
function dynamoDbCounts(fleet: Fleet) {
  const stats = fleet.dynamodb?.stats;
  function sum(counts: Record<string, number> = {}): number {
    return Object.values(counts).reduce((total, n) => total + n, 0);
  }
  return {
    requests: sum(stats?.requests),
    readUnits: stats?.capacity.readUnits ?? 0,
    writeUnits: stats?.capacity.writeUnits ?? 0,
    throttled: sum(stats?.capacity.throttled),
    throttledQueries: stats?.capacity.throttled.Query ?? 0,
    conflicts: (stats?.conflicts.transactionsCancelled ?? 0) + (stats?.conflicts.writesRefused ?? 0),
    inProgress: stats?.conflicts.inProgress ?? 0,
    looks: stats?.queries[LOOK]?.requests ?? 0,
    lookReadUnits: stats?.queries[LOOK]?.readUnits ?? 0,
  };
}

function cpuNow() {
  const own = process.cpuUsage();
  return { ...fleetCpuMs(), harness: (own.user + own.system) / 1000, machine: machineCpuMs() };
}

/** The answers of a point's POSTs: how many of each status, and the latency's p50 and p99. */
interface Answered {
  readonly statuses: Record<number, number>;
  readonly p50: number;
  readonly p99: number;
}

function answered(answers: readonly PostAnswer[]): Answered {
  const statuses: Record<number, number> = {};
  for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
  const latencies = answers.map((answer) => answer.ms).sort((a, b) => a - b);
  function at(share: number) {
    return latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * share))] ?? NaN;
  }
  return { statuses, p50: at(0.5), p99: at(0.99) };
}

/**
 * How long a point may leave the fleet busy after its last answer: a point past what the fleet
 * carries leaves invocations that clients gave up on, and the next point must not inherit them.
 */
const DRAIN_WITHIN_MS = 120_000;

/** One point: the POSTs `run` sends, and what they cost, from before it to after. */
async function measure(fleet: Fleet, seconds: number, run: () => Promise<Answered>) {
  await eventually(() => createPool(fleet).quiet, { within: DRAIN_WITHIN_MS, what: 'createTodo containers idle' });
  const counts = dynamoDbCounts(fleet);
  const cpu = cpuNow();
  const { statuses, p50, p99 } = await run();
  const after = { counts: dynamoDbCounts(fleet), cpu: cpuNow() };
  const created = statuses[201] ?? 0;
  function per(value: number) {
    return value / Math.max(1, created);
  }
  const machineBusy =
    (after.cpu.machine.busy - cpu.machine.busy) / Math.max(1, after.cpu.machine.total - cpu.machine.total);
  return {
    perSecond: created / seconds,
    sent: Object.values(statuses).reduce((sum, count) => sum + count, 0),
    statuses,
    p50,
    p99,
    requests: per(after.counts.requests - counts.requests),
    readUnits: per(after.counts.readUnits - counts.readUnits),
    writeUnits: per(after.counts.writeUnits - counts.writeUnits),
    throttled: after.counts.throttled - counts.throttled,
    throttledQueries: after.counts.throttledQueries - counts.throttledQueries,
    conflicts: after.counts.conflicts - counts.conflicts,
    inProgress: after.counts.inProgress - counts.inProgress,
    looks: after.counts.looks - counts.looks,
    lookReadUnits: after.counts.lookReadUnits - counts.lookReadUnits,
    cpu: {
      dynamoDbLocal: per(after.cpu.dynamoDbLocal - cpu.dynamoDbLocal),
      containers: per(after.cpu.containers - cpu.containers),
      harness: per(after.cpu.harness - cpu.harness),
    },
    machineBusy,
  };
}

type Point = Awaited<ReturnType<typeof measure>>;

function pointRow(contender: Contender, name: string, point: Point, offered?: number): Row {
  const failed = point.sent - (point.statuses[201] ?? 0);
  const saturated = point.machineBusy >= SATURATED;
  return {
    section: 'fleet',
    name: `${contender.name}: ${name}`,
    value: round(point.perSecond, 1),
    unit: 'POSTs/s',
    ...(offered === undefined
      ? {}
      : {
          budget: `holds ${offered}/s: every POST 201, p99 < ${HOLDS_P99_MS} ms`,
          met: failed === 0 && point.p99 < HOLDS_P99_MS,
        }),
    note:
      (saturated ? 'CPU SATURATED (measures the machine); ' : '') +
      `machine ${round(point.machineBusy * 100, 0)} % busy; sent ${point.sent}, answers ${JSON.stringify(point.statuses)}; ` +
      `p50 ${round(point.p50, 0)} ms, p99 ${round(point.p99, 0)} ms; ` +
      `DynamoDB a POST: ${round(point.requests)} requests, ${round(point.readUnits)} read and ${round(point.writeUnits)} write units; ` +
      `throttled ${point.throttled} (Query ${point.throttledQueries}), conflicts ${point.conflicts}, in progress ${point.inProgress}; ` +
      (point.looks === 0
        ? ''
        : `${point.looks} looks at the queue, ${round(point.lookReadUnits / point.looks)} read units a look; `) +
      `CPU a POST: DynamoDB Local ${round(point.cpu.dynamoDbLocal)} ms, containers ${round(point.cpu.containers)} ms, ` +
      `gateway, proxies and load ${round(point.cpu.harness)} ms`,
  };
}

async function openLoopPoint(fleet: Fleet, pool: FunctionPool, rate: number, titleLength = 0): Promise<Point> {
  pool.cap = OPEN_LOOP_CONTAINERS;
  await openLoopPosts(fleet.url, { perSecond: rate, seconds: WARM_SECONDS, tag: `warm ${rate}`, titleLength });
  return measure(fleet, OPEN_SECONDS, async () =>
    answered(
      await openLoopPosts(fleet.url, { perSecond: rate, seconds: OPEN_SECONDS, tag: `offered ${rate}`, titleLength }),
    ),
  );
}

/**
 * Keeps a fleet's list far from its 6 MB limit while titles at the cap are POSTed, so that a point
 * measures POSTs and never the list's 409s, whatever the cap (at 60 KB titles, 99 records filled
 * it): every `JANITOR_MS` it deletes the records made since its last round, straight in DynamoDB
 * Local (past the AWS profile: it costs the modelled partitions nothing, and meets no POST's
 * transaction), and takes their stored sizes off the list's size, as a DELETE would.
 */
function startJanitor(endpoint: string, table: string): { stop(): Promise<void> } {
  const client = localClient(endpoint);
  const documents = DynamoDBDocumentClient.from(client);
  let next = 3;
  const stopped = new AbortController();
  async function sweep(): Promise<void> {
    const counter = await documents.send(new GetCommand({ TableName: table, Key: COUNTER_KEY }));
    const upTo = Number(counter.Item?.next ?? next);
    let freed = 0;
    for (; next < upTo; next++) {
      const deleted = await documents.send(
        new DeleteCommand({ TableName: table, Key: todoKey(next), ReturnValues: 'ALL_OLD' }),
      );
      if (deleted.Attributes !== undefined) freed += storedSize(deleted.Attributes);
    }
    if (freed === 0) return;
    await documents.send(
      new UpdateCommand({
        TableName: table,
        Key: COUNTER_KEY,
        UpdateExpression: 'SET #bytes = #bytes - :freed',
        ExpressionAttributeNames: { '#bytes': 'bytes' },
        ExpressionAttributeValues: { ':freed': freed },
      }),
    );
  }
  const done = (async () => {
    while (!stopped.signal.aborted) {
      await sweep();
      await new Promise((resolve) => setTimeout(resolve, JANITOR_MS));
    }
  })();
  return {
    async stop() {
      stopped.abort();
      await done;
      client.destroy();
    },
  };
}
const JANITOR_MS = 250;

async function closedLoopPoint(fleet: Fleet, pool: FunctionPool, containers: number): Promise<Point> {
  pool.cap = containers;
  // Every container started and warm before the clock runs.
  await postLoad(fleet.url, { connections: 2 * containers, seconds: 1 });
  return measure(fleet, CLOSED_SECONDS, async () => {
    const { statuses, latencyMs } = await postLoad(fleet.url, { connections: 2 * containers, seconds: CLOSED_SECONDS });
    return { statuses, p50: latencyMs.p50, p99: latencyMs.p99 };
  });
}

function createPool(fleet: Fleet): FunctionPool {
  const pool = fleet.pools.get('createTodo');
  if (pool === undefined) throw new Error('no createTodo');
  return pool;
}

/**
 * The POST figures of every tree, point by point: each point measured on one tree and then the
 * other (in turn first), so that a slow patch of a shared machine falls on both.
 */
async function postFigures(fleets: readonly { contender: Contender; fleet: Fleet }[], rows: Row[]): Promise<void> {
  function inTurn(i: number) {
    return i % 2 === 0 ? fleets : [...fleets].reverse();
  }
  for (const [i, rate] of OFFERED_RATES.entries()) {
    for (const { contender, fleet } of inTurn(i)) {
      const point = await openLoopPoint(fleet, createPool(fleet), rate);
      rows.push(
        pointRow(
          contender,
          `POSTs offered at ${rate}/s over ${OPEN_LOOP_CONTAINERS} createTodo containers`,
          point,
          rate,
        ),
      );
    }
  }
  for (const [i, containers] of CLOSED_LOOP_CONTAINERS.entries()) {
    for (const { contender, fleet } of inTurn(i)) {
      const point = await closedLoopPoint(fleet, createPool(fleet), containers);
      rows.push(
        pointRow(
          contender,
          `POSTs, closed loop, ${containers} createTodo container${containers === 1 ? '' : 's'}`,
          point,
        ),
      );
    }
  }
  for (const { contender, fleet } of fleets) {
    const listed = ((await (await fetch(`${fleet.url}/todos`)).json()) as { id: number }[]).map((todo) => todo.id);
    const gaps = idGaps(listed);
    rows.push({
      section: 'fleet',
      name: `${contender.name}: ids skipped over all ${listed.length} records the POSTs made`,
      value: gaps.length,
      unit: 'ids',
      budget: '0',
      met: gaps.length === 0,
    });
  }
}

async function burst(contender: Contender, fleet: Fleet, rows: Row[]): Promise<void> {
  const pool = fleet.pools.get('createTodo');
  if (pool !== undefined) pool.cap = 16;
  const from = fleet.proxy.seen.length;
  const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => post(fleet.url, `burst ${i}`)));
  const ops = operations(fleet, from);
  const latencies = answers.map((answer) => answer.ms).sort((a, b) => a - b);
  const created = answers.filter((answer) => answer.status === 201).length;
  rows.push({
    section: 'fleet',
    name: `${contender.name}: burst of ${BURST} concurrent POSTs on 16 warm containers, TransactWriteItems a POST`,
    value: round((ops.TransactWriteItems ?? 0) / BURST),
    unit: 'transactions',
    budget: '≤ 1.3',
    met: (ops.TransactWriteItems ?? 0) / BURST <= 1.3,
    note:
      `p99 ${round(latencies[Math.floor(BURST * 0.99) - 1] ?? NaN, 0)} ms, slowest ${round(latencies.at(-1) ?? NaN, 0)} ms; ` +
      `${created} × 201; ${round((ops.GetItem ?? 0) / BURST)} GetItem a POST`,
  });
}

/** The title of the POSTs to a full list: at the cap, of the character the list's answer spends most on. */
const FULL_LIST_TITLE = titleAtTheCap('one more', COSTLIEST_CHARACTER);

/**
 * A table written full (fullList) but for room for FULL_LIST_ROOM_FOR records of FULL_LIST_TITLE:
 * the list at its limit in seconds, whatever the title cap.
 */
async function fullTable(endpoint: string): Promise<string> {
  const table = `full-list-${Date.now()}`;
  const client = localClient(endpoint);
  try {
    await ensureTable(client, table);
    const room = FULL_LIST_ROOM_FOR * newTodoBytes({ title: FULL_LIST_TITLE });
    await fillTable(DynamoDBDocumentClient.from(client), table, fullList({ room }));
  } finally {
    client.destroy();
  }
  return table;
}

async function fullListFigures(tree: Tree, fleet: Fleet, rows: Row[]): Promise<void> {
  const statuses: Record<number, number> = {};
  for (let i = 0; i < FULL_LIST_POSTS; i += 10) {
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(fleet.url, FULL_LIST_TITLE)));
    for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
  }
  for (const gzip of [false, true]) {
    const answer = await list(fleet.url, gzip);
    const record = fleet
      .records()
      .filter((seen) => seen.routeKey === 'GET /todos')
      .at(-1);
    rows.push({
      section: 'fleetList',
      name: `${tree.name}: a list of ${MAX_LIST_BYTES} bytes less room for ${FULL_LIST_ROOM_FOR} records, ${FULL_LIST_POSTS} POSTs at the cap, then GET /todos ${gzip ? 'accepting gzip' : 'without gzip'}`,
      value: answer.status,
      unit: 'status',
      budget: '200',
      met: answer.status === 200,
      note:
        `POSTs answered ${JSON.stringify(statuses)}; the list ${answer.bytes} bytes (${answer.encoding}); ` +
        `Lambda's answer ${record?.responseBytes ?? '?'} bytes${record?.integrationError ? ` (${record.integrationError})` : ''}`,
    });
  }
}

/** A table of `count` records of LIST_TITLE, every other one completed, written directly (harness/filled-table.ts). */
async function filledTable(endpoint: string, count: number): Promise<string> {
  const table = `list-${count}-${Date.now()}`;
  const client = localClient(endpoint);
  try {
    await ensureTable(client, table);
    const todos = Array.from({ length: count }, (_, i) =>
      applyPatch(createTodo({ title: LIST_TITLE }, i + 1), { completed: (i + 1) % 2 === 0 }),
    );
    await fillTable(DynamoDBDocumentClient.from(client), table, todos);
  } finally {
    client.destroy();
  }
  return table;
}

/**
 * POSTs of titles at the cap, each contender's point on a fleet of its own, started for it and
 * stopped after it: the fault proxy keeps every request it saw, and these weigh the most.
 */
async function capTitleFigures(
  all: readonly Contender[],
  start: (contender: Contender) => Promise<Fleet>,
  dynamoDbEndpoint: string,
  rows: Row[],
): Promise<void> {
  for (const [i, rate] of CAP_TITLE_RATES.entries()) {
    for (const contender of i % 2 === 0 ? all : [...all].reverse()) {
      const fleet = await start(contender);
      const janitor = startJanitor(dynamoDbEndpoint, fleet.table);
      try {
        const point = await openLoopPoint(fleet, createPool(fleet), rate, MAX_TITLE_LENGTH);
        const name = `POSTs of titles at the cap (${MAX_TITLE_LENGTH} characters) offered at ${rate}/s over ${OPEN_LOOP_CONTAINERS} createTodo containers`;
        rows.push(pointRow(contender, name, point, rate));
      } finally {
        await janitor.stop();
        await fleet.stop();
      }
    }
  }
}

/** The POST figures, of every contender, on one DynamoDB Local: offered rates, titles at the cap, the closed-loop curve, a burst. */
export async function fleet(options: BenchOptions): Promise<Row[]> {
  const dynamodb = await startDynamoDbLocal();
  const rows: Row[] = [];
  const fleets: { contender: Contender; fleet: Fleet }[] = [];
  const all = contenders(options.baseline);
  async function start(contender: Contender): Promise<Fleet> {
    const shipped = await packagedAt(contender.tree);
    const packaged = contender.swaps === undefined ? shipped : await packageWith(shipped, contender.swaps);
    return startFleet({ packaged, dynamoDbEndpoint: dynamodb.endpoint, logLevel: 'silent' });
  }
  try {
    for (const contender of all) fleets.push({ contender, fleet: await start(contender) });
    await postFigures(fleets, rows);
    for (const { contender, fleet: running } of fleets) await burst(contender, running, rows);
    // The titles at the cap last, on fleets of their own: the others' memory is freed first.
    for (const { fleet: running } of fleets.splice(0)) await running.stop();
    await capTitleFigures(all, start, dynamodb.endpoint, rows);
  } finally {
    for (const { fleet: running } of fleets) await running.stop();
    await dynamodb.close();
  }
  return rows;
}

/** Lists asked for at once: what reading one partition costs when several read it in the same second (docs/scale.md). */
const LISTS_AT_ONCE = 5;

async function listsAtOnce(tree: Tree, fleet: Fleet, size: number, rows: Row[]): Promise<void> {
  const before = dynamoDbCounts(fleet);
  const machine = machineCpuMs();
  const started = performance.now();
  const answers = await Promise.all(Array.from({ length: LISTS_AT_ONCE }, () => list(fleet.url, true)));
  const after = dynamoDbCounts(fleet);
  const now = machineCpuMs();
  const busy = (now.busy - machine.busy) / Math.max(1, now.total - machine.total);
  rows.push({
    section: 'fleetList',
    name: `${tree.name}: ${LISTS_AT_ONCE} GET /todos at once at ${size} records, the slowest`,
    value: round(Math.max(...answers.map((answer) => answer.ms)), 0),
    unit: 'ms',
    note:
      (busy >= SATURATED ? 'CPU SATURATED (measures the machine); ' : '') +
      `machine ${round(busy * 100, 0)} % busy; ` +
      `all in ${round(performance.now() - started, 0)} ms; statuses ${answers.map((answer) => answer.status).join('/')}; ` +
      `${round((after.readUnits - before.readUnits) / LISTS_AT_ONCE)} read units a list; ` +
      `${after.throttled - before.throttled} reads throttled (and retried)`,
  });
}

/** The list figures, of every tree: a full list against Lambda's 6 MB answer, and GET /todos at 10^4 and 10^5 records. */
export async function fleetList(options: BenchOptions): Promise<Row[]> {
  const trees = treesFor(options.baseline);
  const dynamodb = await startDynamoDbLocal();
  const rows: Row[] = [];
  try {
    for (const tree of trees) {
      const packaged = await packagedAt(tree);
      const table = await fullTable(dynamodb.endpoint);
      const running = await startFleet({ packaged, dynamoDbEndpoint: dynamodb.endpoint, table, logLevel: 'silent' });
      try {
        await fullListFigures(tree, running, rows);
      } finally {
        await running.stop();
      }
    }
    for (const size of LIST_SIZES) {
      const table = await filledTable(dynamodb.endpoint, size);
      for (const tree of trees) {
        const packaged = await packagedAt(tree);
        const running = await startFleet({ packaged, dynamoDbEndpoint: dynamodb.endpoint, table, logLevel: 'silent' });
        try {
          await listsAtOnce(tree, running, size, rows);
          for (const gzip of [false, true]) {
            await list(running.url, gzip);
            const before = dynamoDbCounts(running);
            const answers = [];
            for (let i = 0; i < 5; i++) answers.push(await list(running.url, gzip));
            const readUnits = (dynamoDbCounts(running).readUnits - before.readUnits) / answers.length;
            rows.push({
              section: 'fleetList',
              name: `${tree.name}: GET /todos at ${size} records, ${gzip ? 'accepting gzip' : 'without gzip'}`,
              value: round(median(answers.map((answer) => answer.ms)), 0),
              unit: 'ms',
              note:
                `status ${answers.map((answer) => answer.status).join('/')}; ${answers[0]?.bytes ?? 0} bytes ` +
                `(${answers[0]?.encoding ?? '?'}); listTodos peak RSS ${round(running.stats('listTodos').maxRssKb / 1024, 0)} MB; ` +
                `${round(readUnits)} read units a list`,
            });
          }
        } finally {
          await running.stop();
        }
      }
    }
  } finally {
    await dynamodb.close();
  }
  return rows;
}
