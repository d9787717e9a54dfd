import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { Slots, pause } from '../abort';
import { credentialSource, type Credentials } from '../aws/credentials';
import { dynamoDbEndpoint } from '../aws/endpoint';
import { RequestFailure, httpsTransport, type Service, type Transport } from '../aws/https';
import { log } from '../log';
import { REAL_RUNTIME, type Runtime } from '../runtime';
import { Copies, copyFate, type CopyFate, type Fate } from './outcome';

/**
 * How the store talks to DynamoDB, in one file: the operations it uses, by DynamoDB's parameter names with plain values
 * (items, keys, expression values); retries; each copy's fate (outcome.ts); requests in flight; `debug` logs. A copy
 * goes by a Transport, by default lib/aws/https.ts (SigV4 by `aws4` over node:https, `@aws-sdk/util-dynamodb` to
 * marshal): ~40 KB at a cold start against the AWS SDK's 415 KB (docs/performance.md). As the SDK: its standard backoff
 * (three attempts against 500s and timeouts, throttles till the deadline), one body for every copy (and token).
 */

/** Requests in flight at once, and sockets in the client's pool: the same number (see `DynamoDb`). */
export const MAX_IN_FLIGHT = 50;
/** Attempts of one request against 500s and timeouts, and against a copy in progress. */
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
  readonly ConsistentRead: boolean;
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

export interface DynamoDbOptions {
  /** DynamoDB Local's address, say; by default the region's DynamoDB. */
  readonly endpoint?: string | undefined;
  /** By default AWS_REGION (Lambda sets it), AWS_DEFAULT_REGION, or us-east-1. */
  readonly region?: string | undefined;
  /** Fixed credentials, or where to get them; by default `credentialsFrom(process.env)`. */
  readonly credentials?: Credentials | (() => Promise<Credentials>);
  /** What sends one copy of a request: by default over HTTPS to `endpoint`; the simulator's own in tests. */
  readonly transport?: Transport;
  /** The clock and the random source of the pauses between copies: the real ones by default. */
  readonly runtime?: Runtime;
}

/** Past a partition's throughput: not applied, may pass soon. SDK: 3 tries in ~1 s; the store: to the deadline. */
const THROTTLES = ['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded'];
const MAX_RETRY_DELAY_MS = 20_000;

/**
 * The retries of a throttle, or of a plain write meeting a transaction in progress: to the deadline, as a count of
 * pauses it comes long before (each pause up to 1 s or 320 ms, drawn at random). Past it, the last failure is the answer.
 */
const UNTIL_THE_DEADLINE = 1_000;

/**
 * The SDK's standard mode: a random pause (full jitter) up to `baseMs`, doubling to `maxMs`, `times` times; a throttle,
 * or a plain write meeting a transaction in progress (the SDK does not retry it), to the deadline: neither was applied.
 */
const RETRIES = {
  throttle: { baseMs: 500, maxMs: 1_000, times: UNTIL_THE_DEADLINE },
  conflict: { baseMs: 10, maxMs: 320, times: UNTIL_THE_DEADLINE },
  /** A copy with the same token still in progress, or too many control-plane requests. */
  busy: { baseMs: 500, maxMs: MAX_RETRY_DELAY_MS, times: MAX_ATTEMPTS - 1 },
  transient: { baseMs: 100, maxMs: MAX_RETRY_DELAY_MS, times: MAX_ATTEMPTS - 1 },
};
/** Every kind's retries: a request's copies are at most one more. */
const MAX_RETRIES = Object.values(RETRIES).reduce((sum, { times }) => sum + times, 0);
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

/** Where requests go and are signed: with no endpoint, the SDKs' shared settings' or region's (lib/aws/endpoint.ts). */
function dynamoDbService({ endpoint, region, credentials }: DynamoDbOptions): Service {
  const resolvedRegion = region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const { url, signingRegion } = dynamoDbEndpoint(resolvedRegion, endpoint, process.env);
  return {
    url,
    region: signingRegion,
    name: 'dynamodb',
    target: 'DynamoDB_20120810',
    credentials: credentialSource(credentials),
    maxSockets: MAX_IN_FLIGHT,
  };
}

/** A copy's answer, or its DynamoDbError, its fate added to `copies`; aborted, it counts as on its way. */
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
    if (signal.aborted || !(error instanceof RequestFailure)) {
      copies.add('unanswered');
      throw error;
    }
    const copy = error.mayHaveGone ? 'unanswered' : 'not applied';
    copies.add(copy);
    return { failure: new DynamoDbError(error.name, error.message, { copy, cause: error }), status: undefined };
  }
}

/**
 * One request: a slot among MAX_IN_FLIGHT, then copies of one body, RETRIES' backoff between, till an answer is final
 * or the signal aborts. `copies` (a transaction's spans requests) gets each copy's fate; a failure has the request's.
 */
async function send(
  { transport, slots, runtime }: { transport: Transport; slots: Slots; runtime: Runtime },
  operation: string,
  input: object,
  signal: AbortSignal,
  copies = new Copies(),
): Promise<Record<string, unknown>> {
  const body = JSON.stringify(marshalled(input));
  await slots.acquire(signal);
  const started = runtime.now();
  const failures = { throttle: 0, conflict: 0, busy: 0, transient: 0 };
  try {
    // Each failure counts against its kind's retries, and the last one past them is thrown: at most this many copies.
    for (let copy = 0; copy <= MAX_RETRIES; copy++) {
      const sent = await sendCopy(transport, operation, body, signal, copies);
      if ('answer' in sent) {
        log('debug', { message: 'dynamodb', operation, attempts: copies.sent, durationMs: runtime.now() - started });
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
        log('debug', { message: 'dynamodb', operation, error: failure.name, durationMs: runtime.now() - started });
        throw failure;
      }
      const { baseMs, maxMs } = RETRIES[kind];
      await pause(runtime.random() * Math.min(maxMs, baseMs * 2 ** (failures[kind] - 1)), signal, runtime);
    }
    throw new Error(`a ${operation} outran its ${MAX_RETRIES} retries`);
  } finally {
    slots.release();
  }
}

/** The store's DynamoDB: each call one request (`send`), its input marshalled and its answer unmarshalled. */
export function dynamoDb(options: DynamoDbOptions = {}): DynamoDb {
  const transport = options.transport ?? httpsTransport(dynamoDbService(options));
  const sender = { transport, slots: new Slots(MAX_IN_FLIGHT), runtime: options.runtime ?? REAL_RUNTIME };
  function call(operation: string, input: object, signal: AbortSignal, copies?: Copies) {
    return send(sender, operation, input, signal, copies);
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
    // A write's answer holds nothing the store reads.
    putItem: (input, signal) => call('PutItem', input, signal).then(() => undefined),
    updateItem: (input, signal) => call('UpdateItem', input, signal).then(() => undefined),
    deleteItem: (input, signal) => call('DeleteItem', input, signal).then(() => undefined),
    async transactWriteItems(actions, token, signal, copies) {
      const TransactItems = actions.map((action) =>
        Object.fromEntries(Object.entries(action).map(([kind, inner]) => [kind, marshalled(inner as object)])),
      );
      await call('TransactWriteItems', { TransactItems, ClientRequestToken: token }, signal, copies);
    },
  };
}
