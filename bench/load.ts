/**
 * `npm run load`: interleaved concurrent creates, updates, reads and deletes against a live
 * `npm start` on a free loopback port, bounded in count and time; then it checks from GET /todos
 * that nothing was lost. `runLoad` is also what the e2e suite runs, smaller, as a correctness check.
 *
 *   npm run load                      # 20,000 requests, 32 connections, memory store
 *   npm run load -- --store dynamodb  # the same through start:dynamodb
 *   npm run load -- --amount 5000 --connections 8 --seconds 60 --heap-mb 256
 *   npm run load -- --amount 60000 --keep-timeout  # the emulator's own timeout timers kept (README, Limits)
 */
import autocannon from 'autocannon';
import { startOffline } from '../test/support/offline';
import { rssMb, serverlessPid } from './proc';

export interface LoadOptions {
  /** Total requests, the main bound. */
  amount: number;
  connections: number;
  /** A second bound, in seconds, whatever the amount. */
  maxSeconds: number;
}

export interface LoadReport {
  requests: number;
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  latencyMs: { p50: number; p99: number; max: number };
  requestsPerSecond: number;
  created: number;
  deleted: number;
  listed: number;
  /** Every way the final list disagrees with what the clients were told; empty when nothing was lost. */
  problems: string[];
}

interface Context {
  id?: number;
}

/** Runs the load and checks the outcome. Never asserts timing; the figures are for reading. */
export async function runLoad(url: string, { amount, connections, maxSeconds }: LoadOptions): Promise<LoadReport> {
  const created: number[] = [];
  const deleted = new Set<number>();
  const statuses: Record<string, number> = {};
  let sequence = 0;
  const count = (status: number) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
  };
  const json = { 'content-type': 'application/json' };

  const result = await autocannon({
    url,
    connections,
    amount,
    duration: maxSeconds,
    // Each connection walks this sequence again and again: create, update, read, then delete one
    // record in three or read the whole list. Many connections interleave them.
    requests: [
      {
        method: 'POST',
        path: '/todos',
        headers: json,
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ title: `load ${sequence++}` }) }),
        onResponse: (status, body, context: Context) => {
          count(status);
          if (status === 201) {
            const { id } = JSON.parse(body) as { id: number };
            created.push(id);
            context.id = id;
          }
        },
      },
      {
        method: 'PUT',
        headers: json,
        // Had the create failed, this turn reads the list instead.
        setupRequest: (request, context: Context) =>
          context.id === undefined
            ? { method: 'GET', path: '/todos', headers: {} }
            : { ...request, path: `/todos/${context.id}`, body: JSON.stringify({ completed: context.id % 2 === 0 }) },
        onResponse: (status) => {
          count(status);
        },
      },
      {
        method: 'GET',
        setupRequest: (request, context: Context) => ({ ...request, path: `/todos/${context.id ?? 1}` }),
        onResponse: (status) => {
          count(status);
        },
      },
      {
        setupRequest: (request, context: Context) =>
          context.id !== undefined && context.id % 3 === 0
            ? { ...request, method: 'DELETE', path: `/todos/${context.id}` }
            : { ...request, method: 'GET', path: '/todos' },
        onResponse: (status, _body, context: Context) => {
          count(status);
          if (status === 200 && context.id !== undefined && context.id % 3 === 0) deleted.add(context.id);
        },
      },
    ],
  });

  const response = await fetch(`${url}/todos`);
  const listed = ((await response.json()) as { id: number }[]).map((todo) => todo.id);
  return {
    requests: result.requests.total,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    requestsPerSecond: result.requests.average,
    created: created.length,
    deleted: deleted.size,
    listed: listed.length,
    problems: findProblems(created, deleted, listed, statuses),
  };
}

export function findProblems(
  created: number[],
  deleted: Set<number>,
  listed: number[],
  statuses: Record<string, number>,
): string[] {
  const problems: string[] = [];
  const listedSet = new Set(listed);
  const lost = created.filter((id) => !deleted.has(id) && !listedSet.has(id));
  if (lost.length > 0)
    problems.push(`${lost.length} acknowledged creates missing from GET /todos: ${lost.slice(0, 10).join(', ')}`);
  const revived = [...deleted].filter((id) => listedSet.has(id));
  if (revived.length > 0)
    problems.push(`${revived.length} acknowledged deletes still listed: ${revived.slice(0, 10).join(', ')}`);
  if (new Set(created).size !== created.length) problems.push('an id was handed out twice');
  if (created.some((id) => id < 3)) problems.push('a created record reused a seed id');
  if (listed.some((id, i) => i > 0 && id <= (listed[i - 1] ?? 0)))
    problems.push('ids in GET /todos are not distinct and increasing');
  const serverErrors = Object.entries(statuses).filter(([status]) => Number(status) >= 500);
  if (serverErrors.length > 0) problems.push(`5xx answers: ${JSON.stringify(Object.fromEntries(serverErrors))}`);
  return problems;
}

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

async function main(): Promise<void> {
  const store = option('store', 'memory');
  const options: LoadOptions = {
    amount: Number(option('amount', '20000')),
    connections: Number(option('connections', '32')),
    maxSeconds: Number(option('seconds', '120')),
  };
  // A heap cap makes "memory stays bounded" testable: V8 otherwise grows its heap lazily toward
  // gigabytes on a large machine before it collects, and RSS would say nothing about leaks.
  const heapMb = Number(option('heap-mb', '256'));
  const server = await startOffline({
    script: store === 'dynamodb' ? 'start:dynamodb' : 'start',
    // serverless-offline keeps every invocation's timeout timer running after the invocation
    // ends (LambdaFunction#timeoutAndTerminate), which holds its response for the function
    // timeout (10 s): at thousands of requests a second that is hundreds of MB of the emulator's,
    // not ours. --noTimeout drops that timer, so the figures are the service's. README, Limits.
    // --keep-timeout runs the emulator as `npm start` does, to see that for yourself.
    args: process.argv.includes('--keep-timeout') ? [] : ['--noTimeout'],
    env: { LOG_LEVEL: 'silent', NODE_OPTIONS: `--max-old-space-size=${heapMb}` },
  });
  try {
    // One request so every function is loaded before the first reading.
    await fetch(`${server.url}/todos`);
    const pid = serverlessPid(server.pid);
    const rssBefore = rssMb(pid);
    const report = await runLoad(server.url, options).catch((error: unknown) => {
      console.error(server.output().split('\n').slice(-30).join('\n'));
      throw error;
    });
    const rssAfter = rssMb(pid);
    console.log(
      `load: ${store} store, ${options.connections} connections, ${options.amount} requests at most, ` +
        `${options.maxSeconds} s at most, server heap capped at ${heapMb} MB`,
    );
    console.table({
      requests: report.requests,
      'errors (connection)': report.errors,
      timeouts: report.timeouts,
      'p50 latency (ms)': report.latencyMs.p50,
      'p99 latency (ms)': report.latencyMs.p99,
      'max latency (ms)': report.latencyMs.max,
      'throughput (req/s)': Math.round(report.requestsPerSecond),
      'acknowledged creates': report.created,
      'acknowledged deletes': report.deleted,
      'records listed after': report.listed,
      'server RSS before (MB)': rssBefore,
      'server RSS after (MB)': rssAfter,
    });
    console.log('statuses:', JSON.stringify(report.statuses));
    if (report.problems.length > 0) {
      console.error(`FAILED:\n- ${report.problems.join('\n- ')}`);
      process.exitCode = 1;
    } else {
      console.log('verified: 0 lost records, 0 revived deletes, ids distinct and increasing, 0 5xx');
    }
  } finally {
    await server.stop();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
