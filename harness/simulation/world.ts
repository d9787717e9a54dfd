import FakeTimers from '@sinonjs/fake-timers';
import { toTodo } from '../../lib/dynamodb/table';
import { dynamoDb } from '../../lib/dynamodb/client';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import { todoEtag } from '../../lib/conditional';
import { KEY_LIFETIME_MS } from '../../lib/idempotency';
import type { Runtime } from '../../lib/runtime';
import type { IdempotencyClaim, Todo, WriteOptions } from '../../lib/todos';
import { nextStoreClass, type StoreClass, type Version } from '../versions';
import { SimulatedDynamoDb } from './dynamodb';
import { Invariants } from './invariants';
import { Network, type FaultedCopies, type Faults, type Step } from './network';

/**
 * One run of the simulator: the store's own code, unchanged, as one or more containers
 * (DynamoDbTodoStore instances), on the simulated network and DynamoDB, under one fake clock
 * (@sinonjs/fake-timers' own, installed nowhere) and one seeded random source, which the store takes
 * as its Runtime (lib/runtime.ts): a run is a function of its scenario, its fault script and its seed,
 * and replays exactly. After the scenario, every copy still held lands, and the checks run.
 */

export const TABLE = 'todos';
/** A request's budget, as a 10 s function's (lib/http.ts). */
const DEADLINE_MS = 9_000;
/** A run that has not ended by then, in simulated time, hangs. */
const MAX_SIMULATED_MS = 120_000;
const START = Date.UTC(2026, 10, 26);

/** A container: one store, as Lambda runs one instance of a function. */
export type Container = DynamoDbTodoStore;

/** What a scenario's client was answered. */
export type Answered<T> = { readonly ok: T } | { readonly failed: string };

export interface World {
  readonly dynamodb: SimulatedDynamoDb;
  /**
   * A new container, on the simulated network: of this version of the code, or of version N+1
   * (harness/versions.ts: the domain with one more field), on the same table and clock.
   */
  container(options?: { readonly version?: Version }): Container;
  /** A request's options: its deadline, and the claim of its key if it has one. */
  options(key?: string, extra?: Partial<WriteOptions>): WriteOptions;
  /** What the call answered, or the name of what it failed with. */
  answer<T>(call: Promise<T>): Promise<Answered<T>>;
  /** Lets simulated time pass. */
  wait(ms: number): Promise<void>;
  /** The simulated time, epoch ms. */
  now(): number;
  /** The records now, by id. */
  records(): Todo[];
  /** The items of the counter's partition: the counter, then the intents. */
  queueItems(): Record<string, unknown>[];
  /** Turns the fault script on: setting up is done. */
  startFaults(): void;
  /** Turns faults off for the copies sent from now on (held ones still land where their script put them). */
  stopFaults(): void;
  /** True when the script has no fault: then every request must succeed (a 503 is a violation too). */
  readonly faultFree: boolean;
}

/** A scenario: sets up, runs its requests, and returns a check of what it saw (a list of violations). */
export type Scenario = (world: World) => Promise<() => string[]>;

export interface RunResult {
  readonly violations: string[];
  readonly trace: string[];
  /** Copies of writes sent while faults were on: a script longer than this met nothing past it. */
  readonly writesSent: number;
  /** The operation of each of those copies, in order (explore.ts prunes by what a fault met). */
  readonly copies: readonly string[];
  /** The copies that met a fault, by request kind and by role. */
  readonly faulted: FaultedCopies;
}

/** A small seeded generator (mulberry32): the run's only source of randomness. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** UUIDs drawn from `random`: a run's tokens and names replay with its seed. */
export function uuidFrom(random: () => number): () => `${string}-${string}-${string}-${string}-${string}` {
  return () => {
    const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
  };
}

/** The simulator's clock: fake-timers' own, installed nowhere: the store reads it through its Runtime. */
type Clock = ReturnType<typeof FakeTimers.createClock>;

/** Time and chance as the run's store takes them: the clock's time and timers, and the seeded random source. */
function runtimeOf(clock: Clock, random: () => number): Runtime {
  return {
    now: () => clock.now,
    after: (ms, run) => {
      const timer = clock.setTimeout(run, ms);
      return () => {
        clock.clearTimeout(timer);
      };
    },
    random,
    uuid: uuidFrom(random),
  };
}

/**
 * Runs `scenario` from `seed`, its copies of writes meeting `faults`: a script, or faults drawn at a
 * rate (from a source of their own, also from the seed, so that they do not shift the store's draws).
 */
export async function run(
  scenario: Scenario,
  faults: readonly Step[] | { readonly rate: number },
  seed: number,
): Promise<RunResult> {
  const clock = FakeTimers.createClock(START);
  const runtime = runtimeOf(clock, seeded(seed));
  const dynamodb = new SimulatedDynamoDb({ now: runtime.now });
  const invariants = new Invariants();
  const network = new Network(
    dynamodb,
    runtime,
    () => runtime.now() - START,
    (step) => {
      invariants.check(dynamodb.items(TABLE), step);
    },
  );
  const drawn: Faults = 'rate' in faults ? { rate: faults.rate, random: seeded(seed * 7919 + 1) } : faults;
  // Built once per process, before the clock starts: a container of either version is made at once.
  const stores = { current: DynamoDbTodoStore, next: await nextStoreClass() };
  const world = worldOn({ dynamodb, network, runtime, stores }, drawn);
  const ran = await runToEnd(clock, world, scenario, network);
  return { ...ran, violations: [...invariants.violations, ...ran.violations] };
}

interface Parts {
  readonly dynamodb: SimulatedDynamoDb;
  readonly network: Network;
  readonly runtime: Runtime;
  /** The store's class of each version. */
  readonly stores: Readonly<Record<Version, StoreClass>>;
}

function worldOn({ dynamodb, network, runtime, stores }: Parts, faults: Faults): World {
  return {
    dynamodb,
    container: ({ version = 'current' } = {}) =>
      new stores[version](
        dynamoDb({
          region: 'us-east-1',
          credentials: { accessKeyId: 'simulated', secretAccessKey: 'simulated' },
          transport: network.transport,
          runtime,
        }),
        TABLE,
        { runtime },
      ),
    options: (key, extra = {}) => ({
      deadline: runtime.now() + DEADLINE_MS,
      ...(key !== undefined && { claim: claimOf(key, extra, runtime.now()) }),
      ...extra,
    }),
    answer: async (call) => {
      try {
        return { ok: await call };
      } catch (error) {
        // A refusal's class names it (PreconditionFailed), where its `name` is Error's.
        const name = error instanceof Error ? (error.name === 'Error' ? error.constructor.name : error.name) : '';
        return { failed: name || String(error) };
      }
    },
    wait: (ms) =>
      new Promise((resolve) => {
        runtime.after(ms, resolve);
      }),
    now: runtime.now,
    records: () =>
      dynamodb
        .items(TABLE)
        .filter((item) => item.pk === 'TODO')
        .map((item) => toTodo(item)),
    queueItems: () => dynamodb.items(TABLE).filter((item) => item.pk === 'COUNTER'),
    startFaults: () => {
      network.startFaults(faults);
    },
    stopFaults: () => {
      network.startFaults([]);
    },
    faultFree: 'rate' in faults ? faults.rate === 0 : faults.length === 0,
  };
}

/** A key's claim, as lib/idempotency.ts makes one: the same key and request, the same fingerprint. */
function claimOf(key: string, extra: Partial<WriteOptions>, now: number): IdempotencyClaim {
  return {
    key,
    fingerprint: `${key} ${extra.precondition ? 'if-match' : ''}`,
    expiresAt: now + KEY_LIFETIME_MS,
  };
}

/** Runs the scenario on the fake clock until it ends, lands what is held, and checks. */
async function runToEnd(clock: Clock, world: World, scenario: Scenario, network: Network): Promise<RunResult> {
  const ended: { check?: () => string[]; crashed?: unknown } = {};
  scenario(world).then(
    (check) => {
      ended.check = check;
    },
    (error: unknown) => {
      ended.crashed = error ?? 'nothing';
    },
  );
  function running(): boolean {
    return ended.check === undefined && !('crashed' in ended);
  }
  while (running()) {
    if (clock.now - START > MAX_SIMULATED_MS) return result(network, [`still running after ${MAX_SIMULATED_MS} ms`]);
    if (clock.countTimers() === 0) {
      await clock.tickAsync(0);
      if (running()) return result(network, ['hangs: nothing left to happen']);
    } else {
      await clock.nextAsync();
    }
  }
  if (ended.check === undefined) return result(network, [`the scenario threw: ${describe(ended.crashed)}`]);
  network.landAll();
  await clock.runAllAsync();
  return result(network, ended.check());
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : JSON.stringify(error);
}

function result(network: Network, violations: string[]): RunResult {
  return {
    violations,
    trace: network.trace,
    writesSent: network.writesSent,
    copies: network.copies,
    faulted: network.faulted,
  };
}

export { todoEtag };
