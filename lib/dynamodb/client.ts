import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { log } from '../log';

/**
 * How the store talks to DynamoDB, in one file: the operations it uses, with DynamoDB's own
 * parameter names and plain values (items, keys and expression values as JavaScript objects);
 * each attempt's timeouts and how many attempts; how many requests are in flight at once; which
 * refusals are sent again until the request's deadline; what is logged at `debug`. Nothing else
 * in the store knows what sends the requests.
 */

/** Requests in flight at once, and sockets in the client's pool: the same number (see `DynamoDb`). */
export const MAX_IN_FLIGHT = 50;
/** How long one attempt may take to connect, and to be answered once connected. */
export const CONNECT_TIMEOUT_MS = 1_000;
export const REQUEST_TIMEOUT_MS = 2_000;
/** Attempts of one request: its first and two retries, each with the timeouts above. */
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

/** One action of a transaction. */
export type TransactItem =
  { readonly Put: PutInput } | { readonly Update: UpdateInput } | { readonly Delete: DeleteInput };

/** Why DynamoDB cancelled one action of a transaction, and the item it found when asked (ALL_OLD). */
export interface CancellationReason {
  readonly code: string;
  readonly item?: Item;
}

/** A request DynamoDB refused, or that got no answer: `name` is DynamoDB's code (`TransactionCanceledException`…). */
export class DynamoDbError extends Error {
  /** How many attempts were made, answered or not. */
  readonly attempts: number;
  /** A cancelled transaction's reasons, one an action, in the order the actions went in. */
  readonly cancellationReasons: readonly CancellationReason[] | undefined;

  constructor(
    name: string,
    message: string,
    { attempts, reasons, cause }: { attempts: number; reasons?: readonly CancellationReason[]; cause?: unknown },
  ) {
    super(message, { cause });
    this.name = name;
    this.attempts = attempts;
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
  /** One transaction; every attempt of it carries `token`, its ClientRequestToken. */
  transactWriteItems(actions: readonly TransactItem[], token: string, signal: AbortSignal): Promise<void>;
}

export interface DynamoDbOptions {
  /** DynamoDB Local's address, say; by default the region's DynamoDB. */
  readonly endpoint?: string | undefined;
  readonly region?: string;
  /** Fixed credentials; by default the SDK's chain (the environment, a profile, SSO, the function's role). */
  readonly credentials?: DynamoDBClient['config']['credentials'] | { accessKeyId: string; secretAccessKey: string };
}

/**
 * Refusals of a request that DynamoDB did not apply, and that may well go through a moment later:
 * a plain write that met a transaction in progress on its item (which the SDK does not retry),
 * and throughput past a partition's (which the SDK retries three times, in about a second, while
 * a request may wait for its deadline). Sent again here, after a pause, until the deadline.
 */
const NOT_APPLIED = [
  'TransactionConflictException',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
];

/**
 * `work`'s result, or the signal's reason if the signal aborts first. The listener goes when
 * either settles: a request that waits many times on one signal does not pile listeners on it.
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const stop = () => {
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => {
      signal.removeEventListener('abort', stop);
    });
  });
}

/** A pause of `ms`, cut short with the signal's reason if the signal aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return unlessAborted(new Promise<void>((resolve) => setTimeout(resolve, ms)), signal);
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

/** An SDK error as the store reads it: DynamoDB's code, the attempts made, a cancellation's reasons. */
function asDynamoDbError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { $metadata, CancellationReasons } = error as {
    $metadata?: { attempts?: number };
    CancellationReasons?: { Code?: string; Item?: Parameters<typeof unmarshall>[0] }[];
  };
  const reasons = CancellationReasons?.map(({ Code, Item }) => ({
    code: Code ?? 'None',
    // The document client leaves the items of an error as DynamoDB sent them.
    ...(Item && { item: unmarshall(Item) }),
  }));
  return new DynamoDbError(error.name, error.message, {
    attempts: $metadata?.attempts ?? 1,
    ...(reasons && { reasons }),
    cause: error,
  });
}

/**
 * The store's DynamoDB, through the AWS SDK: three attempts with its standard backoff, each with
 * a 1 s connect and a 2 s answer timeout (without throwOnRequestTimeout the SDK only warns when the
 * answer is late, and goes on waiting), kept-alive sockets, at most MAX_IN_FLIGHT at once.
 */
export function dynamoDb({ endpoint, region, credentials }: DynamoDbOptions = {}): DynamoDb {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      maxAttempts: MAX_ATTEMPTS,
      retryMode: 'standard',
      requestHandler: {
        connectionTimeout: CONNECT_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
        throwOnRequestTimeout: true,
        httpAgent: { keepAlive: true, maxSockets: MAX_IN_FLIGHT },
        httpsAgent: { keepAlive: true, maxSockets: MAX_IN_FLIGHT },
      },
      ...(endpoint === undefined ? {} : { endpoint }),
      ...(region === undefined ? {} : { region }),
      ...(credentials === undefined ? {} : { credentials }),
    }),
  );
  const slots = new Slots();

  /** One request: a slot, then the SDK's attempts, and again after a refusal of NOT_APPLIED, until the signal aborts. */
  async function send<T>(
    operation: string,
    signal: AbortSignal,
    request: (abortSignal: AbortSignal) => Promise<T & { $metadata: { attempts?: number } }>,
  ): Promise<T> {
    await slots.acquire(signal);
    const started = Date.now();
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          const output = await unlessAborted(request(signal), signal);
          log('debug', {
            message: 'dynamodb',
            operation,
            attempts: output.$metadata.attempts,
            durationMs: Date.now() - started,
          });
          return output;
        } catch (error) {
          if (signal.aborted) throw signal.reason;
          const failure = asDynamoDbError(error);
          log('debug', {
            message: 'dynamodb',
            operation,
            error: failure instanceof Error ? failure.name : String(failure),
            durationMs: Date.now() - started,
          });
          if (!(failure instanceof Error) || !NOT_APPLIED.includes(failure.name)) throw failure;
          await backoff(signal, attempt);
        }
      }
    } finally {
      slots.release();
    }
  }

  return {
    async getItem(input, signal) {
      const { Item } = await send('GetItem', signal, (abortSignal) =>
        client.send(new GetCommand(input), { abortSignal }),
      );
      return Item;
    },
    async query(input, signal) {
      const page = await send('Query', signal, (abortSignal) => client.send(new QueryCommand(input), { abortSignal }));
      return { items: page.Items ?? [], lastKey: page.LastEvaluatedKey };
    },
    async putItem(input, signal) {
      await send('PutItem', signal, (abortSignal) => client.send(new PutCommand(input), { abortSignal }));
    },
    async updateItem(input, signal) {
      await send('UpdateItem', signal, (abortSignal) => client.send(new UpdateCommand(input), { abortSignal }));
    },
    async deleteItem(input, signal) {
      await send('DeleteItem', signal, (abortSignal) => client.send(new DeleteCommand(input), { abortSignal }));
    },
    async transactWriteItems(actions, token, signal) {
      const input = { TransactItems: [...actions], ClientRequestToken: token };
      await send('TransactWriteItems', signal, (abortSignal) =>
        client.send(new TransactWriteCommand(input), { abortSignal }),
      );
    },
  };
}
