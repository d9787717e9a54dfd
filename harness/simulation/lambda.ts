import { dynamoDb } from '../../lib/dynamodb/client';
import { Bucket } from '../aws-dynamodb/capacity';
import { DynamoDbTodoStore, type DynamoDbStoreOptions } from '../../lib/dynamodb/store';
import { Refusal } from '../../lib/errors';
import type { Transport } from '../../lib/aws/https';
import type { Runtime } from '../../lib/runtime';
import { drawClock, readingOf, type ClockBound } from './clocks';
import type { EventClock } from './event-clock';
import type { TimedDynamoDb } from './timed-dynamodb';
import { TABLE, uuidFrom } from './world';
import { listOf } from './clients';

/**
 * A deployed stage in simulated time: API Gateway's stage throttle in front, each function a
 * pool of Lambda containers, each container one DynamoDbTodoStore (the store's own code,
 * unchanged) on the timed DynamoDB (timed-dynamodb.ts). What AWS would spend, and nothing else,
 * moves the clock:
 *
 * - the stage throttle: a token bucket, `perSecond` refilled, `burst` deep (a stage's default, 50/s
 *   and a burst of 100, or the rate a user sets; the scale bench raises it with the offered rate);
 *   a request past it is answered 429 at once;
 * - a pool starts a container when every one it has is busy, up to its cap (the function's
 *   concurrency); past the cap a request waits for a free one (`atCap: 'wait'`, as the fleet
 *   harness does, harness/container.ts) or is refused at once (`'throttle'`, as Lambda does,
 *   counted apart);
 * - a container serves one invocation at a time and is frozen between invocations, as Lambda
 *   freezes it: its timers and its DynamoDB answers wait until its next invocation;
 * - a new container first spends its cold start (COLD_START_MS), then seeds the table as the
 *   store does on its first request, in simulated time like any request;
 * - each container's CPU: CPU_MS_PER_DYNAMODB_REQUEST before each request it sends, one at a time
 *   (a container has its own CPU), and, for a list, CPU_MS_PER_LISTED_RECORD a record;
 * - with `clocks`, each container reads a clock of its own (clocks.ts), its timers on the stage's.
 */

export type FunctionName = 'createTodo' | 'getTodo' | 'listTodos';

/**
 * Cold start, ms, by function: bench/results.json's coldInit, "this tree: <function>: over the
 * empty handler", the median of 40 processes (the bundle's load and first run; the
 * first DynamoDB answer, which dynamodbColdStart's figures also include, is simulated here).
 */
export const COLD_START_MS: Readonly<Record<FunctionName, number>> = {
  createTodo: 70.2,
  getTodo: 57.6,
  listTodos: 54.4,
};

/**
 * A container's CPU for each DynamoDB request it sends: bench/results.json's fleet row "this
 * tree: POSTs, closed loop, 1 createTodo container", the containers' CPU a POST (3.55 ms) over
 * the requests a POST sent (1.02): the handler, the store, building, signing and reading one
 * request, on this machine's cores, which are not Lambda's (a 1,769 MB function has one vCPU).
 */
export const CPU_MS_PER_DYNAMODB_REQUEST = 3.5;

/** Answering a list, a record: bench/results.json's warm "GET /todos @ 10,000", 1,627,601 ns for 10^4 records. */
export const CPU_MS_PER_LISTED_RECORD = 1.6276 / 10_000;

/** A request's budget in the handler: a 10 s function's, less the answer's margin (lib/http.ts). */
const DEADLINE_MS = 9_000;

export type Request =
  | { readonly route: 'POST /todos'; readonly title: string }
  | { readonly route: 'GET /todos' }
  | { readonly route: 'GET /todos/{id}'; readonly id: number };

export const FUNCTION_OF: Readonly<Record<Request['route'], FunctionName>> = {
  'POST /todos': 'createTodo',
  'GET /todos': 'listTodos',
  'GET /todos/{id}': 'getTodo',
};

/** A stage's throttle unless its user sets another. */
export const DEFAULT_THROTTLE = { perSecond: 50, burst: 100 } as const;

export interface StageOptions {
  readonly clock: EventClock;
  readonly dynamodb: TimedDynamoDb;
  /** The seeded source of the stores' own draws (backoff, tokens). */
  readonly random: () => number;
  /** Each function's cap on containers: its concurrency. */
  readonly containers: number;
  /** A function's own cap where it is below `containers` (serverless.yml's `<function>Concurrency` stage parameters). */
  readonly caps?: Partial<Record<FunctionName, number>>;
  readonly atCap?: 'wait' | 'throttle';
  readonly throttle?: { readonly perSecond: number; readonly burst: number };
  /** The store's options: which design of POST (its pacing: harness/one-transaction-pacing.ts). */
  readonly store?: Omit<DynamoDbStoreOptions, 'runtime'>;
  readonly coldStartMs?: Partial<Record<FunctionName, number>>;
  readonly cpuMsPerRequest?: number;
  /** Added to each request at the gateway: the fleet's gateway and load on this machine, to check the model against it; 0 on AWS. */
  readonly gatewayMs?: number;
  /** False: containers run between invocations (not Lambda: a diagnosis of what freezing costs). */
  readonly freezes?: boolean;
  /**
   * Each container's clock, drawn within `bound` from `random` (a source of its own, so that the
   * stores' draws do not shift). Without, every container reads the stage's time.
   */
  readonly clocks?: { readonly bound: ClockBound; readonly random: () => number };
}

/** What a client saw: the status (429 from the stage or Lambda, 0 for none) and how long it took. */
export interface Answered {
  readonly status: number;
  readonly ms: number;
}

/** API Gateway's stage throttle: a token bucket in simulated time, as a partition's capacity is one. */
export class StageThrottle {
  readonly #bucket: Bucket;

  constructor(perSecond: number, burst: number, now: () => number) {
    this.#bucket = new Bucket(perSecond, burst, now);
  }

  /** Takes a token if there is one: false is a 429. */
  take(): boolean {
    if (this.#bucket.available() < 1) return false;
    this.#bucket.take(1);
    return true;
  }
}

/** One Lambda container: a store, its CPU, and its frozen state between invocations. */
export class Container {
  readonly store: DynamoDbTodoStore;
  cold = true;
  /** Invocations served; a test reads that none overlapped through `busy`. */
  invocations = 0;
  busy = false;
  #frozen = true;
  #cpuFreeAt = 0;
  readonly #deferred: (() => void)[] = [];

  constructor(
    private readonly clock: EventClock,
    private readonly dynamodb: TimedDynamoDb,
    random: () => number,
    private readonly cpuMs: number,
    store: Omit<DynamoDbStoreOptions, 'runtime'>,
    /** What this container's clock reads: the stage's time unless given. */
    readonly now: () => number = clock.now,
  ) {
    const runtime: Runtime = {
      now,
      after: (ms, run) =>
        clock.after(ms, () => {
          this.#whenThawed(run);
        }),
      random,
      uuid: uuidFrom(random),
    };
    this.store = new DynamoDbTodoStore(
      dynamoDb({
        region: 'us-east-1',
        credentials: { accessKeyId: 'simulated', secretAccessKey: 'simulated' },
        transport: this.#transport(runtime),
        runtime,
      }),
      TABLE,
      { ...store, runtime },
    );
  }

  /** Off, a container runs its timers between invocations too: not Lambda, a diagnosis only. */
  freezes = true;

  thaw(): void {
    this.#frozen = false;
    for (const run of this.#deferred.splice(0)) run();
  }

  freeze(): void {
    this.#frozen = this.freezes;
  }

  /** Spends `ms` of this container's CPU, after what it is already computing. */
  compute(ms: number): Promise<void> {
    const done = Math.max(this.clock.now(), this.#cpuFreeAt) + ms;
    this.#cpuFreeAt = done;
    return new Promise((resolve) =>
      this.clock.after(done - this.clock.now(), () => {
        this.#whenThawed(resolve);
      }),
    );
  }

  #whenThawed(run: () => void): void {
    if (this.#frozen) this.#deferred.push(run);
    else run();
  }

  /** Each request costs the container's CPU before it goes; its answer reaches the container once thawed. */
  #transport(runtime: Runtime): Transport {
    return (operation, body, signal) =>
      new Promise((resolve, reject) => {
        if (signal.aborted) {
          reject(signal.reason as Error);
          return;
        }
        function onAbort() {
          reject(signal.reason as Error);
        }
        signal.addEventListener('abort', onAbort, { once: true });
        void this.compute(this.cpuMs).then(() => {
          if (signal.aborted) return;
          this.dynamodb.serve(operation, body, (answer) => {
            runtime.after(0, () => {
              signal.removeEventListener('abort', onAbort);
              if (!signal.aborted)
                resolve({ status: answer.status, body: JSON.parse(answer.body) as Record<string, unknown> });
            });
          });
        });
      });
  }
}

/** One function's containers: a free one for each invocation, a new one while under the cap. */
export class FunctionPool {
  readonly containers: Container[] = [];
  readonly #idle: Container[] = [];
  readonly #waiting: ((container: Container) => void)[] = [];
  #busy = 0;
  #busySince = 0;
  /** ms × containers busy, for the pool's utilization. */
  busyMs = 0;
  coldStarts = 0;
  throttled = 0;

  constructor(
    readonly name: FunctionName,
    readonly cap: number,
    private readonly atCap: 'wait' | 'throttle',
    private readonly clock: EventClock,
    private readonly start: () => Container,
  ) {}

  /** A container for one invocation, or undefined when Lambda refuses it (at the cap, `atCap: 'throttle'`). */
  async acquire(): Promise<Container | undefined> {
    let container = this.#idle.pop();
    if (container === undefined && this.containers.length < this.cap) {
      container = this.start();
      this.containers.push(container);
      this.coldStarts++;
    }
    if (container === undefined) {
      if (this.atCap === 'throttle') {
        this.throttled++;
        return undefined;
      }
      container = await new Promise<Container>((resolve) => this.#waiting.push(resolve));
    }
    this.#count(1);
    return container;
  }

  release(container: Container): void {
    this.#count(-1);
    const waiter = this.#waiting.shift();
    if (waiter !== undefined) waiter(container);
    else this.#idle.push(container);
  }

  /** The busy time so far, up to now. */
  busyMsNow(): number {
    this.#count(0);
    return this.busyMs;
  }

  /** Containers busy now, and the invocations waiting for one. */
  get load(): { busy: number; waiting: number } {
    return { busy: this.#busy, waiting: this.#waiting.length };
  }

  #count(change: number): void {
    const now = this.clock.now();
    this.busyMs += this.#busy * (now - this.#busySince);
    this.#busySince = now;
    this.#busy += change;
  }
}

/** The stage: the throttle, the pools, and what each route does with its container's store. */
export class SimulatedStage {
  readonly pools: ReadonlyMap<FunctionName, FunctionPool>;
  readonly #throttle: StageThrottle;
  /** Requests refused by the stage throttle. */
  throttled = 0;

  constructor(private readonly options: StageOptions) {
    const { clock, dynamodb, random, containers, atCap = 'throttle', store = {}, cpuMsPerRequest, clocks } = options;
    const cpuMs = cpuMsPerRequest ?? CPU_MS_PER_DYNAMODB_REQUEST;
    this.pools = new Map(
      (['createTodo', 'getTodo', 'listTodos'] as const).map((name) => [
        name,
        new FunctionPool(name, Math.min(containers, options.caps?.[name] ?? containers), atCap, clock, () => {
          const now = clocks && readingOf(drawClock(clocks.bound, clocks.random), clock.now);
          const container = new Container(clock, dynamodb, random, cpuMs, store, now);
          container.freezes = options.freezes ?? true;
          return container;
        }),
      ]),
    );
    const { perSecond, burst } = options.throttle ?? DEFAULT_THROTTLE;
    this.#throttle = new StageThrottle(perSecond, burst, clock.now);
  }

  pool(name: FunctionName): FunctionPool {
    const pool = this.pools.get(name);
    if (pool === undefined) throw new Error(`no function ${name}`);
    return pool;
  }

  /** Sends one request through the stage: its status and its time, in simulated ms. */
  async send(request: Request): Promise<Answered> {
    const { clock } = this.options;
    const sentAt = clock.now();
    function answered(status: number): Answered {
      return { status, ms: clock.now() - sentAt };
    }
    if (!this.#throttle.take()) {
      this.throttled++;
      return answered(429);
    }
    const { gatewayMs = 0 } = this.options;
    if (gatewayMs > 0) await new Promise<void>((resolve) => clock.after(gatewayMs, resolve));
    const name = FUNCTION_OF[request.route];
    const pool = this.pool(name);
    const container = await pool.acquire();
    if (container === undefined) return answered(429);
    if (container.busy) throw new Error(`a ${name} container was given a second invocation at once`);
    container.busy = true;
    container.invocations++;
    container.thaw();
    try {
      if (container.cold) {
        await new Promise<void>((resolve) =>
          clock.after(this.options.coldStartMs?.[name] ?? COLD_START_MS[name], resolve),
        );
        container.cold = false;
      }
      return answered(await this.#handle(container, request, clock.now() + DEADLINE_MS));
    } finally {
      container.busy = false;
      container.freeze();
      pool.release(container);
    }
  }

  /** What the handler answers: its status. */
  async #handle(container: Container, request: Request, deadline: number): Promise<number> {
    const { store } = container;
    try {
      switch (request.route) {
        case 'POST /todos':
          await store.create({ title: request.title }, { deadline });
          return 201;
        case 'GET /todos': {
          const todos = await listOf(store, deadline);
          await container.compute(todos.length * CPU_MS_PER_LISTED_RECORD);
          return 200;
        }
        case 'GET /todos/{id}':
          return (await store.get(request.id, deadline)) === undefined ? 404 : 200;
      }
    } catch (error) {
      if (error instanceof Refusal) return error.status;
      throw error;
    }
  }
}
