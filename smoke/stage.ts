import type { Contract } from './contract';

/**
 * The stage under check, as its client sees it: every request goes through `send`, which checks
 * the answer against openapi.yaml, counts which documented statuses it has seen, and keeps the
 * ids of the records this run created, so that they can be deleted at the end.
 */

/**
 * How long one answer may take: a deployed function's timeout is 10 s, and a cold start with the
 * store's retries stays within it. Past this the stage is not answering.
 */
export const REQUEST_WITHIN_MS = 30_000;

/** The stage did not answer at all: the one line to say why. */
export class Unreachable extends Error {
  override readonly name = 'Unreachable';
}

/** The run was interrupted before this request went out. */
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

export interface Todo {
  readonly id: number;
  readonly title: string;
  readonly completed: boolean;
}

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

/** What went wrong with a request that got no answer, in a few words, without a stack. */
export function transportFailure(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${REQUEST_WITHIN_MS / 1000} s`;
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

export class Stage {
  /** Ids of the records this run created. */
  readonly created = new Set<number>();
  /** Of those, the ones it deleted, in its checks or its cleanup. */
  readonly deleted = new Set<number>();
  /** POSTs that got no answer: each may have created a record whose id this run never learnt. */
  lostCreates = 0;
  /** Documented answers seen, checked against openapi.yaml: `POST /todos 201`. */
  readonly seen = new Set<string>();
  #interrupted = false;

  constructor(
    readonly baseUrl: string,
    private readonly contract: Contract,
    /** In the title of every record this run creates, so that a lost one can be found. */
    readonly runId: string,
  ) {}

  /** From now on no check sends a request; one in flight still gets its answer. */
  interrupt(): void {
    this.#interrupted = true;
  }

  get interrupted(): boolean {
    return this.#interrupted;
  }

  /** A title marked as this run's: `smoke 1a2b3c4d <what>`. */
  title(what: string): string {
    return `smoke ${this.runId} ${what}`;
  }

  /** Sends a request of a check: refused once the run is interrupted. */
  send(method: string, path: string, options: SendOptions = {}): Promise<Answer> {
    if (this.#interrupted) return Promise.reject(new Interrupted(`${method} ${path} not sent: interrupted`));
    return this.request(method, path, options, true);
  }

  /**
   * Sends a request and, with `checked`, holds its answer to openapi.yaml and to `expect`.
   * Whatever the answer, the records it creates or deletes are noted first, so that a check that
   * fails still leaves the cleanup its list.
   */
  async request(method: string, path: string, options: SendOptions, checked: boolean): Promise<Answer> {
    const { body, rawBody, headers = {}, expect } = options;
    const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    const creates = method === 'POST' && path === '/todos';
    let status: number;
    let received: Headers;
    let text: string;
    try {
      const response = await fetch(this.baseUrl + path, {
        method,
        headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
        ...(payload === undefined ? {} : { body: payload }),
        signal: AbortSignal.timeout(REQUEST_WITHIN_MS),
      });
      status = response.status;
      received = response.headers;
      text = await response.text();
    } catch (error) {
      if (creates && mayHaveArrived(error)) this.lostCreates += 1;
      throw new Unreachable(transportFailure(error));
    }
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
