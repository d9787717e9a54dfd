import { setTimeout as sleep } from 'node:timers/promises';
import type { Match, Upstream, UpstreamAnswer, UpstreamRequest } from '../fault-proxy';
import { httpUpstream } from '../fault-proxy';
import type { Answer } from './answers';
import { internalServerError } from './answers';
import { Capacity, type CapacityOptions, type CapacityStats } from './capacity';
import { Conflicts, type ConflictStats } from './conflicts';
import { InternalErrors, type InternalErrorStats } from './internal-errors';
import { PUT_ITEM, readTime, serviceTime, timeAt } from './latency';
import { parseRequest, type AttributeMap } from './requests';

/**
 * DynamoDB as AWS runs it, over DynamoDB Local: what the real service does under load and Local
 * does not. Each behaviour has its own file, and this one composes them in the order the service
 * meets a request:
 *
 * 1. a 500 before the request is applied, now and then (internal-errors.ts);
 * 2. a transaction conflict with a request in progress on one of its items (conflicts.ts);
 * 3. too little throughput left in one of its partitions (capacity.ts);
 * 4. its service time (latency.ts), during which it is in progress; then DynamoDB Local applies
 *    it and answers;
 * 5. a 500 after it was applied, now and then.
 *
 * It is an upstream of the fault proxy (harness/fault-proxy.ts), which stands for the network:
 * the proxy's faults happen on the way to and from this DynamoDB. Several proxies (containers)
 * can share one. The fleet (harness/fleet.ts) and its bench use it by default.
 */

export interface AwsDynamoDbOptions {
  /** Draw each request's service time from the measured distributions (default); off, no delay. */
  readonly latency?: boolean;
  /** How many requests get a 500 (internal-errors.ts), and the dice (Math.random): a test may load them. */
  readonly internalErrors?: { readonly rate?: number; readonly random?: () => number };
  readonly capacity?: CapacityOptions;
}

export interface AwsDynamoDbStats {
  /** Data-plane requests that reached DynamoDB, by operation. */
  readonly requests: Record<string, number>;
  readonly conflicts: ConflictStats;
  readonly capacity: CapacityStats;
  readonly internalErrors: InternalErrorStats;
  /**
   * Queries answered, and the read units they were charged, by partition key value and Limit
   * (`COUNTER, Limit 2`): what one kind of Query costs, a look at the queue of POSTs, say.
   */
  readonly queries: Record<string, { requests: number; readUnits: number }>;
}

export interface AwsDynamoDb extends Upstream {
  readonly stats: AwsDynamoDbStats;
  /**
   * Keeps the next `times` requests that match in progress, holding their items, until `until`
   * settles: a transaction that DynamoDB takes long over, for a test to place another against.
   */
  slow(match: Match, until: Promise<unknown>, times?: number): void;
  /** Resolves once a request that `match`es is in progress here. */
  inProgress(match: Match): Promise<void>;
}

/** Operations on items; the others (CreateTable, DescribeTable…) go straight to DynamoDB Local. */
const DATA_PLANE = [
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'TransactWriteItems',
  'TransactGetItems',
];

function answer({ status, body }: Answer): UpstreamAnswer {
  return {
    status,
    headers: { 'content-type': 'application/x-amz-json-1.0' },
    body: Buffer.from(JSON.stringify(body)),
  };
}

export function awsDynamoDb(localEndpoint: string, options: AwsDynamoDbOptions = {}): AwsDynamoDb {
  const local = httpUpstream(localEndpoint);
  const conflicts = new Conflicts();
  const capacity = new Capacity(options.capacity);
  const internalErrors = new InternalErrors(options.internalErrors?.rate, options.internalErrors?.random);
  const requests: Record<string, number> = {};
  const queries: AwsDynamoDbStats['queries'] = {};
  const slowRules: { match: Match; until: Promise<unknown>; times: number }[] = [];
  const watchers: { match: Match; resolve: () => void }[] = [];
  const withLatency = options.latency ?? true;
  function pause(ms: number) {
    return withLatency ? sleep(ms) : Promise.resolve();
  }
  /** A request refused before it ran costs a round trip to one storage node. */
  async function refusal(refused: Answer) {
    await pause(timeAt(PUT_ITEM, Math.random()));
    return answer(refused);
  }

  async function send(request: UpstreamRequest): Promise<UpstreamAnswer> {
    const { operation } = request.seen;
    if (!DATA_PLANE.includes(operation)) return local.send(request);
    requests[operation] = (requests[operation] ?? 0) + 1;
    const parsed = parseRequest(operation, request.seen.body);
    const failure = internalErrors.draw();
    if (failure === 'before') return refusal(internalServerError);
    const admission = conflicts.admit(parsed);
    if ('refused' in admission) return refusal(admission.refused);
    try {
      const throttled = capacity.admit(parsed);
      if (throttled !== undefined) return await refusal(throttled);
      for (const watcher of watchers.filter(({ match }) => match(request.seen))) {
        watchers.splice(watchers.indexOf(watcher), 1);
        watcher.resolve();
      }
      const slowRule = slowRules.find(({ match, times }) => times > 0 && match(request.seen));
      if (slowRule) slowRule.times--;
      await Promise.all([pause(serviceTime(parsed)), slowRule?.until.catch(() => undefined)]);
      const applied = await local.send(request);
      if (operation === 'Query' || operation === 'GetItem') {
        const read = JSON.parse(applied.body.toString('utf8')) as { Item?: AttributeMap; Items?: AttributeMap[] };
        const units = capacity.charged(parsed, read);
        if (operation === 'Query') {
          const { Limit } = JSON.parse(request.seen.body) as { Limit?: number };
          // By the partition key value alone, without its table and type (`table/S:COUNTER`).
          const partition = (parsed.queried ?? '?').replace(/^.*\/[A-Z]+:/, '');
          const kind = (queries[`${partition}, Limit ${Limit ?? 'none'}`] ??= {
            requests: 0,
            readUnits: 0,
          });
          kind.requests++;
          kind.readUnits += units;
          await pause(readTime(applied.body.length));
        }
      }
      return failure === 'after' ? answer(internalServerError) : applied;
    } finally {
      admission.release();
    }
  }

  return {
    send,
    stats: {
      requests,
      conflicts: conflicts.stats,
      capacity: capacity.stats,
      internalErrors: internalErrors.stats,
      queries,
    },
    slow(match, until, times = 1) {
      slowRules.push({ match, until, times });
    },
    inProgress(match) {
      return new Promise((resolve) => watchers.push({ match, resolve }));
    },
    close() {
      local.close();
    },
  };
}
