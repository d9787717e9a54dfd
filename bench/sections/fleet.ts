import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { FunctionPool } from '../../harness/container';
import { startFleet, type Fleet } from '../../harness/fleet';
import { idGaps, postLoad } from '../../harness/load';
import { ensureTable, localClient, startDynamoDbLocal } from '../../scripts/dynamodb-local-process';
import { median, round, type BenchOptions, type Row } from '../lib';
import { fleetCpuMs } from '../proc';
import { packagedAt, treesFor, type Tree } from '../trees';

/**
 * The shipped zips as AWS runs them (harness/fleet.ts): each function a pool of single-invocation
 * containers on Node 22, behind an HTTP API gateway, on DynamoDB Local. `--baseline <ref>` runs
 * the same against that revision's zips, in the same run, on the same DynamoDB Local.
 *
 * - POST throughput as createTodo scales out to 1, 2, 4, 8 and 16 containers: POSTs/s, p99, and
 *   what each POST cost DynamoDB (transactions and reads), from the fault proxy's record; the
 *   median of three rounds, each in its own order;
 * - a burst of 200 concurrent POSTs on 16 warm containers;
 * - 110 POSTs of 60 KB titles, then GET /todos with and without gzip (Lambda's 6 MB limit);
 * - GET /todos latency and the listTodos container's peak RSS at 10^4 and 10^5 records.
 */

const CONTAINERS = [1, 2, 4, 8, 16];
/** The order of the points in each round. */
const ROUND_ORDERS = [
  [1, 16, 2, 8, 4],
  [4, 8, 2, 16, 1],
  [16, 1, 8, 4, 2],
];
/** Seconds of POSTs per point, after a warm-up that starts every container. */
const MEASURE_SECONDS = 4;
const BURST = 200;
const BIG_TITLE_BYTES = 60_000;
const BIG_POSTS = 110;
const LIST_SIZES = [10_000, 100_000];
/** Titles of the records in the list figures: short enough that 10^5 of them fit in any budget. */
const LIST_TITLE = 'to-do 00';

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

/** One measurement of POST throughput with `containers` createTodo containers. */
async function postPoint(fleet: Fleet, pool: FunctionPool, containers: number) {
  pool.cap = containers;
  // Every container started and warm before the clock runs.
  await postLoad(fleet.url, { connections: 2 * containers, seconds: 1 });
  const from = fleet.proxy.seen.length;
  const cpuBefore = fleetCpuMs();
  const ownBefore = process.cpuUsage();
  const report = await postLoad(fleet.url, { connections: 2 * containers, seconds: MEASURE_SECONDS });
  const own = process.cpuUsage(ownBefore);
  const cpuAfter = fleetCpuMs();
  // Where the machine's CPU went: every process of the fleet shares its two cores.
  const cpu = {
    dynamoDbLocal: cpuAfter.dynamoDbLocal - cpuBefore.dynamoDbLocal,
    containers: cpuAfter.containers - cpuBefore.containers,
    // The gateway, the fault proxy and the load run in this process.
    harness: (own.user + own.system) / 1000,
  };
  return { report, ops: operations(fleet, from), cpu };
}

async function postScaling(tree: Tree, fleet: Fleet, rows: Row[]): Promise<void> {
  const pool = fleet.pools.get('createTodo');
  if (pool === undefined) throw new Error('no createTodo');
  // Rounds in changing orders, each point's ratio taken to its own round's 1 container: a slow
  // patch of a shared machine then moves one round's figures, not one point's.
  const points = new Map<
    number,
    {
      perSecond: number;
      ratio: number;
      p99: number;
      tx: number;
      gets: number;
      requests: number;
      cpu: { dynamoDbLocal: number; containers: number; harness: number };
    }[]
  >();
  for (const order of ROUND_ORDERS) {
    const round: Record<number, Awaited<ReturnType<typeof postPoint>>> = {};
    for (const containers of order) round[containers] = await postPoint(fleet, pool, containers);
    const alone = round[1]?.report.perSecond ?? NaN;
    for (const containers of CONTAINERS) {
      const point = round[containers];
      if (point === undefined) continue;
      const posts = point.report.ids.length;
      points.set(containers, [
        ...(points.get(containers) ?? []),
        {
          perSecond: point.report.perSecond,
          ratio: point.report.perSecond / alone,
          p99: point.report.latencyMs.p99,
          tx: (point.ops.TransactWriteItems ?? 0) / posts,
          gets: (point.ops.GetItem ?? 0) / posts,
          // Every request to DynamoDB, whatever its kind: what a POST costs the store in all.
          requests: Object.values(point.ops).reduce((sum, count) => sum + count, 0) / posts,
          cpu: {
            dynamoDbLocal: point.cpu.dynamoDbLocal / posts,
            containers: point.cpu.containers / posts,
            harness: point.cpu.harness / posts,
          },
        },
      ]);
    }
  }
  for (const containers of CONTAINERS) {
    const measured = points.get(containers) ?? [];
    const ratio = median(measured.map((point) => point.ratio));
    rows.push({
      section: 'fleet',
      name: `${tree.name}: POST, ${containers} createTodo container${containers === 1 ? '' : 's'}`,
      value: round(median(measured.map((point) => point.perSecond)), 0),
      unit: 'POSTs/s',
      ...(containers >= 8 ? { budget: '≥ 0.8 × 1 container', met: ratio >= 0.8 } : {}),
      note:
        `median of ${measured.length} rounds; ×${round(ratio)} of 1 container (rounds: ${measured.map((point) => round(point.ratio)).join(', ')}); ` +
        `p99 ${round(median(measured.map((point) => point.p99)), 0)} ms; ` +
        `${round(median(measured.map((point) => point.tx)))} TransactWriteItems and ${round(median(measured.map((point) => point.gets)))} GetItem a POST; ` +
        `${round(median(measured.map((point) => point.requests)))} DynamoDB requests a POST in all; ` +
        `CPU a POST: DynamoDB Local ${round(median(measured.map((point) => point.cpu.dynamoDbLocal)))} ms, ` +
        `containers ${round(median(measured.map((point) => point.cpu.containers)))} ms, ` +
        `gateway, proxy and load ${round(median(measured.map((point) => point.cpu.harness)))} ms`,
    });
  }
  const listed = ((await (await fetch(`${fleet.url}/todos`)).json()) as { id: number }[]).map((todo) => todo.id);
  const gaps = idGaps(listed);
  rows.push({
    section: 'fleet',
    name: `${tree.name}: ids skipped over all ${listed.length} records the POSTs made`,
    value: gaps.length,
    unit: 'ids',
    budget: '0',
    met: gaps.length === 0,
  });
}

async function burst(tree: Tree, fleet: Fleet, rows: Row[]): Promise<void> {
  const pool = fleet.pools.get('createTodo');
  if (pool !== undefined) pool.cap = 16;
  const from = fleet.proxy.seen.length;
  const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => post(fleet.url, `burst ${i}`)));
  const ops = operations(fleet, from);
  const latencies = answers.map((answer) => answer.ms).sort((a, b) => a - b);
  const created = answers.filter((answer) => answer.status === 201).length;
  rows.push({
    section: 'fleet',
    name: `${tree.name}: burst of ${BURST} concurrent POSTs on 16 warm containers, TransactWriteItems a POST`,
    value: round((ops.TransactWriteItems ?? 0) / BURST),
    unit: 'transactions',
    budget: '≤ 1.3',
    met: (ops.TransactWriteItems ?? 0) / BURST <= 1.3,
    note:
      `p99 ${round(latencies[Math.floor(BURST * 0.99) - 1] ?? NaN, 0)} ms, slowest ${round(latencies.at(-1) ?? NaN, 0)} ms; ` +
      `${created} × 201; ${round((ops.GetItem ?? 0) / BURST)} GetItem a POST`,
  });
}

async function bigList(tree: Tree, fleet: Fleet, rows: Row[]): Promise<void> {
  const title = 'x'.repeat(BIG_TITLE_BYTES);
  const statuses: Record<number, number> = {};
  for (let i = 0; i < BIG_POSTS; i += 10) {
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(fleet.url, title)));
    for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
  }
  for (const gzip of [false, true]) {
    const answer = await list(fleet.url, gzip);
    const record = fleet
      .records()
      .filter((seen) => seen.routeKey === 'GET /todos')
      .at(-1);
    rows.push({
      section: 'fleet',
      name: `${tree.name}: ${BIG_POSTS} POSTs of ${BIG_TITLE_BYTES / 1000} KB titles, then GET /todos ${gzip ? 'accepting gzip' : 'without gzip'}`,
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

/** A table of `count` records, written directly (BatchWriteItem), and its counter. */
async function filledTable(endpoint: string, count: number): Promise<string> {
  const table = `list-${count}-${Date.now()}`;
  const client = localClient(endpoint);
  await ensureTable(client, table);
  const documents = DynamoDBDocumentClient.from(client);
  const batches: Record<string, unknown>[][] = [];
  for (let id = 1; id <= count; id += 25) {
    batches.push(
      Array.from({ length: Math.min(25, count - id + 1) }, (_, i) => ({
        pk: 'TODO',
        id: id + i,
        title: LIST_TITLE,
        completed: (id + i) % 2 === 0,
      })),
    );
  }
  const write = async (): Promise<void> => {
    for (let batch = batches.pop(); batch !== undefined; batch = batches.pop()) {
      await documents.send(
        new BatchWriteCommand({ RequestItems: { [table]: batch.map((Item) => ({ PutRequest: { Item } })) } }),
      );
    }
  };
  await Promise.all(Array.from({ length: 8 }, write));
  client.destroy();
  return table;
}

export async function fleet(options: BenchOptions): Promise<Row[]> {
  const trees = treesFor(options.baseline);
  const dynamodb = await startDynamoDbLocal();
  const rows: Row[] = [];
  try {
    for (const tree of trees) {
      const packaged = await packagedAt(tree);
      const running = await startFleet({ packaged, dynamoDbEndpoint: dynamodb.endpoint, logLevel: 'silent' });
      try {
        await postScaling(tree, running, rows);
        await burst(tree, running, rows);
        await bigList(tree, running, rows);
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
          for (const gzip of [false, true]) {
            await list(running.url, gzip);
            const answers = [];
            for (let i = 0; i < 5; i++) answers.push(await list(running.url, gzip));
            rows.push({
              section: 'fleet',
              name: `${tree.name}: GET /todos at ${size} records, ${gzip ? 'accepting gzip' : 'without gzip'}`,
              value: round(median(answers.map((answer) => answer.ms)), 0),
              unit: 'ms',
              note:
                `status ${answers.map((answer) => answer.status).join('/')}; ${answers[0]?.bytes ?? 0} bytes ` +
                `(${answers[0]?.encoding ?? '?'}); listTodos peak RSS ${round(running.stats('listTodos').maxRssKb / 1024, 0)} MB`,
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
