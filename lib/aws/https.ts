import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import aws4 from 'aws4';
import { unlessAborted } from '../abort';
import { REAL_RUNTIME, type Runtime } from '../runtime';
import { SigningClock } from './clock';
import type { Credentials } from './credentials';

/**
 * One copy of a request to an AWS JSON API (DynamoDB's, for the store): signed with SigV4 by
 * `aws4` at the signing clock's time, sent over node:https on a kept-alive socket, within a
 * connect and an answer timeout; the signal ends it at once. What a copy's answer means, and
 * whether to send another, is the caller's (lib/dynamodb/client.ts): this is its default
 * `Transport`. The simulator runs it too, over sockets of its own and on its clock (`Wire`,
 * harness/simulation/socket.ts), so that its network's faults meet these timeouts.
 */

/** How long one copy may take to connect, and to be answered once connected. */
export const CONNECT_TIMEOUT_MS = 1_000;
export const REQUEST_TIMEOUT_MS = 2_000;

/** An answer: its HTTP status, and its JSON (a body that is not JSON as its `message`). */
export interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** Sends one copy of an operation's request (its JSON body): its answer, or a RequestFailure, or the signal's reason. */
export type Transport = (operation: string, body: string, signal: AbortSignal) => Promise<Answer>;

/** A copy with no answer: no connection, none within its timeout, or the connection lost. */
export class RequestFailure extends Error {
  constructor(
    name: 'TimeoutError' | 'NetworkError',
    message: string,
    /** Whether the copy may have reached AWS: false until its socket connected. */
    readonly mayHaveGone: boolean,
    cause?: unknown,
  ) {
    super(message, { cause });
    this.name = name;
  }
}

/** An AWS service's JSON API, as a transport reaches it. */
export interface Service {
  readonly url: URL;
  /** The region requests are signed for. */
  readonly region: string;
  /** The name requests are signed for (`dynamodb`), and the prefix of their X-Amz-Target (`DynamoDB_20120810`). */
  readonly name: string;
  readonly target: string;
  readonly credentials: () => Promise<Credentials>;
  /** Sockets in the pool: as many as the caller lets requests be in flight. */
  readonly maxSockets: number;
}

/**
 * What an attempt needs of node:http: a request, the socket it is given, and its answer (a
 * ClientRequest, its net.Socket and its IncomingMessage are these).
 */
export interface OutgoingRequest {
  on(event: 'socket', listener: (socket: RequestSocket) => void): unknown;
  on(event: 'response', listener: (answer: IncomingAnswer) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
  destroy(error: Error): unknown;
  end(body: string): unknown;
}
export interface RequestSocket {
  /** True while a new socket connects; false for a kept-alive one. */
  readonly connecting: boolean;
  once(event: 'connect', listener: () => void): unknown;
}
export interface IncomingAnswer {
  readonly statusCode?: number | undefined;
  readonly headers: { readonly date?: string | undefined };
  /** True once the whole answer was read. */
  readonly complete: boolean;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
}

/**
 * What the copies go out on: node:http's client on a pool of kept-alive sockets, timed by the
 * process's clock, in production; the simulator's sockets and clock in a run.
 */
export interface Wire {
  /** Opens one request to the service, with these headers: a POST. */
  readonly open: (headers: Record<string, string>) => OutgoingRequest;
  /** The clock of the timeouts and of the signature's time. */
  readonly runtime: Pick<Runtime, 'now' | 'after'>;
}

/** node:https's (node:http's for a local endpoint) client, on a pool of `service.maxSockets` kept-alive sockets. */
function nodeWire(service: Service): Wire {
  const secure = service.url.protocol === 'https:';
  const agent = new (secure ? HttpsAgent : HttpAgent)({ keepAlive: true, maxSockets: service.maxSockets });
  const request = secure ? httpsRequest : httpRequest;
  return { open: (headers) => request(service.url, { method: 'POST', agent, headers }), runtime: REAL_RUNTIME };
}

interface Connection extends Service {
  readonly wire: Wire;
  readonly clock: SigningClock;
}

/** Sends copies to `service` over HTTPS (HTTP for a local endpoint), each signed, on the same pool of sockets. */
export function httpsTransport(service: Service, wire: Wire = nodeWire(service)): Transport {
  const to: Connection = { ...service, wire, clock: new SigningClock(wire.runtime.now) };
  return (operation, body, signal) => attempt(to, operation, body, signal);
}

/** An operation's request headers, signed with SigV4 for `to`. */
async function signedHeaders(to: Connection, operation: string, body: string): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': `${to.target}.${operation}`,
    // aws4 signs at the time this header says: AWS's, by the clock's correction (lib/aws/clock.ts).
    'x-amz-date': to.clock.amzDate(),
  };
  // On Lambda with active tracing, the request carries the function's trace, as the SDK's did.
  const trace = process.env._X_AMZN_TRACE_ID;
  if (process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined && trace !== undefined) headers['x-amzn-trace-id'] = trace;
  const { url, region, name } = to;
  const { accessKeyId, secretAccessKey, sessionToken } = await to.credentials();
  const signed = aws4.sign(
    { host: url.host, path: url.pathname, method: 'POST', headers, body, service: name, region },
    { accessKeyId, secretAccessKey, ...(sessionToken !== undefined && { sessionToken }) },
  );
  return signed.headers as Record<string, string>;
}

/**
 * An attempt's timeouts: while a new socket connects, CONNECT_TIMEOUT_MS; from then (or at once,
 * on a kept-alive socket) until the whole answer is read, REQUEST_TIMEOUT_MS. Each destroys the
 * request with a TimeoutError. Returns what clears them, and whether the request may have gone out:
 * until its socket connects, nothing was sent.
 */
function watchTimeouts(
  request: OutgoingRequest,
  runtime: Wire['runtime'],
): { clear: () => void; mayHaveGone: () => boolean } {
  let cancel: (() => void) | undefined;
  let connected = false;
  function timeout(what: string, ms: number): void {
    cancel?.();
    cancel = runtime.after(ms, () => {
      request.destroy(new RequestFailure('TimeoutError', `no ${what} within ${ms} ms`, connected));
    });
  }
  function onConnected(): void {
    connected = true;
    timeout('answer', REQUEST_TIMEOUT_MS);
  }
  request.on('socket', (socket) => {
    if (!socket.connecting) {
      onConnected();
      return;
    }
    timeout('connection', CONNECT_TIMEOUT_MS);
    socket.once('connect', onConnected);
  });
  return {
    clear: () => {
      cancel?.();
    },
    mayHaveGone: () => connected,
  };
}

/** An answer's JSON, read whole: a body that is not JSON becomes the message of an error answer. */
function readAnswer(answer: IncomingAnswer): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    answer.on('data', (chunk: Buffer) => chunks.push(chunk));
    answer.on('error', reject);
    answer.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown>;
      try {
        body = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
      } catch {
        body = { message: text };
      }
      resolve({ status: answer.statusCode ?? 0, body });
    });
  });
}

/**
 * One attempt: signed, sent on a kept-alive socket, within its timeouts; the signal ends it at
 * once. Resolves with the answer's status and JSON, or rejects with a RequestFailure (or the
 * signal's reason). Refused for the time it was signed at, it is signed again at AWS's, once.
 */
async function attempt(
  to: Connection,
  operation: string,
  body: string,
  signal: AbortSignal,
  resigned = false,
): Promise<Answer> {
  // Getting credentials may take a while off Lambda (SSO, a profile's refresh): an abort meanwhile
  // ends the attempt there, and nothing is sent after the deadline.
  const headers = await unlessAborted(signedHeaders(to, operation, body), signal);
  signal.throwIfAborted();
  const reply = await new Promise<Answer & { date: string | undefined }>((resolve, reject) => {
    const request = to.wire.open(headers);
    const timeouts = watchTimeouts(request, to.wire.runtime);
    function onAbort(): void {
      request.destroy(signal.reason as Error);
    }
    signal.addEventListener('abort', onAbort, { once: true });
    function done(): void {
      timeouts.clear();
      signal.removeEventListener('abort', onAbort);
    }
    function fail(error: Error): void {
      done();
      if (signal.aborted) reject(signal.reason as Error);
      else if (error instanceof RequestFailure) reject(error);
      else reject(new RequestFailure('NetworkError', error.message, timeouts.mayHaveGone(), error));
    }
    let answered: IncomingAnswer | undefined;
    request.on('error', fail);
    request.on('response', (answer) => {
      answered = answer;
      readAnswer(answer).then((read) => {
        done();
        resolve({ ...read, date: answer.headers.date });
      }, fail);
    });
    // An answer cut off mid-body destroys the request without an 'error' event: a close before
    // the whole answer came is the failure. (A promise already settled ignores it.)
    request.once('close', () => {
      if (answered?.complete !== true) fail(new Error('the connection closed before the answer was complete'));
    });
    request.end(body);
  });
  // The clock (lib/aws/clock.ts): a refusal for the time signed at corrects it; once only.
  if (resigned) return to.clock.explained(reply);
  if (!to.clock.corrected(reply.body.__type, reply.date, String(headers['x-amz-date']))) return reply;
  return attempt(to, operation, body, signal, true);
}
