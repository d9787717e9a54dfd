/**
 * Interleaved concurrent creates, updates, reads and deletes against a live server, bounded in
 * count and time; then a check from GET /todos that nothing was lost. `npm run load`
 * (bench/load.ts) runs it large and prints the figures; the e2e suite runs it smaller, as a
 * correctness check.
 */
import autocannon from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';

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
  function count(status: number) {
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
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

export interface PostLoadOptions {
  /** Requests in flight at once: each connection sends its next POST when the last is answered. */
  connections: number;
  /** How long to keep sending, in seconds. */
  seconds: number;
}

export interface PostLoadReport {
  posts: number;
  perSecond: number;
  statuses: Record<string, number>;
  /** The ids of the 201s, in the order they were answered. */
  ids: number[];
  latencyMs: { p50: number; p99: number; max: number };
}

/** POST /todos from many connections at once for a while: the figures of POST throughput. */
export async function postLoad(url: string, { connections, seconds }: PostLoadOptions): Promise<PostLoadReport> {
  const statuses: Record<string, number> = {};
  const ids: number[] = [];
  let sequence = 0;
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/todos',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ title: `post ${sequence++}` }) }),
        onResponse: (status, body) => {
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === 201) ids.push((JSON.parse(body) as { id: number }).id);
        },
      },
    ],
  });
  return {
    posts: result.requests.total,
    perSecond: result.requests.total / seconds,
    statuses,
    ids,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
  };
}

/** Ids that a run of consecutive creates should have handed out but did not: the gaps. */
export function idGaps(ids: readonly number[]): number[] {
  const sorted = [...ids].sort((a, b) => a - b);
  const gaps: number[] = [];
  for (let i = 1; i < sorted.length; i++) {
    for (let id = (sorted[i - 1] ?? 0) + 1; id < (sorted[i] ?? 0); id++) gaps.push(id);
  }
  return gaps;
}

export interface OpenLoopOptions {
  /** The offered rate: POSTs a second, sent whether or not earlier ones were answered. */
  readonly perSecond: number;
  readonly seconds: number;
  /** Starts each POST's title, so that its record can be told from others. */
  readonly tag: string;
  /** Each title padded with dots to this many characters (MAX_TITLE_LENGTH, lib/todos.ts, say); as it is without. */
  readonly titleLength?: number;
  /** How long a client waits for one answer: longer than any request the service lets run. */
  readonly timeoutMs?: number;
}

export interface PostAnswer {
  /** 0 when no answer came in time. */
  readonly status: number;
  readonly ms: number;
}

/**
 * Requests at an offered rate, as anonymous clients send them: each at a random moment (a Poisson
 * process, exponential gaps), none waiting for another's answer. Unlike a closed loop, a slow
 * service does not slow the clients down, so what it cannot carry shows as latency and errors.
 * `send` sends the nth and resolves with its status (0: no answer).
 */
export async function openLoop(
  perSecond: number,
  seconds: number,
  send: (n: number) => Promise<number>,
): Promise<PostAnswer[]> {
  const answers: Promise<PostAnswer>[] = [];
  const started = performance.now();
  const end = started + seconds * 1000;
  for (let sendAt = started, n = 0; ; n++) {
    sendAt += (-Math.log(1 - Math.random()) * 1000) / perSecond;
    if (sendAt >= end) break;
    await sleep(Math.max(0, sendAt - performance.now()));
    const sent = performance.now();
    answers.push(send(n).then((status) => ({ status, ms: performance.now() - sent })));
  }
  return Promise.all(answers);
}

/** POST /todos at an offered rate (openLoop), each POST's title its tag and number. */
export function openLoopPosts(
  url: string,
  { perSecond, seconds, tag, titleLength = 0, timeoutMs = 30_000 }: OpenLoopOptions,
): Promise<PostAnswer[]> {
  return openLoop(perSecond, seconds, (n) => timedPost(url, `${tag} ${n}`.padEnd(titleLength, '.'), timeoutMs));
}

async function timedPost(url: string, title: string, timeoutMs: number): Promise<number> {
  try {
    const response = await fetch(`${url}/todos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}
