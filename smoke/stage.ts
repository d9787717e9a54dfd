import type { Todo } from '../lib/todos';
import type { Contract } from './contract';

/**
 * The stage under check, as its client sees it: every request goes through `send`, which checks
 * the answer against openapi.yaml, counts which documented statuses it has seen, and keeps the
 * ids of the records this run created, so that they can be deleted at the end.
 */

/**
 * How long one answer may take: a deployed function's timeout is 10 s (serverless-offline's too),
 * and a cold start with the store's retries stays within it; the gateway answers by then, if only
 * with its own error. Past this the stage is not answering.
 */
export const REQUEST_WITHIN_MS = 15_000;

/**
 * How long the checks may take, all together: about 70 requests, each a few ms on a local stage,
 * up to about a second on DynamoDB Local under a busy machine. Past this the run ends as when the
 * stage does not answer, however slowly each answer came.
 */
export const CHECKS_WITHIN_MS = 180_000;

/**
 * How long the cleanup may take, all together: a few DELETEs, and a GET when a create got no
 * answer. A stage that did not answer the checks gets this much more of the user's time, no more.
 */
export const CLEANUP_WITHIN_MS = 10_000;

/** The stage did not answer at all: the one line to say why. */
export class Unreachable extends Error {
  override readonly name = 'Unreachable';
}

/** The run was interrupted before this request went out, or while it was in flight. */
export class Interrupted extends Error {
  override readonly name = 'Interrupted';
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body as JSON; throws, saying so, when it is not. */
  json(): unknown;
}

export interface SendOptions {
  /** A value sent as JSON, with `Content-Type: application/json`. */
  readonly body?: unknown;
  /** A body sent as it is. */
  readonly rawBody?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** The status the check expects: anything else fails it. */
  readonly expect?: number;
}

/** A record as the service answers it: the domain's type, so that the checks name no field they do not check. */
export type { Todo };

/** Errors of TLS, as Node's TLS layer and OpenSSL name them. */
const TLS_CODES = /^(ERR_SSL_|ERR_TLS_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_(GET|VERIFY)_)/;

/** Failures to connect: the request never left, so it changed nothing. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** What fetch's failure was caused by: its code (`ECONNREFUSED`) and message. */
function causeOf(error: unknown): { code: string; message: string } {
  const cause: unknown = error instanceof Error && error.cause !== undefined ? error.cause : error;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : '';
  return { code, message: cause instanceof Error ? cause.message : String(cause) };
}

/** Whether a request that got no answer may still have reached the stage, and changed it. */
function mayHaveArrived(error: unknown): boolean {
  const { code } = causeOf(error);
  return !(NOT_CONNECTED.has(code) || TLS_CODES.test(code));
}

/**
 * Whether fetch gave up because its signal's time ran out. By its name: a DOMException is an Error
 * only in the realm that made it.
 */
function timedOut(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'name' in error && error.name === 'TimeoutError';
}

/** What went wrong with a request that got no answer, in a few words, without a stack. */
export function transportFailure(error: unknown): string {
  if (timedOut(error)) return `no answer within ${REQUEST_WITHIN_MS / 1000} s`;
  const { code, message } = causeOf(error);
  if (TLS_CODES.test(code)) {
    // OpenSSL's messages carry its internals: `…:SSL routines:ssl3_get_record:wrong version number:…`.
    const reason = /SSL routines:[^:]*:([^:]+)/.exec(message)?.[1] ?? message.split('\n')[0] ?? '';
    const hint = code === 'ERR_SSL_WRONG_VERSION_NUMBER' ? '; does it serve plain http://?' : '';
    return `TLS error: ${reason} (${code})${hint}`;
  }
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'no such host',
    EAI_AGAIN: 'its host name cannot be looked up now',
    ECONNRESET: 'the connection was reset',
    UND_ERR_SOCKET: 'the connection closed before the answer',
    ETIMEDOUT: 'the connection timed out',
    EHOSTUNREACH: 'no route to its host',
  };
  const said = known[code];
  if (said !== undefined) return `${said} (${code})`;
  return (message.split('\n')[0] ?? '') + (code === '' || code === 'undefined' ? '' : ` (${code})`);
}

/** The `id` of a Todo's JSON, if it has one. */
function idOf(text: string): number | undefined {
  try {
    const id = (JSON.parse(text) as { id?: unknown } | null)?.id;
    return typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the requests of a part of the run share: when that part must end, what says so, and what
 * cuts its requests short.
 */
interface Phase {
  readonly deadline: number;
  /** Why a request was cut short at the deadline: `the checks did not end within 180 s`. */
  readonly late: string;
  readonly abort: AbortController;
}

/** How long the parts of a run may take, all their requests together. */
export interface Bounds {
  readonly checksWithinMs: number;
  readonly cleanupWithinMs: number;
}

export class Stage {
  /** Ids of the records this run created. */
  readonly created = new Set<number>();
  /** Of those, the ones it deleted, in its checks or its cleanup. */
  readonly deleted = new Set<number>();
  /** POSTs that got no answer: each may have created a record whose id this run never learnt. */
  lostCreates = 0;
  /** Documented answers seen, checked against openapi.yaml: `POST /todos 201`. */
  readonly seen = new Set<string>();
  readonly #checks: Phase;
  #phase: Phase;
  /** Cuts short every request, the cleanup's too. */
  readonly #stop = new AbortController();

  constructor(
    readonly baseUrl: string,
    private readonly contract: Contract,
    /** In the title of every record this run creates, so that a lost one can be found. */
    readonly runId: string,
    private readonly bounds: Bounds = { checksWithinMs: CHECKS_WITHIN_MS, cleanupWithinMs: CLEANUP_WITHIN_MS },
  ) {
    this.#checks = {
      deadline: Date.now() + bounds.checksWithinMs,
      late: `the checks did not end within ${bounds.checksWithinMs / 1000} s`,
      abort: new AbortController(),
    };
    this.#phase = this.#checks;
  }

  /**
   * From now on no check sends a request, and the one in flight is given up at once: on a stage
   * that does not answer it would hold the run for REQUEST_WITHIN_MS. A create given up this way
   * may still make its record; the cleanup looks for it by its title.
   */
  interrupt(): void {
    this.#checks.abort.abort();
  }

  get interrupted(): boolean {
    return this.#checks.abort.signal.aborted;
  }

  /**
   * From now on the requests are the cleanup's: bounded by `cleanupWithinMs` all together, and
   * not cut short by `interrupt`, which is what asks for the cleanup.
   */
  beginCleanup(): void {
    this.#phase = {
      deadline: Date.now() + this.bounds.cleanupWithinMs,
      late: `the cleanup did not end within ${this.bounds.cleanupWithinMs / 1000} s`,
      abort: new AbortController(),
    };
  }

  /** Cuts short every request, the cleanup's included: the user will not wait for it. */
  stop(): void {
    this.#stop.abort();
  }

  get stopped(): boolean {
    return this.#stop.signal.aborted;
  }

  /** A title marked as this run's: `smoke 1a2b3c4d <what>`. */
  title(what: string): string {
    return `smoke ${this.runId} ${what}`;
  }

  /** Sends a request of a check: refused once the run is interrupted. */
  send(method: string, path: string, options: SendOptions = {}): Promise<Answer> {
    if (this.interrupted) return Promise.reject(new Interrupted(`${method} ${path} not sent: interrupted`));
    return this.request(method, path, options, true);
  }

  /**
   * Whether `url` answers a GET as this API's list does, 200 and a JSON array, held to nothing
   * else: a question about where the API is, not a check of it.
   */
  async servesList(url: string): Promise<boolean> {
    const { status, text } = await this.#fetch('GET', url, {}, false);
    try {
      return status === 200 && Array.isArray(JSON.parse(text));
    } catch {
      return false;
    }
  }

  /**
   * Sends a request and, with `checked`, holds its answer to openapi.yaml and to `expect`.
   * Whatever the answer, the records it creates or deletes are noted first, so that a check that
   * fails still leaves the cleanup its list.
   */
  async request(method: string, path: string, options: SendOptions, checked: boolean): Promise<Answer> {
    const { body, rawBody, headers = {}, expect } = options;
    const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    const {
      status,
      headers: received,
      text,
    } = await this.#fetch(
      method,
      this.baseUrl + path,
      {
        headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
        ...(payload === undefined ? {} : { body: payload }),
      },
      method === 'POST' && path === '/todos',
    );
    const answer: Answer = {
      status,
      headers: received,
      text,
      json: () => {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          throw new Error(`${method} ${path} → ${status}: body is not JSON: ${text.slice(0, 200)}`);
        }
      },
    };
    this.#note(method, path, answer);
    if (!checked) return answer;
    if (expect !== undefined && status !== expect) {
      throw new Error(`${method} ${path} → ${status}, expected ${expect}: ${text.slice(0, 300)}`);
    }
    const documented = this.contract.check(method, path, answer);
    if (documented !== undefined) this.seen.add(`${documented.method} ${documented.template} ${documented.status}`);
    return answer;
  }

  /** POST /todos with a title of this run's: the created Todo. */
  async create(what: string): Promise<Todo> {
    return (await this.send('POST', '/todos', { body: { title: this.title(what) }, expect: 201 })).json() as Todo;
  }

  /**
   * One request and its whole answer, within REQUEST_WITHIN_MS and what is left of the phase's
   * time; Interrupted when the user cut it short, Unreachable when no answer came.
   */
  async #fetch(
    method: string,
    url: string,
    init: { headers?: Readonly<Record<string, string>>; body?: string },
    creates: boolean,
  ): Promise<{ status: number; headers: Headers; text: string }> {
    const phase = this.#phase;
    const within = Math.max(0, Math.min(REQUEST_WITHIN_MS, phase.deadline - Date.now()));
    // Not AbortSignal.timeout: AbortSignal.any holds its sources weakly, and Node 20 collects a
    // timeout signal that nothing else holds, so that the request would never time out.
    const late = new AbortController();
    const timer = setTimeout(() => {
      late.abort(new DOMException(`no answer within ${within} ms`, 'TimeoutError'));
    }, within);
    try {
      const response = await fetch(url, {
        method,
        ...init,
        signal: AbortSignal.any([phase.abort.signal, this.#stop.signal, late.signal]),
      });
      return { status: response.status, headers: response.headers, text: await response.text() };
    } catch (error) {
      if (creates && mayHaveArrived(error)) this.lostCreates += 1;
      if (phase.abort.signal.aborted || this.#stop.signal.aborted) {
        throw new Interrupted(`${method} ${url} given up: interrupted`);
      }
      throw new Unreachable(timedOut(error) && within < REQUEST_WITHIN_MS ? phase.late : transportFailure(error));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Records this run created and has not deleted. */
  undeleted(): number[] {
    return [...this.created].filter((id) => !this.deleted.has(id));
  }

  #note(method: string, path: string, answer: Answer): void {
    if (method === 'POST' && path === '/todos' && answer.status === 201) {
      const id = idOf(answer.text);
      // A created record whose id cannot be read is found by its title at the cleanup.
      if (id === undefined) this.lostCreates += 1;
      else this.created.add(id);
    }
    const id = /^\/todos\/(\d+)$/.exec(path)?.[1];
    if (method === 'DELETE' && answer.status === 200 && id !== undefined && this.created.has(Number(id))) {
      this.deleted.add(Number(id));
    }
  }
}
