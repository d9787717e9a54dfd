import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../harness/project';
import { CPU_MS_PER_DYNAMODB_REQUEST } from '../../harness/simulation/lambda';
import { filledTable, runPoint, type Design, type Point, type Workload } from '../../harness/simulation/scale';
import { MAX_TITLE_LENGTH } from '../../lib/todos';
import { round, type Row } from '../lib';

/**
 * How far one list goes on AWS, in simulated time (docs/scale.md): the store's own code as Lambda
 * containers behind a stage throttle, on DynamoDB's latency, conflicts and per-partition capacity
 * (harness/simulation/lambda.ts, timed-dynamodb.ts), where this machine's two cores do not count.
 * For the queue and for one transaction a POST, in one run:
 *
 * - POSTs at 25 to 400 a second over 16, 64 and 256 containers, titles of 20 characters and at
 *   the cap (MAX_TITLE_LENGTH, lib/todos.ts), the stage throttle raised to the offered rate;
 * - 1,000 requests a second, 90 % reads (GET /todos and GET /todos/{id}, half each), on lists of
 *   10^3 and 10^4 records, over 256 containers a function;
 * - the queue and one transaction a POST at 100 POSTs a second over 64 containers with less CPU a
 *   request than the bench measured on this machine: what the model's one estimated input moves.
 *
 * Each point: 2 s of warm-up at its own rate, then 10 s measured; a point holds when every
 * request is answered 2xx and the slowest 1 % within a second. Lambda refuses an invocation past
 * the cap (429); a client waits 30 s.
 */

const DESIGNS: readonly Design[] = ['queue', 'one transaction a POST'];
const CONTAINERS = [16, 64, 256];
const RATES = [25, 50, 100, 200, 400];
/** Titles of ASCII characters, so that their bytes (Workload.titleBytes) are their characters. */
const TITLES = [
  { label: 'short titles', bytes: 20 },
  { label: `titles at the cap (${MAX_TITLE_LENGTH} characters)`, bytes: MAX_TITLE_LENGTH },
];
const MIXED = { perSecond: 1_000, readShare: 0.9, containers: 256, lists: [1_000, 10_000] };
const SENSITIVITY = { containers: 64, rate: 100, cpuMs: [0, 1] };
const WARM_SECONDS = 2;
const SECONDS = 10;
/**
 * `SCALE_POINTS=<regular expression>`: only the points whose names match it run (a full table is
 * about 10 minutes of one core); e.g. `SCALE_POINTS='^queue: POSTs at 200/s, 256 ' npm run bench -- scale`.
 */
const ONLY = process.env.SCALE_POINTS === undefined ? undefined : new RegExp(process.env.SCALE_POINTS);

function counted(statuses: Record<number, number>, status: number): number {
  return statuses[status] ?? 0;
}

function partitions(point: Point): string {
  return Object.entries(point.unitsPerSecond)
    .map(([pk, { read, write, busiest }]) => {
      const one = pk.endsWith('…') ? ` (busiest one ${round(busiest.read, 0)}/${round(busiest.write, 0)})` : '';
      return `${pk} ${round(read, 0)} read/${round(write, 0)} write${one}`;
    })
    .join(', ');
}

function row(name: string, unit: string, point: Point): Row {
  const { statuses, throttled } = point;
  const dynamodbThrottled = Object.values(throttled.dynamodb).reduce((sum, n) => sum + n, 0);
  return {
    section: 'scale',
    name,
    value: round(point.achieved, 1),
    unit,
    note:
      `offered ${point.offered}/s; p50 ${round(point.p50, 0)} ms, p99 ${round(point.p99, 0)} ms; ` +
      `201 ${counted(statuses, 201)}, 409 ${counted(statuses, 409)}, 503 ${counted(statuses, 503)}, ` +
      `429 ${counted(statuses, 429)} (stage ${throttled.stage}, Lambda ${throttled.lambda}), no answer ${counted(statuses, 0)}; ` +
      `DynamoDB throttled ${dynamodbThrottled} ${JSON.stringify(throttled.dynamodb)}; ` +
      `a 2xx: ${round(point.requests, 1)} requests, ${round(point.readUnits, 1)} read and ${round(point.writeUnits, 1)} write units; ` +
      `conflicts ${JSON.stringify(point.conflicts)}; queue depth ${round(point.queueDepth.mean, 1)} (max ${point.queueDepth.max}); ` +
      `units a second: ${partitions(point)}; ` +
      `bottleneck: ${point.bottleneck}`,
  };
}

function mixedName(design: Design, records: number): string {
  return `${design}: ${MIXED.perSecond} requests/s, ${MIXED.readShare * 100} % reads, list of ${records} records, ${MIXED.containers} containers`;
}

/** The functions' own caps as serverless.yml's defaults set them (`<function>Concurrency`): the stage a deploy makes. */
function stageCaps(): Record<'listTodos' | 'getTodo' | 'createTodo', number> {
  const config = parse(readFileSync(join(PROJECT_ROOT, 'serverless.yml'), 'utf8')) as {
    params: { default: Record<string, number> };
  };
  const { default: defaults } = config.params;
  return {
    listTodos: Number(defaults.listTodosConcurrency),
    getTodo: Number(defaults.getTodoConcurrency),
    createTodo: Number(defaults.createTodoConcurrency),
  };
}

function capsName(caps: Readonly<Record<string, number>>): string {
  return `the stage's caps (${Object.entries(caps)
    .map(([name, cap]) => `${name} ${cap}`)
    .join(', ')})`;
}

function wanted(name: string): boolean {
  return ONLY === undefined || ONLY.test(name);
}

async function measured(workload: Workload, name: string, unit: string, rows: Row[]): Promise<void> {
  if (!wanted(name)) return;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const point = await runPoint(workload);
  const { user, system } = process.cpuUsage(cpu);
  const cpuSeconds = round((user + system) / 1e6, 1);
  const found = row(name, unit, point);
  // What the point cost this machine to simulate: the model's own price, not AWS's.
  found.note = `${found.note ?? ''}; simulated in ${cpuSeconds} s of CPU`;
  rows.push(found);
  const busy = round(100 * (point.busy.createTodo ?? 0), 0);
  console.log(
    `  ${name}: ${found.value} ${unit} (${found.note.split('; ')[1] ?? ''}), createTodo ${busy} % busy, ${point.bottleneck} ` +
      `[${round((performance.now() - started) / 1000, 1)} s, ${cpuSeconds} s of CPU]`,
  );
}

export async function scale(): Promise<Row[]> {
  const started = performance.now();
  const rows: Row[] = [];
  for (const { label, bytes } of TITLES) {
    for (const containers of CONTAINERS) {
      for (const rate of RATES) {
        for (const design of DESIGNS) {
          await measured(
            {
              design,
              containers,
              postsPerSecond: rate,
              titleBytes: bytes,
              throttlePerSecond: Math.max(50, rate),
              warmSeconds: WARM_SECONDS,
              seconds: SECONDS,
              seed: rate + containers,
            },
            `${design}: POSTs at ${rate}/s, ${containers} containers, ${label}`,
            'POSTs/s',
            rows,
          );
        }
      }
    }
  }
  for (const records of MIXED.lists) {
    // Filling the list takes longer than a point: not for points filtered out.
    if (!DESIGNS.some((design) => wanted(mixedName(design, records)))) continue;
    const table = await filledTable(records, 20);
    for (const [design, caps] of DESIGNS.flatMap((design) => [
      [design, undefined] as const,
      [design, stageCaps()] as const,
    ])) {
      await measured(
        {
          design,
          containers: MIXED.containers,
          ...(caps && { caps }),
          postsPerSecond: MIXED.perSecond * (1 - MIXED.readShare),
          readsPerSecond: MIXED.perSecond * MIXED.readShare,
          titleBytes: 20,
          throttlePerSecond: MIXED.perSecond,
          warmSeconds: WARM_SECONDS,
          seconds: SECONDS,
          seed: records,
          table,
        },
        mixedName(design, records) + (caps ? `, ${capsName(caps)}` : ''),
        'requests/s',
        rows,
      );
    }
  }
  for (const cpuMs of SENSITIVITY.cpuMs) {
    for (const design of DESIGNS) {
      await measured(
        {
          design,
          containers: SENSITIVITY.containers,
          postsPerSecond: SENSITIVITY.rate,
          titleBytes: 20,
          throttlePerSecond: SENSITIVITY.rate,
          warmSeconds: WARM_SECONDS,
          seconds: SECONDS,
          seed: SENSITIVITY.rate + SENSITIVITY.containers,
          cpuMsPerRequest: cpuMs,
        },
        `${design}: POSTs at ${SENSITIVITY.rate}/s, ${SENSITIVITY.containers} containers, short titles, ` +
          `${cpuMs} ms of CPU a DynamoDB request (the table: ${CPU_MS_PER_DYNAMODB_REQUEST})`,
        'POSTs/s',
        rows,
      );
    }
  }
  rows.push({
    section: 'scale',
    name: 'wall-clock time of the whole table',
    value: round((performance.now() - started) / 1000, 0),
    unit: 's',
    note: `${rows.length} points${ONLY === undefined ? '' : ` matching ${String(ONLY)}`}, each ${WARM_SECONDS} s of warm-up and ${SECONDS} s measured in simulated time`,
  });
  return rows;
}
