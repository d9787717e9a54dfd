import { FINE, THROTTLED_REASON, throughputExceeded, transactionCanceled, type Answer } from './answers';
import { answeredItems, itemSize, type Access, type AttributeMap, type DynamoDbRequest } from './requests';

/**
 * Throughput per partition key value, as DynamoDB serves it and DynamoDB Local does not: each
 * partition key value takes at most 3,000 read units and 1,000 write units a second ("Best
 * practices for designing and using partition keys effectively", DynamoDB Developer Guide).
 *
 * - A read unit is 4 KB read (a strongly consistent read counts in full, an eventually
 *   consistent one half); a Query counts every item it read, before any projection, rounded up
 *   once per request. A write unit is 1 KB written, rounded up per item; an update or delete
 *   counts the larger of the item before and after. A transaction counts every item twice
 *   (prepare and commit: "Capacity management for transactions").
 * - Burst: DynamoDB keeps up to 300 s of a table's unused provisioned capacity for bursts, but
 *   never past a partition's maximum; one partition key value at its maximum can spend at most
 *   one second's worth at once. So each partition key value is a token bucket that refills at
 *   its maximum and holds `burstSeconds` of it (1 by default).
 * - Past that: ProvisionedThroughputExceededException (the SDK retries it, with backoff), or, in
 *   a transaction, the cancellation reason ThrottlingError at the item (the SDK does not retry).
 *   A refused request consumes nothing.
 *
 * Sizes: a Put's item is in its request; for an update or delete the bucket uses the item's
 * size as last seen (written or read through here), else 1 KB.
 */

export interface CapacityOptions {
  readonly readUnitsPerSecond?: number;
  readonly writeUnitsPerSecond?: number;
  readonly burstSeconds?: number;
  /** The clock the buckets refill by, in ms: the machine's by default; the simulator's in simulated time. */
  readonly now?: () => number;
}

export interface CapacityStats {
  readUnits: number;
  writeUnits: number;
  /** Requests refused for throughput, by operation. */
  throttled: Record<string, number>;
}

const READ_UNIT_BYTES = 4096;
const WRITE_UNIT_BYTES = 1024;

/** A token bucket: `perSecond` tokens a second, up to `capacity`, on the clock `now` (ms). */
export class Bucket {
  #tokens: number;
  #at: number;

  constructor(
    readonly perSecond: number,
    readonly capacity: number,
    private readonly now: () => number,
  ) {
    this.#tokens = capacity;
    this.#at = now();
  }

  /** The tokens there are now: what has refilled since the last look, within the bucket's capacity. */
  available(): number {
    const now = this.now();
    this.#tokens = Math.min(this.capacity, this.#tokens + ((now - this.#at) / 1000) * this.perSecond);
    this.#at = now;
    return this.#tokens;
  }

  take(units: number): void {
    this.available();
    this.#tokens -= units;
  }
}

export class Capacity {
  readonly #reads = new Map<string, Bucket>();
  readonly #writes = new Map<string, Bucket>();
  /** Each item's size as last seen, by item (Access.item). */
  readonly #sizes = new Map<string, number>();
  readonly #readPerSecond: number;
  readonly #writePerSecond: number;
  readonly #burstSeconds: number;
  readonly #now: () => number;
  readonly stats: CapacityStats = { readUnits: 0, writeUnits: 0, throttled: {} };

  constructor({
    readUnitsPerSecond = 3_000,
    writeUnitsPerSecond = 1_000,
    burstSeconds = 1,
    now = () => performance.now(),
  }: CapacityOptions = {}) {
    this.#readPerSecond = readUnitsPerSecond;
    this.#writePerSecond = writeUnitsPerSecond;
    this.#burstSeconds = burstSeconds;
    this.#now = now;
  }

  /**
   * Charges what `request` costs before it runs: its writes, and the reads of its items. A
   * Query's cost is known only once it has read (`charged`): it runs while its partition has any
   * read capacity left. Returns the answer that refuses it when a partition has too little.
   */
  admit(request: DynamoDbRequest): Answer | undefined {
    const refused = this.refusal(request);
    if (refused !== undefined) return refused;
    for (const { access, units } of this.#costs(request)) {
      this.#bucket(access).take(units);
      if (access.write) this.stats.writeUnits += units;
      else this.stats.readUnits += units;
    }
    for (const access of request.accesses) this.#remember(access);
    return undefined;
  }

  /**
   * The answer that refuses `request` for throughput, if a partition it touches has too little
   * now, charging nothing: the simulator asks before its DynamoDB takes a request in (a request
   * refused for a conflict must not have been charged), and admits it once taken in.
   */
  refusal(request: DynamoDbRequest): Answer | undefined {
    const short = this.#costs(request).map(({ access, units }) => this.#bucket(access).available() < units);
    if (request.queried !== undefined && this.#readBucket(request.queried).available() <= 0) short.push(true);
    if (!short.some(Boolean)) return undefined;
    this.stats.throttled[request.operation] = (this.stats.throttled[request.operation] ?? 0) + 1;
    return request.transaction
      ? transactionCanceled(short.map((throttled) => (throttled ? THROTTLED_REASON : FINE)))
      : throughputExceeded;
  }

  #costs(request: DynamoDbRequest): { access: Access; units: number }[] {
    const factor = request.transaction ? 2 : 1;
    return request.accesses.map((access) => ({ access, units: factor * this.#cost(access, request) }));
  }

  /**
   * Charges what a request read, once answered: a Query's items, or a GetItem's item (its size now
   * known). Returns the read units a Query was charged (a GetItem's were, when admitted).
   */
  charged(request: DynamoDbRequest, answer: { Item?: AttributeMap; Items?: AttributeMap[] }): number {
    if (request.queried === undefined) {
      const [read] = request.accesses;
      if (request.operation === 'GetItem' && read !== undefined && answer.Item !== undefined) {
        this.#sizes.set(read.item, itemSize(answer.Item));
      }
      return 0;
    }
    const items = answeredItems(request.queried, answer.Items ?? []);
    // A projection leaves attributes out of the answer, not out of what DynamoDB read; an answer
    // with whole items tells each one's size as it is.
    if (!request.projected) for (const { item, size } of items) this.#sizes.set(item, size);
    const bytes = items.reduce((sum, { item, size }) => sum + Math.max(size, this.#sizes.get(item) ?? 0), 0);
    const units = Math.max(1, Math.ceil(bytes / READ_UNIT_BYTES)) * (request.consistentRead ? 1 : 0.5);
    this.#readBucket(request.queried).take(units);
    this.stats.readUnits += units;
    return units;
  }

  #cost(access: Access, request: DynamoDbRequest): number {
    const known = this.#sizes.get(access.item);
    if (!access.write) {
      const units = Math.max(1, Math.ceil((known ?? 1) / READ_UNIT_BYTES));
      return request.consistentRead ? units : units / 2;
    }
    // An update or delete counts the larger of the item before and after.
    const size = Math.max(known ?? 0, this.#sizeAfter(access) ?? 0);
    return Math.max(1, Math.ceil(size / WRITE_UNIT_BYTES));
  }

  /**
   * The item's size after a write: a Put's item; for an update, at least its new values (an
   * update sets attributes, it does not add their size to what was there); none after a delete.
   */
  #sizeAfter(access: Access): number | undefined {
    if (access.putItem) return itemSize(access.putItem);
    if (access.updateValues) return Math.max(this.#sizes.get(access.item) ?? 0, itemSize(access.updateValues));
    return undefined;
  }

  #remember(access: Access): void {
    if (!access.write) return;
    const after = this.#sizeAfter(access);
    if (after === undefined) this.#sizes.delete(access.item);
    else this.#sizes.set(access.item, after);
  }

  #bucket(access: Access): Bucket {
    return access.write ? this.#writeBucket(access.partition) : this.#readBucket(access.partition);
  }

  #readBucket(partition: string): Bucket {
    return bucketOf(this.#reads, partition, this.#readPerSecond, this.#burstSeconds, this.#now);
  }

  #writeBucket(partition: string): Bucket {
    return bucketOf(this.#writes, partition, this.#writePerSecond, this.#burstSeconds, this.#now);
  }
}

function bucketOf(
  buckets: Map<string, Bucket>,
  partition: string,
  perSecond: number,
  burstSeconds: number,
  now: () => number,
): Bucket {
  let bucket = buckets.get(partition);
  if (bucket === undefined) {
    bucket = new Bucket(perSecond, perSecond * burstSeconds, now);
    buckets.set(partition, bucket);
  }
  return bucket;
}
