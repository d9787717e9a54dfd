import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import aws4 from 'aws4';
import { SigningClock } from '../aws/clock';
import { sharedRefresh } from '../aws/credentials';
import { dynamoDbEndpoint } from '../aws/endpoint';
import { log } from '../log';
import { Copies, copyFate, type CopyFate, type Fate } from './outcome';

/**
 * How the store talks to DynamoDB, in one file: the operations it uses, with DynamoDB's own
 * parameter names and plain values (items, keys and expression values as JavaScript objects);
 * each copy's timeouts, and which failures are sent again and how often; what became of each copy
 * (lib/dynamodb/outcome.ts); how many requests are in flight at once; what is logged at `debug`.
 * Nothing else in the store knows what sends the requests.
 *
 * It speaks DynamoDB's JSON protocol itself, over node:https, each request signed with SigV4 by
 * `aws4`, items marshalled by `@aws-sdk/util-dynamodb`: a cold start loads about 40 KB instead of
 * the AWS SDK's 415 KB (docs/performance.md). What the SDK did for the store, this file does the
 * same way: the SDK's standard backoff (three attempts against 500s and timeouts, throttles until
 * the deadline), the same body (so a transaction keeps its ClientRequestToken), a 1 s connect and a
 * 2 s answer timeout each; credentials from the
 * environment (as Lambda gives them) or else the SDK's own chain of providers (a profile, SSO).
 */

/** Requests in flight at once, and sockets in the client's pool: the same number (see `DynamoDb`). */
export const MAX_IN_FLIGHT = 50;
/** How long one attempt may take to connect, and to be answered once connected. */
export const CONNECT_TIMEOUT_MS = 1_000;
export const REQUEST_TIMEOUT_MS = 2_000;
/** Attempts of one request against 500s and timeouts, and against a copy in progress, each with the timeouts above. */
export const MAX_ATTEMPTS = 3;

/** An item, a key or expression values, as the store reads and writes them: plain values. */
export type Item = Record<string, unknown>;

interface Write {
  readonly TableName: string;
  readonly ConditionExpression?: string;
  readonly ExpressionAttributeNames?: Readonly<Record<string, string>>;
  readonly ExpressionAttributeValues?: Item;
  /** A cancellation carries the item that failed the condition (ALL_OLD). */
  readonly ReturnValuesOnConditionCheckFailure?: 'ALL_OLD';
}
export interface PutInput extends Write {
  readonly Item: Item;
}
export interface UpdateInput extends Write {
  readonly Key: Item;
  readonly UpdateExpression: string;
}
export interface DeleteInput extends Write {
  readonly Key: Item;
}
export interface GetInput {
  readonly TableName: string;
  readonly Key: Item;
  readonly ConsistentRead: true;
}
export interface QueryInput {
  readonly TableName: string;
  readonly KeyConditionExpression: string;
  readonly ExpressionAttributeValues: Item;
  readonly ExpressionAttributeNames?: Readonly<Record<string, string>>;
  readonly ProjectionExpression?: string;
  readonly ConsistentRead: true;
  readonly Limit?: number | undefined;
  readonly ExclusiveStartKey?: Item | undefined;
}

/** An action that writes nothing: its transaction is applied only while its condition holds. */
export interface ConditionCheckInput extends DeleteInput {
  readonly ConditionExpression: string;
}

/** One action of a transaction. */
export type TransactItem =
  | { readonly Put: PutInput }
  | { readonly Update: UpdateInput }
  | { readonly Delete: DeleteInput }
  | { readonly ConditionCheck: ConditionCheckInput };

/** Why DynamoDB cancelled one action of a transaction, and the item it found when asked (ALL_OLD). */
export interface CancellationReason {
  readonly code: string;
  readonly item?: Item;
}

/** A request DynamoDB refused, or that got no answer: `name` is DynamoDB's code (`TransactionCanceledException`…). */
export class DynamoDbError extends Error {
  /** What became of the request over every copy sent of it (lib/dynamodb/outcome.ts): not applied, or unknown. */
  readonly fate: Fate;
  /** What became of the copy that failed so, the last one sent. */
  readonly copy: CopyFate;
  /** A cancelled transaction's reasons, one an action, in the order the actions went in. */
  readonly cancellationReasons: readonly CancellationReason[] | undefined;

  constructor(
    name: string,
    message: string,
    {
      copy,
      fate = copy === 'not applied' ? 'not applied' : 'unknown',
      reasons,
      cause,
    }: { copy: CopyFate; fate?: Fate; reasons?: readonly CancellationReason[]; cause?: unknown },
  ) {
    super(message, { cause });
    this.name = name;
    this.copy = copy;
    this.fate = fate;
    this.cancellationReasons = reasons;
  }
}

/** What the store needs of DynamoDB. Each call gives up, with the signal's reason, when the signal aborts. */
export interface DynamoDb {
  getItem(input: GetInput, signal: AbortSignal): Promise<Item | undefined>;
  query(input: QueryInput, signal: AbortSignal): Promise<{ items: Item[]; lastKey: Item | undefined }>;
  putItem(input: PutInput, signal: AbortSignal): Promise<void>;
  updateItem(input: UpdateInput, signal: AbortSignal): Promise<void>;
  deleteItem(input: DeleteInput, signal: AbortSignal): Promise<void>;
  /** One transaction; every copy of it carries `token`, its ClientRequestToken, and is added to `copies`. */
  transactWriteItems(
    actions: readonly TransactItem[],
    token: string,
    signal: AbortSignal,
    copies: Copies,
  ): Promise<void>;
}

export interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
  /** When they stop working; they are fetched again a minute before. */
  readonly expiration?: Date | undefined;
}

export interface DynamoDbOptions {
  /** DynamoDB Local's address, say; by default the region's DynamoDB. */
  readonly endpoint?: string | undefined;
  /** By default AWS_REGION (Lambda sets it), AWS_DEFAULT_REGION, or us-east-1. */
  readonly region?: string | undefined;
  /** Fixed credentials, or where to get them; by default `credentialsFrom(process.env)`. */
  readonly credentials?: Credentials | (() => Promise<Credentials>);
  /** What sends one copy of a request: by default over HTTPS to `endpoint`; the simulator's own in tests. */
  readonly transport?: Transport;
}

/**
 * Throughput past a partition's: not applied, and may well go through a moment later. The SDK
 * tries three times, in about a second; the store's requests wait up to their deadline.
 */
const THROTTLES = ['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded'];
const MAX_RETRY_DELAY_MS = 20_000;

/**
 * `work`'s result, or the signal's reason if the signal aborts first. The listener goes when
 * either settles: a request that waits many times on one signal does not pile listeners on it.
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    function stop() {
      reject(signal.reason as Error);
    }
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => {
      signal.removeEventListener('abort', stop);
    });
  });
}

/** A pause of `ms`, cut short with the signal's reason if the signal aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const paused = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return unlessAborted(paused, signal).finally(() => {
    clearTimeout(timer);
  });
}

/**
 * A random pause before the `attempt`th try again (0, 1, 2…), so that writers that met each other
 * do not meet again at once: "full jitter" (Brooker, "Exponential Backoff And Jitter", AWS
 * Architecture Blog), up to 10 ms doubled each time, at most 320 ms; cut short, with the signal's
 * reason, if the signal aborts.
 */
export function backoff(signal: AbortSignal, attempt = 0): Promise<void> {
  return pause(Math.random() * Math.min(320, 10 * 2 ** attempt), signal);
}

/**
 * At most MAX_IN_FLIGHT requests in flight. A request waiting for one of the pool's sockets would
 * spend its attempt's timeouts waiting: under a burst, a healthy DynamoDB would look unreachable.
 * Waiting here instead, for a slot that comes with a free socket, the timeouts measure the
 * network only, and the wait itself is bounded by the caller's deadline.
 */
class Slots {
  #inFlight = 0;
  readonly #waiting: (() => void)[] = [];

  async acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#inFlight < MAX_IN_FLIGHT) {
      this.#inFlight++;
      return;
    }
    let grant: () => void = () => undefined;
    const granted = new Promise<void>((resolve) => {
      grant = resolve;
    });
    this.#waiting.push(grant);
    try {
      await unlessAborted(granted, signal);
    } catch (error) {
      // Given up while waiting: pass a slot granted meanwhile on, or leave the queue.
      const index = this.#waiting.indexOf(grant);
      if (index >= 0) this.#waiting.splice(index, 1);
      else this.release();
      throw error;
    }
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#inFlight--;
    else next();
  }
}

/**
 * How each kind of failure is sent again: after a random pause (full jitter) of up to `baseMs`,
 * doubling each time up to `maxMs`, at most `times` times, as the SDK's standard mode does; a
 * throttle, and a plain write that met a transaction in progress on its item (which the SDK does
 * not retry), until the deadline: neither was applied.
 */
const RETRIES = {
  throttle: { baseMs: 500, maxMs: 1_000, times: Infinity },
  conflict: { baseMs: 10, maxMs: 320, times: Infinity },
  /** A copy with the same token still in progress, or too many control-plane requests. */
  busy: { baseMs: 500, maxMs: MAX_RETRY_DELAY_MS, times: MAX_ATTEMPTS - 1 },
  /** A 500, a timeout, a connection lost. */
  transient: { baseMs: 100, maxMs: MAX_RETRY_DELAY_MS, times: MAX_ATTEMPTS - 1 },
};
const BUSY = ['TransactionInProgressException', 'LimitExceededException'];
const TRANSIENT = ['InternalServerError', 'ServiceUnavailable', 'TimeoutError', 'NetworkError'];

/** Which failures are sent again, and how (RETRIES); undefined for an answer that is final. */
function retryKind(error: DynamoDbError, status: number | undefined): keyof typeof RETRIES | undefined {
  if (error.name === 'TransactionConflictException') return 'conflict';
  if (status === 429 || THROTTLES.includes(error.name)) return 'throttle';
  if (BUSY.includes(error.name)) return 'busy';
  if (TRANSIENT.includes(error.name) || (status !== undefined && status >= 500)) return 'transient';
  return undefined;
}

/**
 * Credentials as Lambda gives them (the environment), or else the AWS SDK's own chain (a profile,
 * SSO, a role), loaded only then: the bundles leave it out (serverless.yml), and a function never
 * needs it. Those that expire are fetched again a minute before they do, once for every request
 * that needs them then (lib/aws/credentials.ts).
 */
export function credentialsFrom(env: NodeJS.ProcessEnv): () => Promise<Credentials> {
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN } = env;
  if (AWS_ACCESS_KEY_ID && AWS_SECRET_ACCESS_KEY) {
    const fixed = Promise.resolve({
      accessKeyId: AWS_ACCESS_KEY_ID,
      secretAccessKey: AWS_SECRET_ACCESS_KEY,
      sessionToken: AWS_SESSION_TOKEN,
    });
    return () => fixed;
  }
  return sharedRefresh(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only off Lambda, and left out of the bundles
    const { defaultProvider } = require('@aws-sdk/credential-provider-node') as {
      defaultProvider: () => () => Promise<Credentials>;
    };
    return defaultProvider()();
  });
}

/** Plain values in, DynamoDB's attribute values out: every place a request carries items or values. */
function marshalled(input: object): Record<string, unknown> {
  const fields = input as Record<string, unknown>;
  const out: Record<string, unknown> = { ...fields };
  for (const name of ['Item', 'Key', 'ExpressionAttributeValues', 'ExclusiveStartKey']) {
    const value = fields[name];
    if (value !== undefined) out[name] = marshall(value as Item, { removeUndefinedValues: true });
  }
  return out;
}

/** The answer's error as the store reads it: DynamoDB's code (after `#` in `__type`), and a cancellation's reasons. */
function errorOf(status: number, body: Record<string, unknown>): DynamoDbError {
  function text(value: unknown) {
    return typeof value === 'string' ? value : undefined;
  }
  const type = text(body.__type) ?? `Http${status}`;
  const name = type.slice(type.lastIndexOf('#') + 1);
  const reasons = (body.CancellationReasons as { Code?: string; Item?: Record<string, never> }[] | undefined)?.map(
    ({ Code, Item }) => ({ code: Code ?? 'None', ...(Item && { item: unmarshall(Item) }) }),
  );
  return new DynamoDbError(name, text(body.message) ?? text(body.Message) ?? name, {
    copy: copyFate(status, name),
    ...(reasons && { reasons }),
  });
}

interface Endpoint {
  readonly url: URL;
  /** The region requests are signed for. */
  readonly region: string;
  readonly agent: HttpAgent;
  readonly request: typeof httpRequest;
  readonly credentials: () => Promise<Credentials>;
  readonly clock: SigningClock;
}

/**
 * Where the store's requests go, and how: `options` with their defaults (see DynamoDbOptions); with
 * no endpoint given, the one the AWS SDKs' shared settings and the region's partition name
 * (lib/aws/endpoint.ts).
 */
function endpointFor({ endpoint, region, credentials }: DynamoDbOptions): Endpoint {
  const resolvedRegion = region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const { url, signingRegion } = dynamoDbEndpoint(resolvedRegion, endpoint, process.env);
  const secure = url.protocol === 'https:';
  return {
    url,
    region: signingRegion,
    agent: new (secure ? HttpsAgent : HttpAgent)({ keepAlive: true, maxSockets: MAX_IN_FLIGHT }),
    request: secure ? httpsRequest : httpRequest,
    credentials: credentialSource(credentials),
    clock: new SigningClock(),
  };
}

function credentialSource(credentials: DynamoDbOptions['credentials']): () => Promise<Credentials> {
  if (typeof credentials === 'function') return credentials;
  if (credentials === undefined) return credentialsFrom(process.env);
  return () => Promise.resolve(credentials);
}

/** An operation's request headers, signed with SigV4 for `endpoint`. */
async function signedHeaders(endpoint: Endpoint, operation: string, body: string): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': `DynamoDB_20120810.${operation}`,
    // aws4 signs at the time this header says: AWS's, by the clock's correction (lib/aws/clock.ts).
    'x-amz-date': endpoint.clock.amzDate(),
  };
  // On Lambda with active tracing, the request carries the function's trace, as the SDK's did.
  const trace = process.env._X_AMZN_TRACE_ID;
  if (process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined && trace !== undefined) headers['x-amzn-trace-id'] = trace;
  const { url, region } = endpoint;
  const { accessKeyId, secretAccessKey, sessionToken } = await endpoint.credentials();
  const signed = aws4.sign(
    { host: url.host, path: url.pathname, method: 'POST', headers, body, service: 'dynamodb', region },
    { accessKeyId, secretAccessKey, ...(sessionToken !== undefined && { sessionToken }) },
  );
  return signed.headers as Record<string, string>;
}

/**
 * An attempt's timeouts: while a new socket connects, CONNECT_TIMEOUT_MS; from then (or at once,
 * on a kept-alive socket) until the whole answer is read, REQUEST_TIMEOUT_MS. Each destroys the
 * request with a TimeoutError. Returns what clears them, and whether the request may have gone out:
 * until its socket connects, nothing was sent, and a failure then leaves it not applied.
 */
function watchTimeouts(request: ClientRequest): { clear: () => void; mayHaveGone: () => boolean } {
  let timer: NodeJS.Timeout | undefined;
  let connected = false;
  function timeout(what: string, ms: number): void {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const copy = connected ? 'unanswered' : 'not applied';
      request.destroy(new DynamoDbError('TimeoutError', `no ${what} within ${ms} ms`, { copy }));
    }, ms);
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
      clearTimeout(timer);
    },
    mayHaveGone: () => connected,
  };
}

/** An answer's JSON, read whole: a body that is not JSON becomes the message of an error answer. */
function readAnswer(answer: IncomingMessage): Promise<{ status: number; body: Record<string, unknown> }> {
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

/** One copy of a request sent: its answer's status and JSON, or a DynamoDbError with the copy's fate (or the signal's reason). */
export type Transport = (operation: string, body: string, signal: AbortSignal) => Promise<Answer>;
interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/**
 * One attempt: signed, sent on a kept-alive socket, within its timeouts; the signal ends it at
 * once. Resolves with the answer's status and JSON, or rejects with a DynamoDbError (or the
 * signal's reason). Refused for the time it was signed at, it is signed again at AWS's, once.
 */
async function attempt(
  endpoint: Endpoint,
  operation: string,
  body: string,
  signal: AbortSignal,
  resigned = false,
): Promise<Answer> {
  // Getting credentials may take a while off Lambda (SSO, a profile's refresh): an abort meanwhile
  // ends the attempt there, and nothing is sent after the deadline.
  const headers = await unlessAborted(signedHeaders(endpoint, operation, body), signal);
  signal.throwIfAborted();
  const reply = await new Promise<Answer & { date: string | undefined }>((resolve, reject) => {
    const request = endpoint.request(endpoint.url, { method: 'POST', agent: endpoint.agent, headers });
    const timeouts = watchTimeouts(request);
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
      else if (error instanceof DynamoDbError) reject(error);
      else {
        const copy = timeouts.mayHaveGone() ? 'unanswered' : 'not applied';
        reject(new DynamoDbError('NetworkError', error.message, { copy, cause: error }));
      }
    }
    let answered: IncomingMessage | undefined;
    request.on('error', fail);
    request.on('response', (answer: IncomingMessage) => {
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
  if (resigned) return endpoint.clock.explained(reply);
  if (!endpoint.clock.corrected(reply.body.__type, reply.date, String(headers['x-amz-date']))) return reply;
  return attempt(endpoint, operation, body, signal, true);
}

/**
 * A copy's answer, or the DynamoDbError it failed with, its fate added to `copies`. The signal's
 * reason is thrown, the copy counted as on its way: the abort may have come after it went out.
 */
async function sendCopy(transport: Transport, operation: string, body: string, signal: AbortSignal, copies: Copies) {
  try {
    const answer = await transport(operation, body, signal);
    if (answer.status >= 200 && answer.status < 300) {
      copies.add('applied');
      return { answer: answer.body };
    }
    const failure = errorOf(answer.status, answer.body);
    copies.add(failure.copy);
    if (failure.cancellationReasons?.some(({ code }) => code === 'ConditionalCheckFailed')) copies.conditionsRead();
    return { failure, status: answer.status };
  } catch (error) {
    if (signal.aborted || !(error instanceof DynamoDbError)) {
      copies.add('unanswered');
      throw error;
    }
    copies.add(error.copy);
    return { failure: error, status: undefined };
  }
}

/**
 * One request: a slot among MAX_IN_FLIGHT, then copies of it, the same body each time (so a
 * transaction's keep its token), until one is answered for good or the signal aborts; between
 * them, each kind of failure's backoff (RETRIES). Every copy's fate goes into `copies`, which a
 * transaction keeps across its requests, and a failure carries the request's fate so far. Each
 * outcome is a line at `debug`.
 */
async function send(
  transport: Transport,
  slots: Slots,
  operation: string,
  input: object,
  signal: AbortSignal,
  copies = new Copies(),
): Promise<Record<string, unknown>> {
  const body = JSON.stringify(marshalled(input));
  await slots.acquire(signal);
  const started = Date.now();
  const failures = { throttle: 0, conflict: 0, busy: 0, transient: 0 };
  try {
    for (;;) {
      const sent = await sendCopy(transport, operation, body, signal, copies);
      if ('answer' in sent) {
        log('debug', { message: 'dynamodb', operation, attempts: copies.sent, durationMs: Date.now() - started });
        return sent.answer;
      }
      // The copy's failure, with the fate of the whole request.
      const { name, message, copy, cancellationReasons: reasons } = sent.failure;
      const failure = new DynamoDbError(name, message, {
        copy,
        fate: copies.fate,
        cause: sent.failure,
        ...(reasons && { reasons }),
      });
      const kind = retryKind(failure, sent.status);
      if (kind === undefined || ++failures[kind] > RETRIES[kind].times) {
        log('debug', { message: 'dynamodb', operation, error: failure.name, durationMs: Date.now() - started });
        throw failure;
      }
      const { baseMs, maxMs } = RETRIES[kind];
      await pause(Math.random() * Math.min(maxMs, baseMs * 2 ** (failures[kind] - 1)), signal);
    }
  } finally {
    slots.release();
  }
}

/**
 * The store's DynamoDB, at `endpoint` (by default the region's): each call one request (`send`),
 * its input marshalled and its answer unmarshalled.
 */
export function dynamoDb(options: DynamoDbOptions = {}): DynamoDb {
  const endpoint = endpointFor(options);
  const transport: Transport =
    options.transport ?? ((operation, body, signal) => attempt(endpoint, operation, body, signal));
  const slots = new Slots();
  function call(operation: string, input: object, signal: AbortSignal, copies?: Copies) {
    return send(transport, slots, operation, input, signal, copies);
  }
  return {
    async getItem(input, signal) {
      const { Item } = await call('GetItem', input, signal);
      return Item === undefined ? undefined : unmarshall(Item as Record<string, never>);
    },
    async query(input, signal) {
      const page = await call('Query', input, signal);
      return {
        items: ((page.Items ?? []) as Record<string, never>[]).map((item) => unmarshall(item)),
        lastKey:
          page.LastEvaluatedKey === undefined ? undefined : unmarshall(page.LastEvaluatedKey as Record<string, never>),
      };
    },
    async putItem(input, signal) {
      await call('PutItem', input, signal);
    },
    async updateItem(input, signal) {
      await call('UpdateItem', input, signal);
    },
    async deleteItem(input, signal) {
      await call('DeleteItem', input, signal);
    },
    async transactWriteItems(actions, token, signal, copies) {
      const TransactItems = actions.map((action) =>
        Object.fromEntries(Object.entries(action).map(([kind, inner]) => [kind, marshalled(inner as object)])),
      );
      await call('TransactWriteItems', { TransactItems, ClientRequestToken: token }, signal, copies);
    },
  };
}
