import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Bench } from 'tinybench';
import type { FaultProxy } from '../../harness/fault-proxy';
import { event, invoke } from '../../harness/event';
import { startFleet } from '../../harness/fleet';
import { runWorkload, type WorkloadReport } from '../../harness/history';
import { createTodo } from '../../harness/routes';
import { DynamoDbTodoStore } from '../../lib/dynamodb-store';
import { readLogLevel } from '../../lib/log';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';
import { ensureTable, localClient, startDynamoDbLocal } from '../../scripts/local-dynamodb';
import { median, round, type BenchOptions, type Row } from '../lib';
import { packagedAt, treesFor } from '../trees';

/**
 * Writes that happen once (issue: every write happens exactly once), measured on the fleet
 * (harness/fleet.ts) under a bad day's network between the containers and DynamoDB (answers
 * after the SDK's timeout, answers lost after the write, requests landing late), and under
 * outages long enough that requests fail and their writes land later still. A mixed workload
 * runs twice per revision and network: without keys and without retries (what a late attempt undoes), and
 * with every write keyed and sent again up to 3 times after a failure (what a retry duplicates).
 * `--baseline <ref>` runs the same against that revision's zips in the same run.
 *
 * And what a key costs: POST with and without an Idempotency-Key, per call on the memory store
 * (tinybench) and per request on DynamoDB Local (the median of sequential POSTs).
 */

const CLIENTS = 12;
const REQUESTS_PER_CLIENT = 40;
const DYNAMODB_POSTS = 300;

function badDay(network: FaultProxy): void {
  network.inject(() => Math.random() < 0.03, { delayAnswerMs: 2_200 }, Infinity);
  network.inject(() => Math.random() < 0.02, { dropAnswer: true }, Infinity);
  network.inject(
    () => Math.random() < 0.02,
    { holdRequest: new Promise((resolve) => setTimeout(resolve, 2_600)) },
    Infinity,
  );
}

/** An outage: DynamoDB's network stalls for STALL_MS every QUIET_MS + STALL_MS. */
const QUIET_MS = 1_500;
const STALL_MS = 4_000;
/** What a stall held lands this long after the stall ends: after the retries it caused, and later writes. */
const LAND_LATE_MS = 3_000;

/**
 * Outages, until `done` settles: every request of a stall is held, so a request that started in
 * its first seconds spends all the SDK's attempts there and is answered 503, and every attempt
 * lands once the network is back, LAND_LATE_MS after, behind the requests that came after it.
 */
async function outages(network: FaultProxy, done: Promise<unknown>): Promise<void> {
  const state = { over: false };
  const end = () => (state.over = true);
  done.then(end, end);
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  for (;;) {
    await pause(QUIET_MS);
    if (state.over) return;
    network.inject(() => true, { holdRequest: pause(STALL_MS + LAND_LATE_MS) }, Infinity);
    await pause(STALL_MS);
    network.heal();
  }
}

const DAYS = {
  'bad day': (network: FaultProxy, done: Promise<unknown>) => {
    badDay(network);
    return done;
  },
  [`outages of ${STALL_MS / 1000} s every ${(QUIET_MS + STALL_MS) / 1000} s`]: outages,
};

const note = (report: WorkloadReport) =>
  `${report.history.length} requests; answers ${JSON.stringify(report.statuses)}; ` +
  `${report.problems.length} problems${report.problems.length > 0 ? `: ${report.problems.slice(0, 3).join('; ')}` : ''}`;

export async function exactlyOnce(options: BenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const dynamodb = await startDynamoDbLocal();
  try {
    for (const tree of treesFor(options.baseline)) {
      const packaged = await packagedAt(tree);
      for (const [day, faults] of Object.entries(DAYS)) {
        for (const keyed of [false, true]) {
          const fleet = await startFleet({ packaged, dynamoDbEndpoint: dynamodb.endpoint, logLevel: 'silent' });
          try {
            const workload = runWorkload(fleet.url, {
              clients: CLIENTS,
              requestsPerClient: REQUESTS_PER_CLIENT,
              keyed,
              retries: keyed ? 3 : 0,
            });
            const [report] = await Promise.all([workload, faults(fleet.proxy, workload)]);
            fleet.proxy.heal();
            const how = `${day}, ${keyed ? 'keyed writes, each sent again up to 3 times' : 'no keys, no retries'}`;
            rows.push(
              {
                section: 'exactlyOnce',
                name: `${tree.name}: ${how}: records holding a value a later acknowledged write replaced`,
                value: report.wrongValues,
                unit: 'records',
                budget: '0',
                met: report.wrongValues === 0,
                note: note(report),
              },
              {
                section: 'exactlyOnce',
                name: `${tree.name}: ${how}: requests stored twice`,
                value: report.duplicates,
                unit: 'requests',
                budget: '0',
                met: report.duplicates === 0,
              },
            );
          } finally {
            await fleet.stop();
          }
        }
      }
    }

    // What a key costs. The memory store: a handler call, warm.
    process.env.LOG_LEVEL = 'silent';
    readLogLevel();
    const post = createTodo(memoryStore);
    let n = 0;
    const bench = new Bench({ time: 1_000, warmupTime: 200 });
    bench.add('POST, memory store, no key', async () => {
      await invoke(post, event({ method: 'POST', body: { title: 'a title of twenty c' } }));
    });
    bench.add('POST, memory store, with a key', async () => {
      await invoke(
        post,
        event({ method: 'POST', body: { title: 'a title of twenty c' }, headers: { 'idempotency-key': `"k-${n++}"` } }),
      );
    });
    resetMemoryStore();
    await bench.run();
    for (const task of bench.tasks) {
      const result = task.result;
      if (!('latency' in result)) throw new Error(`${task.name}: ${JSON.stringify(result)}`);
      rows.push({
        section: 'exactlyOnce',
        name: task.name,
        value: round(result.latency.mean * 1000, 2),
        unit: 'µs a call',
      });
    }
    resetMemoryStore();

    // The DynamoDB store: sequential POSTs against DynamoDB Local, one client, as a container sends them.
    const table = `key-cost-${Date.now()}`;
    await ensureTable(localClient(dynamodb.endpoint), table);
    const store = new DynamoDbTodoStore(DynamoDBDocumentClient.from(localClient(dynamodb.endpoint)), table);
    const handler = createTodo(store);
    await invoke(handler, event({ method: 'POST', body: { title: 'warm' } }));
    const timings: Record<string, number[]> = { 'no key': [], 'with a key': [] };
    for (let i = 0; i < DYNAMODB_POSTS; i++) {
      for (const kind of ['no key', 'with a key'] as const) {
        const started = performance.now();
        await invoke(
          handler,
          event({
            method: 'POST',
            body: { title: 'a title of twenty c' },
            ...(kind === 'with a key' ? { headers: { 'idempotency-key': `"d-${i}"` } } : {}),
          }),
        );
        timings[kind]?.push(performance.now() - started);
      }
    }
    for (const [kind, values] of Object.entries(timings)) {
      rows.push({
        section: 'exactlyOnce',
        name: `POST, DynamoDB store (DynamoDB Local), ${kind}`,
        value: round(median(values), 2),
        unit: 'ms (median)',
        note: `${DYNAMODB_POSTS} sequential POSTs, taking turns`,
      });
    }
  } finally {
    await dynamodb.close();
  }
  return rows;
}
