import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { killGroup, startOffline } from '../../harness/offline';
import { PROJECT_ROOT } from '../../harness/project';
import { scratchCopy } from '../../harness/scratch';
import { sleep } from '../../harness/wait';
import { createTodo, todoJson } from '../../lib/todos';
import { median, round, type Row } from '../lib';
import { cpuMs, serverlessPid } from '../proc';

interface Target {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  /** CPU time the server used per request, user and system, in µs. */
  cpuUs: number;
}

const SECONDS = 2;
const ROUNDS = 6;
const CONNECTIONS = 8;
const WARM_UP: Target = { name: 'warm-up', method: 'GET', path: '/todos/1' };
const POST_BODY = JSON.stringify({ title: 'twenty characters!!!' });

/**
 * A function that answers at once with a body like ours, on routes of the same shapes (a path
 * parameter costs the emulator something of its own): the emulator's own cost.
 */
const CONSTANT_HANDLER = `export const handler = async (event) => ({
  statusCode: event.requestContext.http.method === 'POST' ? 201 : 200,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: ${JSON.stringify(todoJson(createTodo({ title: 'Read the spec' }, 1)))},
});
`;

async function measure(url: string, { method, path, body }: Target, pid: number): Promise<Measured> {
  const cpuBefore = cpuMs(pid);
  const result = await autocannon({
    url: url + path,
    method,
    connections: CONNECTIONS,
    duration: SECONDS,
    ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
  });
  if (result.errors > 0 || result.non2xx > 0)
    throw new Error(`${method} ${path}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  const cpuUs = ((cpuMs(pid) - cpuBefore) * 1000) / result.requests.total;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuUs };
}

/** The run with the median throughput, with its latencies. */
function medianOf(runs: Measured[]): Measured {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor(sorted.length / 2)] ?? { rps: NaN, p50: NaN, p99: NaN, cpuUs: NaN };
}

function rowsFor(server: string, target: Target, measured: Measured): Row[] {
  const name = `${server}: ${target.name}`;
  return [
    {
      section: 'emulator',
      name,
      value: Math.round(measured.rps),
      unit: 'req/s',
      note: `p50 ${measured.p50} ms, p99 ${measured.p99} ms, ${round(measured.cpuUs, 0)} µs CPU per request`,
    },
  ];
}

/**
 * serverless-offline parses an application/json body on its main thread before any function
 * runs: how long one body of 10 MB of nested brackets holds a GET sent just after it.
 */
async function nestedBodyStall(url: string): Promise<Row> {
  const depth = 5_000_000;
  const posted = fetch(`${url}/todos`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '['.repeat(depth) + ']'.repeat(depth),
  });
  // Sent once the big body is on its way (it takes the emulator a few ms to read 10 MB).
  await sleep(50);
  const started = performance.now();
  const read = await fetch(`${url}/todos/1`);
  await read.text();
  const heldMs = performance.now() - started;
  const answer = await posted;
  return {
    section: 'emulator',
    name: 'GET /todos/1 sent while a 10 MB body of nested brackets is parsed',
    value: Math.round(heldMs),
    unit: 'ms',
    note: `the body's own answer: ${answer.status} ${(await answer.text()).slice(0, 60)}`,
  };
}

/** The five handlers on a bare node:http server, as a child process. */
async function startBare(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', join(PROJECT_ROOT, 'bench/bare-server.ts')], {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, LOG_LEVEL: 'silent', PORT: '0' },
  });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  const port = /listening (\d+)/.exec(line.toString())?.[1];
  if (port === undefined) throw new Error(`bare server said: ${line.toString()}`);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid ?? 0,
    stop: async () => {
      const exited = once(child, 'exit');
      killGroup(child.pid ?? 0, 'SIGKILL');
      await exited;
    },
  };
}

/**
 * Throughput and latency through serverless-offline of our handlers beside a constant handler
 * in the same emulator process (same run), and of our handlers on a bare node:http server.
 */
export async function emulator(): Promise<Row[]> {
  const scratch = scratchCopy();
  writeFileSync(join(scratch.dir, 'functions/constant.ts'), CONSTANT_HANDLER);
  // serverless.yml ends with its functions block.
  appendFileSync(
    join(scratch.dir, 'serverless.yml'),
    "  constant:\n    handler: functions/constant.handler\n    events:\n      - httpApi: 'GET /constant'\n      - httpApi: 'GET /constant/{id}'\n      - httpApi: 'POST /constant'\n",
  );
  const ours: Target[] = [
    { name: 'GET /todos/1', method: 'GET', path: '/todos/1' },
    { name: 'GET /todos', method: 'GET', path: '/todos' },
    { name: 'POST /todos', method: 'POST', path: '/todos', body: POST_BODY },
  ];
  /** For each of ours, the constant handler on a route of the same shape. */
  const constant: Record<string, Target> = {
    'GET /todos/1': { name: 'constant GET /constant/1', method: 'GET', path: '/constant/1' },
    'GET /todos': { name: 'constant GET /constant', method: 'GET', path: '/constant' },
    'POST /todos': { name: 'constant POST /constant', method: 'POST', path: '/constant', body: POST_BODY },
  };
  const rows: Row[] = [];
  const results = new Map<string, Measured>();

  // --noTimeout: serverless-offline otherwise keeps each invocation's timeout timer, and the
  // response it holds, for 10 s; its heap then grows through the run and slows later runs.
  const offline = await startOffline({ cwd: scratch.dir, args: ['--noTimeout'], env: { LOG_LEVEL: 'silent' } });
  try {
    const pid = serverlessPid(offline.pid);
    // Ours and the constant handler alternate, round after round, so drift hits both alike.
    for (const target of ours) {
      const reference = constant[target.name] ?? target;
      const mine: Measured[] = [];
      const theirs: Measured[] = [];
      // Both warmed up first; then A B, B A, A B, B A, so that neither always goes second.
      await measure(offline.url, target, pid);
      await measure(offline.url, reference, pid);
      for (let round = 0; round < ROUNDS; round++) {
        if (round % 2 === 0) {
          mine.push(await measure(offline.url, target, pid));
          theirs.push(await measure(offline.url, reference, pid));
        } else {
          theirs.push(await measure(offline.url, reference, pid));
          mine.push(await measure(offline.url, target, pid));
        }
      }
      const mineMedian = medianOf(mine);
      const theirsMedian = medianOf(theirs);
      results.set(`offline ${target.name}`, mineMedian);
      rows.push(
        ...rowsFor('serverless-offline', target, mineMedian),
        ...rowsFor('serverless-offline', reference, theirsMedian),
      );
      const ratio = mineMedian.rps / theirsMedian.rps;
      const cpuMine = median(mine.map((m) => m.cpuUs));
      const cpuTheirs = median(theirs.map((m) => m.cpuUs));
      rows.push({
        section: 'emulator',
        name: `${target.name}: ours / constant, same emulator`,
        value: round(ratio, 3),
        unit: 'ratio',
        ...(target.name === 'GET /todos' ? {} : { budget: '≥ 0.95', met: ratio >= 0.95 }),
        note: `req/s, median of ${ROUNDS} alternating ${SECONDS} s runs: ours ${mine.map((m) => Math.round(m.rps)).join('/')}, constant ${theirs.map((m) => Math.round(m.rps)).join('/')}`,
      });
      rows.push({
        section: 'emulator',
        name: `${target.name}: server CPU per request, ours − constant`,
        value: round(cpuMine - cpuTheirs, 1),
        unit: 'µs',
        note: `ours ${round(cpuMine, 1)} µs, constant ${round(cpuTheirs, 1)} µs: ours adds ${round(((cpuMine - cpuTheirs) / cpuTheirs) * 100, 1)} %`,
      });
    }
    rows.push(await nestedBodyStall(offline.url));
  } finally {
    await offline.stop();
    scratch.remove();
  }

  const bare = await startBare();
  try {
    await measure(bare.url, WARM_UP, bare.pid);
    for (const target of ours) {
      const measured = await measure(bare.url, target, bare.pid);
      rows.push(...rowsFor('bare node:http', target, measured));
      const viaOffline = results.get(`offline ${target.name}`);
      if (viaOffline) {
        rows.push({
          section: 'emulator',
          name: `${target.name}: bare / serverless-offline`,
          value: round(measured.rps / viaOffline.rps, 2),
          unit: 'ratio',
          note: 'how many times more requests our handlers serve without the emulator',
        });
      }
    }
  } finally {
    await bare.stop();
  }
  return rows;
}
