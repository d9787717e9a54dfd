import { Capacity, type CapacityOptions } from '../aws-dynamodb/capacity';
import { PUT_ITEM, readTime, serviceTime, timeAt } from '../aws-dynamodb/latency';
import { parseRequest, type DynamoDbRequest } from '../aws-dynamodb/requests';
import type { Answer } from './answers';
import type { SimulatedDynamoDb } from './dynamodb';
import type { EventClock } from './event-clock';

/**
 * DynamoDB as AWS serves it, in simulated time: the simulated DynamoDB (dynamodb.ts) decides what
 * each request does, and this decides when, and whether it runs at all, as the AWS profile
 * (harness/aws-dynamodb/dynamodb.ts) does over DynamoDB Local:
 *
 * - a request past its partition's throughput is refused (capacity.ts's buckets, on the
 *   simulated clock), before DynamoDB takes it in, so a refusal is never charged;
 * - a request taken in is in progress for the whole of a service time drawn from latency.ts's
 *   distributions (the simulated DynamoDB's `begin`, then its `finish` once that time has passed):
 *   the span in which another transaction on one of its items is cancelled with
 *   TransactionConflict, the widest reading of "ongoing", as conflicts.ts takes it; a Query's
 *   answer then takes latency.ts's time for the bytes it read;
 * - a refusal (throughput, a conflict, a token in progress) takes a round trip to one storage
 *   node: a PutItem's time.
 *
 * The drawn times are those a function sees (latency.ts), so they include the network: no leg is
 * added. Every draw comes from `random`, the run's own seeded source.
 */

/** What happened to the requests, by partition key value (`COUNTER`, `TODO`…), as the bench reports it. */
export interface TimedStats {
  requests: number;
  /** Requests by operation. */
  operations: Record<string, number>;
  /** Items in the transactions taken in, all together: over `operations.TransactWriteItems`, a transaction's size. */
  transactionItems: number;
  /**
   * Requests refused for throughput, by the partition key value that was short and by what it was
   * short of: `COUNTER write`, `TODO read`.
   */
  throttled: Record<string, number>;
  /** Cancelled with TransactionConflict or refused with TransactionConflictException, by partition key value. */
  conflicts: Record<string, number>;
  /** TransactionInProgressException: a copy of a transaction whose token is in progress. */
  inProgress: number;
}

export class TimedDynamoDb {
  readonly capacity: Capacity;
  readonly stats: TimedStats = {
    requests: 0,
    operations: {},
    transactionItems: 0,
    throttled: {},
    conflicts: {},
    inProgress: 0,
  };

  constructor(
    readonly dynamodb: SimulatedDynamoDb,
    private readonly clock: EventClock,
    private readonly random: () => number,
    capacity: Omit<CapacityOptions, 'now'> = {},
    /**
     * Added to every request's service time: what the fleet's machine adds to AWS's times
     * (DynamoDB Local's own work and the proxies on the way), to check the model against the
     * fleet (bench/sections/scale-check.ts). Nothing on AWS: 0.
     */
    private readonly addedMs = 0,
  ) {
    this.capacity = new Capacity({ ...capacity, now: clock.now });
  }

  /** Serves one request: `reply` is called with its answer when DynamoDB would give it. */
  serve(operation: string, body: string, reply: (answer: Answer) => void): void {
    this.stats.requests++;
    this.stats.operations[operation] = (this.stats.operations[operation] ?? 0) + 1;
    const request = parseRequest(operation, body);
    const throttled = this.capacity.refusal(request);
    if (throttled !== undefined) {
      for (const short of shortOf(request, throttled.body))
        this.stats.throttled[short] = (this.stats.throttled[short] ?? 0) + 1;
      this.#refuse({ status: throttled.status, body: JSON.stringify(throttled.body) }, reply);
      return;
    }
    const begun = this.dynamodb.begin(operation, body);
    if ('answer' in begun) {
      this.#countRefusal(request, begun.answer);
      this.#refuse(begun.answer, reply);
      return;
    }
    this.capacity.admit(request);
    if (request.transaction) this.stats.transactionItems += request.accesses.length;
    this.clock.after(serviceTime(request, this.random) + this.addedMs, () => {
      const answered = begun.inProgress.finish();
      if (answered.status === 200 && (operation === 'Query' || operation === 'GetItem')) {
        this.capacity.charged(request, JSON.parse(answered.body) as Parameters<Capacity['charged']>[1]);
      }
      const reading = operation === 'Query' ? readTime(answered.body.length) : 0;
      this.clock.after(reading, () => {
        reply(answered);
      });
    });
  }

  #refuse(answer: Answer, reply: (answer: Answer) => void): void {
    this.clock.after(timeAt(PUT_ITEM, this.random()), () => {
      reply(answer);
    });
  }

  #countRefusal(request: DynamoDbRequest, answer: Answer): void {
    const { __type, CancellationReasons } = JSON.parse(answer.body) as {
      __type?: string;
      CancellationReasons?: { Code: string }[];
    };
    if (__type?.endsWith('TransactionInProgressException')) this.stats.inProgress++;
    const conflicted = __type?.endsWith('TransactionConflictException')
      ? request.accesses
      : request.accesses.filter((_, i) => CancellationReasons?.[i]?.Code === 'TransactionConflict');
    for (const pk of new Set(conflicted.map(({ partition }) => partitionKey(partition)))) {
      this.stats.conflicts[pk] = (this.stats.conflicts[pk] ?? 0) + 1;
    }
  }
}

/**
 * What a refused request was short of: a transaction's ThrottlingError reasons name its items (in
 * the order capacity.ts checked them: its items, then a Query's partition); any other request
 * touches one partition.
 */
function shortOf(request: DynamoDbRequest, body: unknown): Set<string> {
  const reasons = (body as { CancellationReasons?: { Code: string }[] }).CancellationReasons;
  const accesses = request.accesses.filter((_, i) => reasons === undefined || reasons[i]?.Code === 'ThrottlingError');
  const short = accesses.map(({ partition, write }) => `${partitionKey(partition)} ${write ? 'write' : 'read'}`);
  if (request.queried !== undefined && reasons === undefined) short.push(`${partitionKey(request.queried)} read`);
  return new Set(short);
}

/** `todos/S:COUNTER` (requests.ts's partition: table and typed value) as `COUNTER`. */
function partitionKey(partition: string): string {
  return partition.slice(partition.indexOf('/') + 1).replace(/^[A-Z]+:/, '');
}
