import FakeTimers from '@sinonjs/fake-timers';
import { toTodo } from '../../lib/dynamodb/table';
import { dynamoDb } from '../../lib/dynamodb/client';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import { todoEtag } from '../../lib/conditional';
import { deadlineOf } from '../../lib/http';
import { idempotencyClaim } from '../../lib/idempotency';
import { httpsTransport, type Service, type Transport } from '../../lib/aws/https';
import { dynamoDbEndpoint } from '../../lib/aws/endpoint';
import type { Runtime } from '../../lib/runtime';
import type { Todo, WriteOptions } from '../../lib/todos';
import { serviceTime } from '../aws-dynamodb/latency';
import { parseRequest } from '../aws-dynamodb/requests';
import { context, event } from '../../test/support/event';
import { nextStoreClass, type StoreClass, type Version } from '../versions';
import { CLOCK_BOUND, drawClock, readingOf, type ClockBound, type ContainerClock } from './clocks';
import { SimulatedDynamoDb } from './dynamodb';
import { Invariants } from './invariants';
import { Network, type FaultedCopies, type Faults, type Step } from './network';
import { coveredByRetries } from './retries';
import { simulatedWire } from './socket';
import type { Pacing } from '../../lib/dynamodb/pacing';
import { adversarialPacing } from './adversarial-pacing';

/**
 * One run of the simulator: the store's own code, unchanged, as one or more containers
 * (DynamoDbTodoStore instances), on the simulated network and DynamoDB, under one fake clock
 * (@sinonjs/fake-timers' own, installed nowhere) and one seeded random source, which the store takes
 * as its Runtime (lib/runtime.ts): a run is a function of its scenario, its fault script and its seed,
 * and replays exactly. After the scenario, every copy still held lands, and the checks run.
 *
 * Each container reads a clock of its own (clocks.ts: the world's time off by a skew and a drift
 * drawn from the seed), and sends every copy through lib/aws/https.ts, its timeouts included, on
 * simulated sockets (socket.ts) to the network. A request's deadline and its key's claim are
 * lib/http.ts's and lib/idempotency.ts's, read on the clock of the container that serves it.
 */

export const TABLE = 'todos';
/** A new socket's TCP and TLS handshakes to DynamoDB in the region: two round trips of about a millisecond. */
const CONNECT_MS = 2;
/** A run that has not ended by then, in simulated time, hangs. */
const MAX_SIMULATED_MS = 120_000;
const START = Date.UTC(2026, 10, 26);

/** A container: one store, as Lambda runs one instance of a function. */
export type Container = DynamoDbTodoStore;

/** How a run's world is made, besides its scenario's requests. */
export interface WorldOptions {
  /**
   * The containers' clocks: each drawn from the seed within this bound (CLOCK_BOUND by default),
   * or these, in the order the containers are made (the last one for any made after).
   */
  readonly clocks?: ClockBound | readonly ContainerClock[];
  /**
   * How long a copy takes: 'fixed', network.ts's legs and service time (4 ms a copy); 'aws', also
   * a time drawn from the AWS profile (harness/aws-dynamodb/latency.ts, what a Lambda function
   * sees of DynamoDB, the network included), half on the way out and half on the way back.
   */
  readonly latency?: 'fixed' | 'aws';
  /**
   * Every request the scenario sends must be answered, not 503 (nor 409 for a key in flight), when
   * the client's retries cover its script's faults (retries.ts, `coveredByRetries`), as with no fault.
   */
  readonly answersWithinRetries?: boolean;
  /**
   * The queue's pacing in every container: the store's, by default, or 'adversarial', every decision about when drawn
   * at random from the seed (adversarial-pacing.ts): the protocol must be exact whatever its pacing decides.
   */
  readonly pacing?: 'adversarial';
}

/** What a scenario's client was answered. */
export type Answered<T> = { readonly ok: T } | { readonly failed: string };

export interface World {
  readonly dynamodb: SimulatedDynamoDb;
  /**
   * A new container, on the simulated network: of this version of the code, or of version N+1
   * (harness/versions.ts: the domain with one more field), on the same table and clock.
   */
  /**
   * A new container of `version` (the current code's by default), its store's Query pages `pageSize` items long and
   * its lists shared past `sharedAfterBytes` (DynamoDbStoreOptions) if given.
   */
  container(options?: {
    readonly version?: Version;
    readonly pageSize?: number;
    readonly sharedAfterBytes?: number;
  }): Container;
  /**
   * A request's options: its deadline, and the claim of its key if it has one, as the handler
   * makes them (lib/http.ts, lib/idempotency.ts) on the clock of the container `on` that serves it
   * (the world's time, without).
   */
  options(key?: string, extra?: Partial<WriteOptions>, on?: Container): WriteOptions;
  /** What the call answered, or the name of what it failed with. */
  answer<T>(call: Promise<T>): Promise<Answered<T>>;
  /** Lets simulated time pass: on purpose, so a run's limit on simulated time (MAX_SIMULATED_MS) runs past it. */
  wait(ms: number): Promise<void>;
  /** The simulated time the scenario let pass on purpose (`wait`). */
  waited(): number;
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
  /**
   * True when the script has no fault and the pacing is the store's: then every request must succeed (a 503 is a
   * violation too). An adversarial pacing is a fault of its own: it may give a POST up at any look.
   */
  readonly faultFree: boolean;
  /**
   * True with no fault, or when the scenario answers within the client's retries
   * (WorldOptions.answersWithinRetries) and they cover the script's faults: then no request may
   * answer 503, or 409 for a key in flight (clients.ts, `unavailable`), nor is one sent again.
   */
  readonly mustAnswer: boolean;
}

/**
 * A scenario: sets up, runs its requests, and returns a check of what it saw (a list of
 * violations); with the options of the world it runs in, if not the defaults.
 */
export type Scenario = ((world: World) => Promise<() => string[]>) & { readonly options?: WorldOptions };

/** `scenario` in a world made with `options` (over its own). */
export function withOptions(options: WorldOptions, scenario: Scenario): Scenario {
  return Object.assign((world: World) => scenario(world), { options: { ...scenario.options, ...options } });
}

/** `scenario`, whose every request must be answered when the client's retries cover its faults (WorldOptions). */
export function answeringWithinRetries(scenario: Scenario): Scenario {
  return withOptions({ answersWithinRetries: true }, scenario);
}

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

/** Time and chance as the run's store takes them: the clock's time (or a container's reading of it) and timers, and the seeded random source. */
function runtimeOf(clock: Clock, random: () => number, now = () => clock.now): Runtime {
  return {
    now,
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
  const random = seeded(seed);
  const runtime = runtimeOf(clock, random);
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
  const options = scenario.options ?? {};
  // Each from a source of its own, also from the seed: the store's draws stay where they were.
  const clocks = clocksOf(options.clocks ?? CLOCK_BOUND, seeded(seed * 104_729 + 2));
  const latency = options.latency === 'aws' ? awsLegs(seeded(seed * 15_485_863 + 3)) : undefined;
  function containerRuntime(): Runtime {
    return runtimeOf(clock, random, readingOf(clocks(), runtime.now));
  }
  const mustAnswer = options.answersWithinRetries === true && options.pacing === undefined && coveredByRetries(drawn);
  const pacingRandom = seeded(seed * 32_452_843 + 4);
  const pacing = options.pacing === 'adversarial' ? () => adversarialPacing(pacingRandom) : undefined;
  const world = worldOn({ dynamodb, network, runtime, containerRuntime, latency, stores, pacing }, drawn, mustAnswer);
  const ran = await runToEnd(clock, world, scenario, network);
  return { ...ran, violations: [...invariants.violations, ...ran.violations] };
}

/** Each next container's clock: drawn within `clocks`, or the next of those given (the last one again past them). */
function clocksOf(clocks: ClockBound | readonly ContainerClock[], random: () => number): () => ContainerClock {
  if ('skewMs' in clocks) return () => drawClock(clocks, random);
  let next = 0;
  return () => clocks[Math.min(next++, clocks.length - 1)] ?? { skewMs: 0, drift: 0 };
}

/**
 * Each way of a copy, with AWS's latencies: half a time drawn from the profile for its request,
 * in whole milliseconds (the fake clock's, which truncates a timer's fraction).
 */
function awsLegs(random: () => number): (operation: string, body: string) => number {
  return (operation, body) => Math.round(serviceTime(parseRequest(operation, body), random) / 2);
}

interface Parts {
  readonly dynamodb: SimulatedDynamoDb;
  readonly network: Network;
  /** The world's: its time and timers, the network's. */
  readonly runtime: Runtime;
  /** A new container's: its own clock, the world's timers and random source. */
  readonly containerRuntime: () => Runtime;
  /** Each way of a copy, on top of the network's: none with fixed latencies. */
  readonly latency: ((operation: string, body: string) => number) | undefined;
  /** The store's class of each version. */
  readonly stores: Readonly<Record<Version, StoreClass>>;
  /** Each new container's pacing, if not the store's (WorldOptions.pacing). */
  readonly pacing: (() => Pacing) | undefined;
}

/** The store's DynamoDB, as lib/dynamodb/client.ts reaches it: its endpoint in the region, its name, its API's version. */
const SERVICE: Omit<Service, 'credentials'> = {
  url: dynamoDbEndpoint('us-east-1', undefined, {}).url,
  region: 'us-east-1',
  name: 'dynamodb',
  target: 'DynamoDB_20120810',
  maxSockets: 50,
};
const CREDENTIALS = { accessKeyId: 'simulated', secretAccessKey: 'simulated' };

/** A container's transport: lib/aws/https.ts, on its clock, over simulated sockets to the network. */
function transportOf(runtime: Runtime, { network, latency, runtime: world }: Parts): Transport {
  const wire = simulatedWire({
    runtime,
    carry: network.transport,
    connectMs: CONNECT_MS,
    awsNow: world.now,
    ...(latency && { legMs: latency }),
  });
  return httpsTransport({ ...SERVICE, credentials: () => Promise.resolve(CREDENTIALS) }, wire);
}

/**
 * Runs `read` with Date.now() reading `now`: lib/http.ts and lib/idempotency.ts read the time so,
 * on Lambda's clock, which is the container's here. `read` is synchronous: nothing else runs
 * meanwhile, and the clock is Date's own again after it.
 */
function readingAt<T>(now: number, read: () => T): T {
  const real = Date.now;
  Date.now = () => now;
  try {
    return read();
  } finally {
    Date.now = real;
  }
}

function worldOn(parts: Parts, faults: Faults, withinRetries: boolean): World {
  const { dynamodb, network, runtime, containerRuntime, stores, pacing } = parts;
  const clockOf = new WeakMap<Container, () => number>();
  let waited = 0;
  const faultFree = pacing === undefined && ('rate' in faults ? faults.rate === 0 : faults.length === 0);
  return {
    dynamodb,
    container: ({ version = 'current', pageSize, sharedAfterBytes } = {}) => {
      const own = containerRuntime();
      const made = new stores[version](
        dynamoDb({ region: 'us-east-1', credentials: CREDENTIALS, transport: transportOf(own, parts), runtime: own }),
        TABLE,
        {
          runtime: own,
          ...(pageSize !== undefined && { pageSize }),
          ...(sharedAfterBytes !== undefined && { sharedAfterBytes }),
          ...(pacing && { pacing: pacing() }),
        },
      );
      clockOf.set(made, own.now);
      return made;
    },
    options: (key, extra = {}, on) =>
      readingAt(((on && clockOf.get(on)) ?? runtime.now)(), () => {
        const claim = key === undefined ? undefined : claimOf(key, extra);
        return { deadline: deadlineOf(context()), ...(claim && { claim }), ...extra };
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
    wait: (ms) => {
      waited += ms;
      return new Promise((resolve) => {
        runtime.after(ms, resolve);
      });
    },
    waited: () => waited,
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
    faultFree,
    mustAnswer: faultFree || withinRetries,
  };
}

/**
 * A key's claim, as lib/idempotency.ts makes it of a request: a scenario's write is told apart by
 * its key and whether it has a precondition (an If-Match), so one key sent again with the same
 * request has the same fingerprint.
 */
function claimOf(key: string, extra: Partial<WriteOptions>) {
  const headers = { 'idempotency-key': key, ...(extra.precondition && { 'if-match': '"simulated"' }) };
  return idempotencyClaim(event({ method: 'PUT', id: '1', headers }), undefined);
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
    if (clock.now - START > MAX_SIMULATED_MS + world.waited())
      return result(network, [`still running after ${MAX_SIMULATED_MS} ms beyond its waits`]);
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
