import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

/**
 * A Lambda container, and a function's pool of them, as Lambda runs a function: each container
 * is a process of its own that loads the function's code once (the cold start) and then handles
 * one invocation at a time; between invocations it is frozen (SIGSTOP), so nothing of it runs
 * while it waits, as on AWS. A function's pool starts a new container when every one it has is
 * busy, up to a cap; past the cap a request waits for the next free container.
 */

/** What Lambda knows of a function: from the packaged template (harness/fleet.ts). */
export interface FunctionConfig {
  /** The short name, e.g. `createTodo`. */
  readonly name: string;
  /** The deployed name, e.g. `todo-api-dev-createTodo`. */
  readonly functionName: string;
  /** `functions/createTodo.handler`. */
  readonly handler: string;
  /** Where the function's zip was unpacked: LAMBDA_TASK_ROOT. */
  readonly root: string;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  readonly environment: Readonly<Record<string, string>>;
}

/** How an invocation ended, as Lambda reports it to its caller. */
export type Invocation =
  | { readonly ok: true; readonly result: unknown; readonly durationMs: number }
  | { readonly ok: false; readonly errorType: string; readonly errorMessage: string; readonly durationMs: number };

interface Pending {
  resolve(invocation: Invocation): void;
  timer: NodeJS.Timeout;
  started: number;
}

type Message =
  | { type: 'ready'; initMs: number }
  | { type: 'init-error'; error: { errorType: string; errorMessage: string } }
  | { type: 'result'; id: string; result: unknown; durationMs: number; maxRssKb: number }
  | { type: 'error'; id?: string; error: { errorType: string; errorMessage: string }; maxRssKb?: number };

const RUNTIME = join(__dirname, 'lambda-runtime.cjs');

export class Container {
  readonly id = randomUUID().slice(0, 8);
  /** Its init (loading the code) in ms, once done. */
  initMs: number | undefined;
  /** The largest RSS the process has had, in KB, as of its last invocation. */
  maxRssKb = 0;
  invocations = 0;
  readonly #child: ChildProcess;
  readonly #ready: Promise<void>;
  #pending: { id: string; call: Pending } | undefined;
  #dead: string | undefined;
  #frozen = false;

  constructor(
    readonly config: FunctionConfig,
    node: string,
    environment: Readonly<Record<string, string>>,
    onOutput: (line: string) => void,
    readonly freeze: boolean,
  ) {
    this.#child = spawn(node, [`--max-old-space-size=${Math.floor(config.memoryMb * 0.9)}`, RUNTIME], {
      cwd: config.root,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: {
        PATH: process.env.PATH,
        ...environment,
        ...config.environment,
        LAMBDA_TASK_ROOT: config.root,
        _HANDLER: config.handler,
        AWS_LAMBDA_FUNCTION_NAME: config.functionName,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(config.memoryMb),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${config.functionName}`,
        AWS_LAMBDA_LOG_STREAM_NAME: `container-${this.id}`,
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      },
    });
    for (const stream of [this.#child.stdout, this.#child.stderr]) {
      let partial = '';
      stream?.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) onOutput(line);
      });
    }
    this.#ready = new Promise((resolve, reject) => {
      this.#child.on('message', (message: Message) => {
        if (message.type === 'ready') {
          this.initMs = message.initMs;
          resolve();
        } else if (message.type === 'init-error') {
          this.#fail(`${message.error.errorType}: ${message.error.errorMessage}`);
          reject(new Error(this.#dead));
        } else {
          this.#answer(message);
        }
      });
      this.#child.on('exit', (code, signal) => {
        this.#fail(`Runtime exited with ${signal ?? `code ${code}`}`);
        reject(new Error(this.#dead));
      });
      // The process could not start (its folder gone with a fleet that stopped, say).
      this.#child.on('error', (error) => {
        this.#fail(`Runtime could not start: ${error.message}`);
        reject(error);
      });
    });
    // The rejection is also delivered to whoever invokes; this keeps it from going unhandled.
    this.#ready.catch(() => undefined);
  }

  get dead(): boolean {
    return this.#dead !== undefined;
  }

  /** Runs one invocation; the container must be free. Never rejects: a failure is an Invocation. */
  async invoke(event: unknown): Promise<Invocation> {
    const started = Date.now();
    try {
      await this.#ready;
    } catch {
      return this.#failure('Runtime.InitError', this.#dead ?? 'init failed', started);
    }
    if (this.#pending !== undefined) throw new Error(`container ${this.id} is busy`);
    const deadline = Date.now() + this.config.timeoutSeconds * 1000;
    const id = randomUUID();
    this.invocations++;
    return new Promise<Invocation>((resolve) => {
      const timer = setTimeout(() => {
        // Lambda stops a function at its timeout and starts the next invocation in a new sandbox.
        this.kill();
        resolve({
          ok: false,
          errorType: 'Sandbox.Timedout',
          errorMessage: `Task timed out after ${this.config.timeoutSeconds.toFixed(2)} seconds`,
          durationMs: Date.now() - started,
        });
      }, deadline - Date.now());
      this.#pending = { id, call: { resolve, timer, started } };
      this.#thaw();
      this.#child.send({ type: 'invoke', id, event, deadline, requestId: randomUUID() });
    });
  }

  /** Ends the process at once, as Lambda does to a sandbox it retires or that timed out. */
  kill(): void {
    this.#fail('killed');
    this.#child.kill('SIGKILL');
  }

  #answer(message: Exclude<Message, { type: 'ready' } | { type: 'init-error' }>): void {
    const pending = this.#pending;
    if (pending === undefined || (message.id !== undefined && message.id !== pending.id)) return;
    this.#pending = undefined;
    clearTimeout(pending.call.timer);
    this.maxRssKb = Math.max(this.maxRssKb, message.maxRssKb ?? 0);
    if (this.freeze && !this.dead) this.#freeze();
    const durationMs = Date.now() - pending.call.started;
    pending.call.resolve(
      message.type === 'result'
        ? { ok: true, result: message.result, durationMs }
        : { ok: false, errorType: message.error.errorType, errorMessage: message.error.errorMessage, durationMs },
    );
  }

  #failure(errorType: string, errorMessage: string, started: number): Invocation {
    return { ok: false, errorType, errorMessage, durationMs: Date.now() - started };
  }

  #fail(reason: string): void {
    this.#dead ??= reason;
    const pending = this.#pending;
    if (pending === undefined) return;
    this.#pending = undefined;
    clearTimeout(pending.call.timer);
    pending.call.resolve(this.#failure('Runtime.ExitError', reason, pending.call.started));
  }

  #freeze(): void {
    this.#frozen = true;
    this.#child.kill('SIGSTOP');
  }

  #thaw(): void {
    if (!this.#frozen) return;
    this.#frozen = false;
    this.#child.kill('SIGCONT');
  }
}

export interface PoolStats {
  readonly containers: number;
  readonly coldStarts: number;
  readonly invocations: number;
  /** The largest RSS any of its containers reached, in KB. */
  readonly maxRssKb: number;
  /** Init durations (ms) of its cold starts. */
  readonly initMs: readonly number[];
}

/** One function's containers: a free one for each request, a new one while under the cap. */
export class FunctionPool {
  readonly #containers: Container[] = [];
  readonly #idle: Container[] = [];
  readonly #waiting: ((container: Container) => void)[] = [];
  #retired: Container[] = [];
  /** Containers of a version the function no longer runs, busy when it switched: retired as they finish. */
  readonly #stale = new Set<Container>();
  #stopped = false;

  #cap: number;
  #config: FunctionConfig;
  #start: () => Container;

  constructor(
    config: FunctionConfig,
    start: () => Container,
    /** The most containers at once: Lambda's concurrency for this function. */
    cap: number,
  ) {
    this.#config = config;
    this.#start = start;
    this.#cap = cap;
  }

  get config(): FunctionConfig {
    return this.#config;
  }

  /**
   * A deploy of the function: new containers run the new code (`start`); idle ones of the old code
   * are retired at once, and busy ones once their invocation ends, as Lambda lets a warm sandbox
   * of the old version finish what it is doing and sends it nothing more.
   */
  redeploy(config: FunctionConfig, start: () => Container): void {
    this.#config = config;
    this.#start = start;
    for (const container of this.#containers) if (!this.#idle.includes(container)) this.#stale.add(container);
    for (const idle of this.#idle.splice(0)) this.#retire(idle);
  }

  get cap(): number {
    return this.#cap;
  }

  /**
   * A new cap. Lowered, it retires idle containers past it at once, and busy ones as they finish,
   * as Lambda lets the sandboxes of a function whose traffic fell go.
   */
  set cap(cap: number) {
    this.#cap = cap;
    while (this.#containers.length > cap) {
      const idle = this.#idle.pop();
      if (idle === undefined) break;
      this.#retire(idle);
    }
  }

  async invoke(event: unknown): Promise<Invocation> {
    const container = await this.#acquire();
    try {
      return await container.invoke(event);
    } finally {
      this.#release(container);
    }
  }

  /** True when no container is running an invocation and no request waits for one. */
  get quiet(): boolean {
    return this.#waiting.length === 0 && this.#idle.length === this.#containers.length;
  }

  stats(): PoolStats {
    const all = [...this.#containers, ...this.#retired];
    return {
      containers: this.#containers.length,
      coldStarts: all.length,
      invocations: all.reduce((sum, container) => sum + container.invocations, 0),
      maxRssKb: Math.max(0, ...all.map((container) => container.maxRssKb)),
      initMs: all.flatMap((container) => (container.initMs === undefined ? [] : [container.initMs])),
    };
  }

  /** Stops every container; no new one starts after. */
  stop(): void {
    this.#stopped = true;
    for (const container of this.#containers) container.kill();
  }

  #acquire(): Promise<Container> {
    const idle = this.#idle.pop();
    if (idle !== undefined) return Promise.resolve(idle);
    if (this.#stopped) return Promise.reject(new Error(`${this.config.name} stopped`));
    if (this.#containers.length < this.#cap) {
      const container = this.#start();
      this.#containers.push(container);
      return Promise.resolve(container);
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(container: Container): void {
    // A sandbox that timed out or crashed is replaced by a new one on the next request.
    if (container.dead || this.#stale.delete(container) || this.#containers.length > this.#cap) {
      this.#retire(container);
      const waiter = this.#waiting.shift();
      if (waiter !== undefined) this.#acquire().then(waiter, () => undefined);
      return;
    }
    const waiter = this.#waiting.shift();
    if (waiter !== undefined) waiter(container);
    else this.#idle.push(container);
  }

  #retire(container: Container): void {
    this.#containers.splice(this.#containers.indexOf(container), 1);
    this.#retired.push(container);
    container.kill();
  }
}
