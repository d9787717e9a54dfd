import { Bench } from 'tinybench';
import { randomUUID } from 'node:crypto';
import { badDay, type SeenRequest } from '../../harness/fault-proxy';
import { event, invoke } from '../../test/support/event';
import { startFleet, type Fleet } from '../../harness/fleet';
import { runWorkload, type WorkloadReport } from '../../harness/history';
import { createTodo } from '../../test/support/routes';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import { readLogLevel } from '../../lib/log';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';
import { dynamoDb } from '../../lib/dynamodb/client';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  ensureTable,
  localClient,
  startDynamoDbLocal,
} from '../../test/support/dynamodb-local-process';
import { median, round, type BenchOptions, type Row } from '../lib';
import { packagedAt, treesFor } from '../trees';

/**
 * Writes that happen once (issue: every write happens exactly once), measured on the fleet
 * (harness/fleet.ts) under a bad day's network between the containers and DynamoDB (answers
 * after the SDK's timeout, answers lost after the write, requests landing late): a mixed workload
 * runs twice per revision: without keys and without retries (what a late attempt undoes), and
 * with every write keyed and sent again up to 3 times after a failure (what a retry duplicates).
 * Then the two faults alone, twenty times each: a PUT landing late, and a POST whose
 * acknowledgements were all lost, sent again with its key.
 * `--baseline <ref>` runs the same against that revision's zips in the same run.
 *
 * And what a key costs: POST with and without an Idempotency-Key, per call on the memory store
 * (tinybench) and per request on DynamoDB Local (the median of sequential POSTs).
 */

const CLIENTS = 12;
const REQUESTS_PER_CLIENT = 40;
const DYNAMODB_POSTS = 300;

const TRIALS = 20;

/** Writes, as the fault proxy sees them: a plain item write or a transaction. */
function isWrite(request: SeenRequest): boolean {
  return ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems'].includes(request.operation);
}

async function send(url: string, method: string, path: string, body: unknown, key?: string) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': `"${key}"` }) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, text: await response.text() };
}

/**
 * The two faults of the issue, one at a time, TRIALS times each, on a fleet without other faults:
 * - a PUT whose first attempt the network holds past the SDK's timeout: the retry is answered,
 *   a later PUT is answered, then the first attempt lands. Counted: records left with the older title.
 * - a POST whose every acknowledgement is lost though it was stored (a 503), sent again by its
 *   client with its Idempotency-Key, as a client that retries does. Counted: titles stored twice.
 */
async function lateLandings(fleet: Fleet): Promise<{ olderKept: number; storedTwice: number }> {
  let olderKept = 0;
  let storedTwice = 0;
  for (let i = 0; i < TRIALS; i++) {
    const first = `late ${i} ${randomUUID()}`;
    let release: (value?: unknown) => void = () => undefined;
    function isFirst(request: SeenRequest) {
      return isWrite(request) && request.body.includes(first);
    }
    fleet.proxy.inject(isFirst, { holdRequest: new Promise((resolve) => (release = resolve)) });
    await send(fleet.url, 'PUT', '/todos/1', { title: first });
    await send(fleet.url, 'PUT', '/todos/1', { title: `later ${i}` });
    const landed = fleet.proxy.landed(isFirst);
    release();
    await landed;
    const now = JSON.parse((await fetch(`${fleet.url}/todos/1`).then((r) => r.text())) || '{}') as { title?: string };
    if (now.title !== `later ${i}`) olderKept++;

    const title = `retried ${i} ${randomUUID()}`;
    const key = randomUUID();
    fleet.proxy.inject((request) => isWrite(request) && request.body.includes(title), { dropAnswer: true }, 3);
    for (let attempt = 0; attempt < 4; attempt++) {
      const answer = await send(fleet.url, 'POST', '/todos', { title }, key);
      if (answer.status < 500) break;
    }
    fleet.proxy.heal();
    const list = JSON.parse(await fetch(`${fleet.url}/todos`).then((r) => r.text())) as { title: string }[];
    if (list.filter((todo) => todo.title === title).length > 1) storedTwice++;
  }
  return { olderKept, storedTwice };
}

function note(report: WorkloadReport): string {
  const problems = report.problems.length > 0 ? `: ${report.problems.slice(0, 3).join('; ')}` : '';
  return `${report.history.length} requests; answers ${JSON.stringify(report.statuses)}; ${report.problems.length} problems${problems}`;
}

export async function exactlyOnce(options: BenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const dynamodb = await startDynamoDbLocal();
  try {
    for (const tree of treesFor(options.baseline)) {
      const packaged = await packagedAt(tree);
      for (const keyed of [false, true]) {
        const fleet = await startFleet({ packaged, dynamoDbEndpoint: dynamodb.endpoint, logLevel: 'silent' });
        try {
          badDay(fleet.proxy);
          const report = await runWorkload(fleet.url, {
            clients: CLIENTS,
            requestsPerClient: REQUESTS_PER_CLIENT,
            keyed,
            retries: keyed ? 3 : 0,
            // Every write held back has landed before the final list is read.
            settled: () => fleet.proxy.idle(30_000),
          });
          fleet.proxy.heal();
          const how = `bad day, ${keyed ? 'keyed writes, each sent again up to 3 times' : 'no keys, no retries'}`;
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
      const fleet = await startFleet({ packaged, dynamoDbEndpoint: dynamodb.endpoint, logLevel: 'silent' });
      try {
        const { olderKept, storedTwice } = await lateLandings(fleet);
        rows.push(
          {
            section: 'exactlyOnce',
            name: `${tree.name}: PUT whose first attempt lands after its retry and a later PUT: records left with the older title, of ${TRIALS}`,
            value: olderKept,
            unit: 'records',
            budget: '0',
            met: olderKept === 0,
          },
          {
            section: 'exactlyOnce',
            name: `${tree.name}: POST stored but every acknowledgement lost, sent again with its Idempotency-Key: titles stored twice, of ${TRIALS}`,
            value: storedTwice,
            unit: 'titles',
            budget: '0',
            met: storedTwice === 0,
          },
        );
      } finally {
        await fleet.stop();
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
    const store = new DynamoDbTodoStore(
      dynamoDb({ endpoint: dynamodb.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }),
      table,
    );
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
