import { startFleet, type Fleet } from '../../harness/fleet';
import { openLoopPosts, type PostAnswer } from '../../harness/load';
import { eventually } from '../../harness/wait';
import { runPoint } from '../../harness/simulation/scale';
import { startDynamoDbLocal } from '../../test/support/dynamodb-local-process';
import { median, round, type Row } from '../lib';
import { machineCpuMs } from '../proc';
import { packagedAt, THIS_TREE } from '../trees';

/**
 * The scale model checked against the machine (docs/performance.md, "The scale model against the
 * fleet"): the same workload on the fleet (the shipped zips as Lambda containers on Node 22, over
 * DynamoDB Local with the AWS profile: harness/fleet.ts) and on the simulator in simulated time
 * (harness/simulation/scale.ts), at the points this machine runs without saturating its CPU:
 * 1, 2 and 4 createTodo containers, POSTs offered at 25 a second (open loop), 2 s of warm-up and
 * 10 s measured, the queue (the shipped default), REPEATS times each (the fleet's arrivals are
 * drawn at random, the simulator's from seeds 1 to REPEATS): the medians' ratio, simulated over
 * measured, of the achieved rate and of the p50. They agree when both are within 20 %.
 *
 * The ratios are the model's as on AWS, the one the scale table uses. The fleet is AWS's times
 * plus this machine's own: one container at 5 POSTs a second, where nothing waits, measures that
 * difference on the p50. Part of it holds the container (DynamoDB Local's work on each request,
 * after the AWS profile's pause: MACHINE.dynamodbMs, its CPU a request in the fleet's figures),
 * the rest does not (the gateway, the proxies, the load's client); the model with both added is
 * shown beside, to tell what the difference does to the p50 where a container is near full.
 */

const POINTS = [
  { containers: 1, rate: 5 },
  { containers: 1, rate: 25 },
  { containers: 2, rate: 25 },
  { containers: 4, rate: 25 },
];
const REPEATS = 3;
const WARM_SECONDS = 2;
const SECONDS = 10;
const AGREES = 0.2;
const DRAIN_WITHIN_MS = 120_000;
/**
 * DynamoDB Local's work on a request, in the fleet: bench/results.json's fleet row "this tree:
 * POSTs, closed loop, 1 createTodo container", DynamoDB Local's CPU a POST (4.11 ms) over the
 * requests a POST sent (1.02).
 */
const LOCAL_MS_A_REQUEST = 4;

interface Measured {
  readonly achieved: number;
  readonly p50: number;
  readonly p99: number;
  readonly statuses: Record<number, number>;
  readonly busy?: number;
}

function summary(answers: readonly PostAnswer[]): Measured {
  const statuses: Record<number, number> = {};
  for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
  const latencies = answers
    .filter(({ status }) => status === 201)
    .map(({ ms }) => ms)
    .sort((a, b) => a - b);
  function at(share: number): number {
    return latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * share))] ?? NaN;
  }
  return { achieved: (statuses[201] ?? 0) / SECONDS, p50: at(0.5), p99: at(0.99), statuses };
}

/** The median run of each figure. */
function medianOf(runs: readonly Measured[]): Measured {
  const statuses: Record<number, number> = {};
  for (const run of runs)
    for (const [status, n] of Object.entries(run.statuses))
      statuses[Number(status)] = (statuses[Number(status)] ?? 0) + n;
  return {
    achieved: median(runs.map(({ achieved }) => achieved)),
    p50: median(runs.map(({ p50 }) => p50)),
    p99: median(runs.map(({ p99 }) => p99)),
    statuses,
    ...(runs[0]?.busy !== undefined && { busy: median(runs.map(({ busy }) => busy ?? 0)) }),
  };
}

async function onFleet(fleet: Fleet, containers: number, rate: number): Promise<Measured> {
  const pool = fleet.pools.get('createTodo');
  if (pool === undefined) throw new Error('no createTodo');
  pool.cap = containers;
  await openLoopPosts(fleet.url, { perSecond: rate, seconds: WARM_SECONDS, tag: `warm ${containers}` });
  await eventually(() => pool.quiet, { within: DRAIN_WITHIN_MS, what: 'createTodo containers idle' });
  const before = machineCpuMs();
  const answers = await openLoopPosts(fleet.url, { perSecond: rate, seconds: SECONDS, tag: `check ${containers}` });
  const after = machineCpuMs();
  return { ...summary(answers), busy: (after.busy - before.busy) / Math.max(1, after.total - before.total) };
}

/** This machine's own ms in the fleet: in each DynamoDB request, and at the gateway. */
interface MachineMs {
  readonly dynamodbMs: number;
  readonly gatewayMs: number;
}

async function simulated(containers: number, rate: number, seed: number, machine?: MachineMs): Promise<Measured> {
  const point = await runPoint({
    design: 'queue',
    containers,
    postsPerSecond: rate,
    // As long as the fleet's titles (`check 4 123`).
    titleBytes: 11,
    throttlePerSecond: 50,
    // The fleet's pools make an invocation wait for a container past the cap (harness/container.ts).
    atCap: 'wait',
    warmSeconds: WARM_SECONDS,
    seconds: SECONDS,
    seed,
    ...(machine && { machine }),
  });
  return { achieved: point.postsCreated / SECONDS, p50: point.p50, p99: point.p99, statuses: point.statuses };
}

async function simulatedRuns(containers: number, rate: number, machine?: MachineMs): Promise<Measured> {
  const runs: Measured[] = [];
  for (let seed = 1; seed <= REPEATS; seed++) runs.push(await simulated(containers, rate, seed, machine));
  return medianOf(runs);
}

function describe({ achieved, p50, p99, statuses, busy }: Measured): string {
  return (
    `${round(achieved, 1)}/s, p50 ${round(p50, 0)} ms, p99 ${round(p99, 0)} ms, ${JSON.stringify(statuses)}` +
    (busy === undefined ? '' : `, machine ${round(busy * 100, 0)} % busy`)
  );
}

function within(ratio: number): boolean {
  return Math.abs(ratio - 1) <= AGREES;
}

export async function scaleCheck(): Promise<Row[]> {
  const dynamodb = await startDynamoDbLocal();
  const rows: Row[] = [];
  /** The machine's own ms a POST, from the point where nothing waits. */
  let machineMs: MachineMs | undefined;
  try {
    const packaged = await packagedAt(THIS_TREE);
    for (const { containers, rate } of POINTS) {
      const fleet = await startFleet({ packaged, dynamoDbEndpoint: dynamodb.endpoint, logLevel: 'silent' });
      const runs: Measured[] = [];
      try {
        for (let i = 0; i < REPEATS; i++) runs.push(await onFleet(fleet, containers, rate));
      } finally {
        await fleet.stop();
      }
      const machine = medianOf(runs);
      const aws = await simulatedRuns(containers, rate);
      if (machineMs === undefined) {
        const gap = Math.max(0, machine.p50 - aws.p50);
        machineMs = { dynamodbMs: Math.min(gap, LOCAL_MS_A_REQUEST), gatewayMs: Math.max(0, gap - LOCAL_MS_A_REQUEST) };
      }
      const corrected = await simulatedRuns(containers, rate, machineMs);
      const added = `${round(machineMs.dynamodbMs, 1)} ms a DynamoDB request and ${round(machineMs.gatewayMs, 1)} ms at the gateway`;
      console.log(
        `  ${containers} container(s) at ${rate}/s: fleet ${describe(machine)} (p50s ${runs.map(({ p50 }) => round(p50, 0)).join(', ')}); ` +
          `simulated as on AWS ${describe(aws)}; with the machine's ${added} ${describe(corrected)}`,
      );
      const name = `${containers} createTodo container${containers === 1 ? '' : 's'}, POSTs at ${rate}/s`;
      const ratios = {
        rate: aws.achieved / machine.achieved,
        p50: aws.p50 / machine.p50,
        correctedRate: corrected.achieved / machine.achieved,
        correctedP50: corrected.p50 / machine.p50,
      };
      rows.push(
        {
          section: 'scaleCheck',
          name: `${name}: achieved rate, simulated / fleet`,
          value: round(ratios.rate, 2),
          unit: 'ratio',
          budget: `within ${AGREES * 100} %`,
          met: within(ratios.rate),
          note:
            `medians of ${REPEATS}: fleet ${describe(machine)} (p50s ${runs.map(({ p50 }) => round(p50, 0)).join(', ')}); ` +
            `simulated as on AWS ${describe(aws)}`,
        },
        {
          section: 'scaleCheck',
          name: `${name}: p50, simulated / fleet`,
          value: round(ratios.p50, 2),
          unit: 'ratio',
          budget: `within ${AGREES * 100} %`,
          met: within(ratios.p50),
          note:
            `with the machine's own ${added}: ${describe(corrected)}, ` +
            `rate ${round(ratios.correctedRate, 2)} and p50 ${round(ratios.correctedP50, 2)} of the fleet's`,
        },
      );
    }
  } finally {
    await dynamodb.close();
  }
  return rows;
}
