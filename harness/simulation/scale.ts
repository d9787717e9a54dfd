import { SimulatedDynamoDb } from './dynamodb';
import { EventClock } from './event-clock';
import { SimulatedStage, type Answered, type Request, type StageOptions } from './lambda';
import { TimedDynamoDb } from './timed-dynamodb';
import { seeded } from './world';
import { ONE_TRANSACTION_A_POST } from '../one-transaction-pacing';

/**
 * A point of the scale model (`npm run bench -- scale`): an open-loop workload (clients that do
 * not wait for each other, arrivals drawn as a Poisson process, as harness/load.ts's openLoop) on
 * a simulated stage (lambda.ts) in simulated time, warmed up at its own rate and then measured,
 * and what each resource did in the measured window, from which the point names its bottleneck.
 */

/** The two designs of POST the bench compares: the queue, and one transaction a POST (ONE_TRANSACTION_A_POST). */
export type Design = 'queue' | 'one transaction a POST';

export interface Workload {
  readonly design: Design;
  /** Each function's concurrency. */
  readonly containers: number;
  /** A function's own cap where it is lower (the stage's `<function>Concurrency` parameters, serverless.yml). */
  readonly caps?: StageOptions['caps'];
  readonly postsPerSecond: number;
  readonly titleBytes: number;
  /** Reads on top of the POSTs: GET /todos and GET /todos/{id}, half each, at this rate. */
  readonly readsPerSecond?: number;
  /** The stage throttle's rate (its burst twice that). */
  readonly throttlePerSecond: number;
  readonly atCap?: 'wait' | 'throttle';
  readonly warmSeconds: number;
  readonly seconds: number;
  readonly seed: number;
  /**
   * The table to start from (a list already filled): copied, never changed. The copy keeps the
   * filling run's clock for its tokens' ten minutes, so the fill's tokens never expire: no request
   * of the point carries one of them.
   */
  readonly table?: SimulatedDynamoDb;
  /** The containers' CPU a DynamoDB request, if not lambda.ts's measured one: what the model's one estimated input moves. */
  readonly cpuMsPerRequest?: number;
  /** False: containers run between invocations (a diagnosis: what Lambda's freezing costs). */
  readonly freezes?: boolean;
  /** The fleet's own costs on this machine (scale-check.ts): ms added to each DynamoDB request, and to each request at the gateway. */
  readonly machine?: { readonly dynamodbMs: number; readonly gatewayMs: number };
}

export interface Point {
  readonly offered: number;
  /** 2xx a second: POSTs answered 201, reads 200 (404 for an id not there counts too). */
  readonly achieved: number;
  readonly postsCreated: number;
  readonly p50: number;
  readonly p99: number;
  /** Statuses of the requests sent in the window. */
  readonly statuses: Record<number, number>;
  readonly throttled: { readonly stage: number; readonly lambda: number; readonly dynamodb: Record<string, number> };
  readonly readUnits: number;
  readonly writeUnits: number;
  /** DynamoDB requests a 2xx answer. */
  readonly requests: number;
  /**
   * Units a second over the window, by partition: `COUNTER`, `TODO`, and the queue's items of
   * their own (`INTENT#…`, `DONE#…`: one partition key value each) together under their prefix;
   * `busiest` is the busiest single partition key value of the group, the one its limit applies to.
   */
  readonly unitsPerSecond: Record<string, PartitionUnits>;
  readonly conflicts: Record<string, number>;
  /** POSTs in flight in the createTodo function (waiting in the store's queue or being written), seen by arrivals. */
  readonly queueDepth: { readonly mean: number; readonly max: number };
  /** Share of the cap busy, a function. */
  readonly busy: Record<string, number>;
  readonly bottleneck: string;
  readonly simulatedMs: number;
}

export interface PartitionUnits {
  readonly read: number;
  readonly write: number;
  readonly busiest: { readonly read: number; readonly write: number };
}

/** A client waits this long for an answer, as harness/load.ts's (API Gateway's integration timeout). */
const CLIENT_TIMEOUT_MS = 30_000;
const START = Date.UTC(2026, 10, 26);
const PARTITION_READ_UNITS = 3_000;
const PARTITION_WRITE_UNITS = 1_000;
/** A rate no set-up reaches (a finite one: a bucket refills by elapsed time × rate, and 0 × ∞ is NaN). */
const UNLIMITED = 1e12;

/** A table with `records` records and the counter at the next id, written by the store itself (one transaction a POST, no limits). */
export async function filledTable(records: number, titleBytes: number): Promise<SimulatedDynamoDb> {
  const clock = new EventClock(START);
  const dynamodb = new SimulatedDynamoDb({ now: clock.now });
  const timed = new TimedDynamoDb(dynamodb, clock, () => 0, {
    readUnitsPerSecond: UNLIMITED,
    writeUnitsPerSecond: UNLIMITED,
  });
  const stage = new SimulatedStage({
    clock,
    dynamodb: timed,
    random: seeded(1),
    containers: 1,
    atCap: 'wait',
    throttle: { perSecond: UNLIMITED, burst: UNLIMITED },
    store: { pacing: ONE_TRANSACTION_A_POST },
    cpuMsPerRequest: 0,
  });
  let written = 0;
  let failed: number | undefined;
  void (async () => {
    // The table's seed records count among the list's.
    for (let i = 0; i < records - 2 && failed === undefined; i++) {
      const { status } = await stage.send({ route: 'POST /todos', title: title(titleBytes, i) });
      if (status === 201) written++;
      else failed = status;
    }
  })();
  await clock.runUntil(() => written >= records - 2 || failed !== undefined, 24 * 3_600_000);
  if (failed !== undefined) throw new Error(`filling the table: a POST answered ${failed}`);
  return dynamodb;
}

/** A title of `bytes` bytes, numbered so that no two are equal. */
function title(bytes: number, n: number): string {
  const tag = `to-do ${n} `;
  return tag + 'x'.repeat(Math.max(0, bytes - tag.length));
}

/** Runs one point: `workload` for its warm-up and window; the window's figures. */
export async function runPoint(workload: Workload): Promise<Point> {
  const clock = new EventClock(START);
  const dynamodb = workload.table?.clone() ?? new SimulatedDynamoDb({ now: clock.now });
  const timed = new TimedDynamoDb(dynamodb, clock, seeded(workload.seed * 31 + 7), {}, workload.machine?.dynamodbMs);
  const stage = new SimulatedStage({
    clock,
    dynamodb: timed,
    random: seeded(workload.seed),
    containers: workload.containers,
    ...(workload.caps && { caps: workload.caps }),
    atCap: workload.atCap ?? 'throttle',
    throttle: { perSecond: workload.throttlePerSecond, burst: 2 * workload.throttlePerSecond },
    store: workload.design === 'queue' ? {} : { pacing: ONE_TRANSACTION_A_POST },
    ...(workload.cpuMsPerRequest !== undefined && { cpuMsPerRequest: workload.cpuMsPerRequest }),
    ...(workload.freezes !== undefined && { freezes: workload.freezes }),
    ...(workload.machine && { gatewayMs: workload.machine.gatewayMs }),
  });
  const arrivals = seeded(workload.seed * 17 + 3);
  const reads = workload.readsPerSecond ?? 0;
  const rate = workload.postsPerSecond + reads;
  const windowStart = workload.warmSeconds * 1000;
  const windowEnd = windowStart + workload.seconds * 1000;
  const measured: Promise<Answered & { request: Request['route'] }>[] = [];
  const depth = { sum: 0, max: 0, seen: 0 };
  let before: Snapshot | undefined;
  let after: Snapshot | undefined;
  let sent = 0;
  let answered = 0;

  function send(request: Request, inWindow: boolean): void {
    sent++;
    const answer = Promise.race([
      stage.send(request),
      new Promise<Answered>((resolve) =>
        clock.after(CLIENT_TIMEOUT_MS, () => {
          resolve({ status: 0, ms: CLIENT_TIMEOUT_MS });
        }),
      ),
    ]).then((result) => {
      answered++;
      return { ...result, request: request.route };
    });
    if (inWindow) measured.push(answer);
  }

  let n = 0;
  function arrive(): void {
    const at = clock.elapsed();
    if (at >= windowEnd) return;
    const inWindow = at >= windowStart;
    if (inWindow) {
      const { busy, waiting } = stage.pool('createTodo').load;
      depth.sum += busy + waiting;
      depth.max = Math.max(depth.max, busy + waiting);
      depth.seen++;
    }
    const draw = arrivals() * rate;
    if (draw < workload.postsPerSecond) {
      send({ route: 'POST /todos', title: title(workload.titleBytes, n++) }, inWindow);
    } else if (draw < workload.postsPerSecond + reads / 2) {
      send({ route: 'GET /todos' }, inWindow);
    } else {
      // An id the list has, or had: the first records of a filled table, or a new one's seed.
      send({ route: 'GET /todos/{id}', id: 1 + Math.floor(arrivals() * 1_000) }, inWindow);
    }
    clock.after((-Math.log(1 - arrivals()) * 1000) / rate, arrive);
  }
  clock.after(0, arrive);
  clock.after(windowStart, () => {
    before = snapshot(stage, timed);
  });
  clock.after(windowEnd, () => {
    after = snapshot(stage, timed);
  });
  await clock.runUntil(() => after !== undefined && answered === sent, windowEnd + 2 * CLIENT_TIMEOUT_MS);
  if (before === undefined || after === undefined) throw new Error('the window was not measured');
  return pointOf(workload, await Promise.all(measured), before, after, depth, clock.elapsed());
}

interface Snapshot {
  /** Units consumed by partition key value. */
  readonly consumed: Map<string, { read: number; write: number }>;
  readonly requests: number;
  readonly throttled: Record<string, number>;
  readonly conflicts: Record<string, number>;
  readonly stage: number;
  readonly lambda: number;
  readonly busyMs: Record<string, number>;
}

function snapshot(stage: SimulatedStage, timed: TimedDynamoDb): Snapshot {
  const consumed = new Map<string, { read: number; write: number }>();
  for (const { pk, readUnits, writeUnits } of timed.dynamodb.consumed()) {
    const units = consumed.get(pk) ?? { read: 0, write: 0 };
    consumed.set(pk, { read: units.read + readUnits, write: units.write + writeUnits });
  }
  const pools = [...stage.pools.values()];
  return {
    consumed,
    requests: timed.stats.requests,
    throttled: grouped(timed.stats.throttled),
    conflicts: grouped(timed.stats.conflicts),
    stage: stage.throttled,
    lambda: pools.reduce((sum, pool) => sum + pool.throttled, 0),
    busyMs: Object.fromEntries(pools.map((pool) => [pool.name, pool.busyMsNow()])),
  };
}

/** A partition key value's group: `INTENT#<uuid>` is `INTENT#…` (and `INTENT#<uuid> write`, `INTENT#… write`). */
function groupOf(pk: string): string {
  return pk.replace(/#[^ ]*/, '#…');
}

function grouped(counts: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [pk, count] of Object.entries(counts)) out[groupOf(pk)] = (out[groupOf(pk)] ?? 0) + count;
  return out;
}

function minus(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const change = value - (before[key] ?? 0);
    if (change !== 0) out[key] = change;
  }
  return out;
}

function percentile(sorted: readonly number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? NaN;
}

function pointOf(
  workload: Workload,
  answers: readonly (Answered & { request: Request['route'] })[],
  before: Snapshot,
  after: Snapshot,
  depth: { sum: number; max: number; seen: number },
  simulatedMs: number,
): Point {
  const seconds = workload.seconds;
  const statuses: Record<number, number> = {};
  for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
  const succeeded = answers.filter(({ status }) => (status >= 200 && status < 300) || status === 404).length;
  const postsCreated = answers.filter(({ request, status }) => request === 'POST /todos' && status === 201).length;
  // The time of the requests answered 2xx (a 429 is answered at once, and would only pull the median down).
  const latencies = answers
    .filter(({ status }) => (status >= 200 && status < 300) || status === 404)
    .map(({ ms }) => ms)
    .sort((a, b) => a - b);
  const unitsPerSecond: Record<string, PartitionUnits> = {};
  let readUnits = 0;
  let writeUnits = 0;
  for (const [pk, units] of after.consumed) {
    const was = before.consumed.get(pk) ?? { read: 0, write: 0 };
    const read = (units.read - was.read) / seconds;
    const write = (units.write - was.write) / seconds;
    readUnits += read * seconds;
    writeUnits += write * seconds;
    if (read === 0 && write === 0) continue;
    const group = unitsPerSecond[groupOf(pk)] ?? { read: 0, write: 0, busiest: { read: 0, write: 0 } };
    unitsPerSecond[groupOf(pk)] = {
      read: group.read + read,
      write: group.write + write,
      busiest: { read: Math.max(group.busiest.read, read), write: Math.max(group.busiest.write, write) },
    };
  }
  const busy = Object.fromEntries(
    Object.entries(after.busyMs).map(([name, ms]) => [
      name,
      (ms - (before.busyMs[name] ?? 0)) / (seconds * 1000 * workload.containers),
    ]),
  );
  const offered = workload.postsPerSecond + (workload.readsPerSecond ?? 0);
  const point = {
    offered,
    achieved: succeeded / seconds,
    postsCreated,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    statuses,
    throttled: {
      stage: after.stage - before.stage,
      lambda: after.lambda - before.lambda,
      dynamodb: minus(after.throttled, before.throttled),
    },
    readUnits: readUnits / Math.max(1, succeeded),
    writeUnits: writeUnits / Math.max(1, succeeded),
    requests: (after.requests - before.requests) / Math.max(1, succeeded),
    unitsPerSecond,
    conflicts: minus(after.conflicts, before.conflicts),
    queueDepth: { mean: depth.sum / Math.max(1, depth.seen), max: depth.max },
    busy,
    simulatedMs,
  };
  return { ...point, bottleneck: bottleneck(workload, point) };
}

/** A queued POST that commits sends about 7 DynamoDB requests (its payload, its intent, a few looks, its share of a commit): three times that is a queue that does not commit. */
const QUEUE_STALLS_AT_REQUESTS = 20;

/** A point holds its rate: every request answered 2xx, the slowest 1 % within a second. */
export const HOLDS_P99_MS = 1_000;

/**
 * Which resource stopped the point, from what each did in the window: the first that refused
 * requests or ran full, in the order a request meets them (the stage, the function's containers,
 * a partition's capacity), else the protocol itself (conflicts on the counter, the queue's head).
 * A point that holds names the resource closest to full, with its share.
 */
function bottleneck(workload: Workload, point: Omit<Point, 'bottleneck'>): string {
  const sent = Object.values(point.statuses).reduce((sum, count) => sum + count, 0);
  const failed = sent - Math.round(point.achieved * workload.seconds);
  const holds = failed === 0 && point.p99 < HOLDS_P99_MS;
  const shares: [string, number][] = [];
  for (const [pk, { busiest }] of Object.entries(point.unitsPerSecond)) {
    shares.push([`${partitionName(pk)} (write units)`, busiest.write / PARTITION_WRITE_UNITS]);
    shares.push([`${partitionName(pk)} (read units)`, busiest.read / PARTITION_READ_UNITS]);
  }
  for (const [name, share] of Object.entries(point.busy))
    shares.push([`${name}'s ${workload.containers} containers`, share]);
  shares.sort(([, a], [, b]) => b - a);
  const [closest = 'nothing', share = 0] = shares[0] ?? [];
  if (holds) return `none: holds (closest to full: ${closest}, ${Math.round(share * 100)} %)`;
  if (point.throttled.stage > 0.01 * sent) return 'the stage throttle';
  const throttledBy = Object.entries(point.throttled.dynamodb).sort(([, a], [, b]) => b - a);
  const [short, throttles = 0] = throttledBy[0] ?? [];
  if (short !== undefined && throttles > 0.01 * sent) {
    const [pk = '', units = ''] = short.split(' ');
    return `${partitionName(pk)}'s ${units} capacity (${throttles} requests throttled)`;
  }
  const created = Math.max(1, point.postsCreated);
  const conflicts = Object.values(point.conflicts).reduce((sum, count) => sum + count, 0) / created;
  const held = point.throttled.lambda > 0.01 * sent || (point.busy.createTodo ?? 0) > 0.9;
  const why = held ? `, the ${workload.containers} containers held meanwhile` : '';
  if (conflicts >= 1) {
    return workload.design === 'queue'
      ? `the queue's head: its commits cancelled by conflicts (${conflicts.toFixed(1)} a POST)${why}`
      : `the counter's item: transactions cancelling each other (${conflicts.toFixed(1)} conflicts a POST)${why}`;
  }
  // Queued POSTs that hold their containers while the queue does not commit them: many looks and payload reads a POST.
  if (held && workload.design === 'queue' && point.requests > QUEUE_STALLS_AT_REQUESTS) {
    return `the queue's head: its commits do not get through (${point.requests.toFixed(1)} DynamoDB requests a POST), the ${workload.containers} containers held by POSTs waiting`;
  }
  if (held) return `the functions' concurrency (${workload.containers} containers)`;
  if (workload.design === 'queue') return "the queue's head";
  return `latency (closest to full: ${closest}, ${Math.round(share * 100)} %)`;
}

function partitionName(pk: string): string {
  if (pk === 'COUNTER') return "the counter's partition";
  if (pk === 'TODO') return "the records' partition";
  return `the ${pk} items`;
}
