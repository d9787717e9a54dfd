import { afterEach, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { awsDynamoDb, type AwsDynamoDb, type AwsDynamoDbOptions } from '../../harness/aws-dynamodb/dynamodb';
import { both, mentions, operation, startFaultProxy, type FaultProxy } from '../../harness/fault-proxy';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../support/dynamodb-local-process';
import { freshTable, testDynamoDbEndpoint } from '../support/stores';

/**
 * DynamoDB as AWS runs it (harness/aws-dynamodb/): each behaviour that DynamoDB Local lacks,
 * shown against the proxy with the SDK, as the store's client meets it. A client that makes one
 * attempt shows what DynamoDB answered; the store's client (three attempts) shows what the SDK
 * then does with it.
 */

let proxies: FaultProxy[] = [];
let services: AwsDynamoDb[] = [];
afterEach(async () => {
  await Promise.all(proxies.map((proxy) => proxy.close()));
  for (const service of services) service.close();
  proxies = [];
  services = [];
});

/** DynamoDB as AWS runs it, without the delays and 500s unless asked, behind a proxy of its own. */
async function aws(options: AwsDynamoDbOptions = {}) {
  const service = awsDynamoDb(testDynamoDbEndpoint(), { latency: false, internalErrors: { rate: 0 }, ...options });
  services.push(service);
  const proxy = await startFaultProxy(service);
  proxies.push(proxy);
  const table = await freshTable();
  const client = (maxAttempts: number) =>
    DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: proxy.endpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
        maxAttempts,
      }),
    );
  return { service, proxy, table, once: client(1), withRetries: client(3) };
}

/** The name of the error a promise rejects with, or 'ok'. */
async function outcome(work: Promise<unknown>): Promise<string> {
  try {
    await work;
    return 'ok';
  } catch (error) {
    return error instanceof Error ? error.name : String(error);
  }
}

/** Cancellation reasons, by code, of a TransactionCanceledException. */
async function reasons(work: Promise<unknown>): Promise<string[]> {
  try {
    await work;
    return [];
  } catch (error) {
    return ((error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map(
      ({ Code }) => Code ?? '',
    );
  }
}

const item = (table: string, pk: string, id: number, extra: Record<string, unknown> = {}) => ({
  TableName: table,
  Item: { pk, id, ...extra },
});

/** Holds the next request that mentions `text` in progress at DynamoDB until `release()`. */
function slowed(service: AwsDynamoDb, text: string) {
  let release: () => void = () => undefined;
  service.slow(mentions(text), new Promise<void>((resolve) => (release = resolve)));
  return {
    inProgress: service.inProgress(mentions(text)),
    release: () => {
      release();
    },
  };
}

/** A transaction that adds one to item A/1's `n`: applied twice, it would count two. */
function addOne(table: string) {
  return {
    TransactItems: [
      {
        Update: {
          TableName: table,
          Key: { pk: 'A', id: 1 },
          UpdateExpression: 'ADD n :one',
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
    ],
  };
}

describe('transaction conflicts', () => {
  it('cancels a transaction that meets another in progress on one of its items: TransactionConflict at that item, None at the others', async () => {
    const { service, table, once } = await aws();
    const first = slowed(service, 'first');
    const held = once.send(
      new TransactWriteCommand({
        TransactItems: [{ Put: item(table, 'A', 1, { note: 'first' }) }, { Put: item(table, 'B', 1) }],
      }),
    );
    await first.inProgress;
    const meeting = once.send(
      new TransactWriteCommand({
        TransactItems: [{ Put: item(table, 'C', 1) }, { Put: item(table, 'A', 1, { note: 'second' }) }],
      }),
    );
    expect(await reasons(meeting)).toEqual(['None', 'TransactionConflict']);
    first.release();
    expect(await outcome(held)).toBe('ok');
    // Once the first is done, the same transaction goes through.
    expect(
      await outcome(
        once.send(
          new TransactWriteCommand({
            TransactItems: [{ Put: item(table, 'C', 1) }, { Put: item(table, 'A', 1, { note: 'second' }) }],
          }),
        ),
      ),
    ).toBe('ok');
    expect(service.stats.conflicts.transactionsCancelled).toBe(1);
  });

  it('refuses a single write on an item of a transaction in progress with TransactionConflictException, which the SDK does not retry', async () => {
    const { service, proxy, table, withRetries } = await aws();
    const first = slowed(service, 'first');
    const held = withRetries.send(
      new TransactWriteCommand({ TransactItems: [{ Put: item(table, 'A', 1, { note: 'first' }) }] }),
    );
    await first.inProgress;
    const from = proxy.seen.length;
    expect(await outcome(withRetries.send(new PutCommand(item(table, 'A', 1, { note: 'single' }))))).toBe(
      'TransactionConflictException',
    );
    expect(proxy.seen.slice(from).filter(operation('PutItem'))).toHaveLength(1);
    first.release();
    await held;
    const { Item } = await withRetries.send(
      new GetCommand({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }),
    );
    expect(Item?.note).toBe('first');
  });

  it('cancels a transaction that meets a single write in progress on its item', async () => {
    const { service, table, once } = await aws();
    const single = slowed(service, 'single');
    const held = once.send(new PutCommand(item(table, 'A', 1, { note: 'single' })));
    await single.inProgress;
    expect(
      await reasons(once.send(new TransactWriteCommand({ TransactItems: [{ Put: item(table, 'A', 1) }] }))),
    ).toEqual(['TransactionConflict']);
    single.release();
    expect(await outcome(held)).toBe('ok');
  });

  it('lets single writes to one item go one after the other, without conflict', async () => {
    const { service, table, once } = await aws();
    const single = slowed(service, 'single');
    const held = once.send(new PutCommand(item(table, 'A', 1, { note: 'single' })));
    await single.inProgress;
    expect(await outcome(once.send(new PutCommand(item(table, 'A', 1, { note: 'another' }))))).toBe('ok');
    single.release();
    expect(await outcome(held)).toBe('ok');
    expect(service.stats.conflicts.writesRefused).toBe(0);
  });

  it('refuses a transaction sent again with the token of one in progress (TransactionInProgressException); the SDK retries it, and it is applied once', async () => {
    const { service, table, once, withRetries } = await aws();
    const request = { ...addOne(table), ClientRequestToken: 'the-one-token' };
    const first = slowed(service, 'the-one-token');
    const held = once.send(new TransactWriteCommand(request));
    await first.inProgress;
    expect(await outcome(once.send(new TransactWriteCommand(request)))).toBe('TransactionInProgressException');
    const retried = withRetries.send(new TransactWriteCommand(request));
    first.release();
    await held;
    expect(await outcome(retried)).toBe('ok');
    const { Item } = await once.send(
      new GetCommand({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }),
    );
    expect(Item?.n).toBe(1);
    expect(service.stats.conflicts.inProgress).toBeGreaterThanOrEqual(1);
  });

  it('lets reads through a transaction in progress: they see the last committed value', async () => {
    const { service, table, once } = await aws();
    await once.send(new PutCommand(item(table, 'A', 1, { note: 'committed' })));
    const first = slowed(service, 'pending');
    const held = once.send(
      new TransactWriteCommand({ TransactItems: [{ Put: item(table, 'A', 1, { note: 'pending' }) }] }),
    );
    await first.inProgress;
    const { Item } = await once.send(
      new GetCommand({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }),
    );
    expect(Item?.note).toBe('committed');
    first.release();
    await held;
  });
});

describe('capacity per partition key value', () => {
  /** A title of `kb` kilobytes: each write of it costs that many write units. */
  const kilobytes = (kb: number) => 'x'.repeat(kb * 1024 - 100);

  it('throttles a partition key value past its write units a second (ProvisionedThroughputExceededException), while another key value goes on', async () => {
    const { service, table, once } = await aws({ capacity: { writeUnitsPerSecond: 50 } });
    // 40 writes of 10 KB at once: 400 units where the bucket holds 50 and refills 50 a second.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        outcome(once.send(new PutCommand(item(table, 'HOT', i, { title: kilobytes(10) })))),
      ),
    );
    expect(
      answers.filter((answer) => answer === 'ProvisionedThroughputExceededException').length,
    ).toBeGreaterThanOrEqual(20);
    expect(answers.filter((answer) => answer !== 'ok' && answer !== 'ProvisionedThroughputExceededException')).toEqual(
      [],
    );
    expect(await outcome(once.send(new PutCommand(item(table, 'COLD', 1, { title: kilobytes(1) }))))).toBe('ok');
    expect(service.stats.capacity.throttled.PutItem).toBeGreaterThanOrEqual(20);
  });

  it('cancels a transaction whose item is past its partition’s capacity with ThrottlingError at that item', async () => {
    const { table, once } = await aws({ capacity: { writeUnitsPerSecond: 10 } });
    // 6 KB twice (prepare and commit) is 12 units; the bucket holds 10.
    expect(
      await reasons(
        once.send(
          new TransactWriteCommand({
            TransactItems: [{ Put: item(table, 'COLD', 1) }, { Put: item(table, 'HOT', 1, { title: kilobytes(6) }) }],
          }),
        ),
      ),
    ).toEqual(['None', 'ThrottlingError']);
  });

  it('counts 4 KB read units (a strongly consistent read in full, an eventually consistent one half), 1 KB write units, transactions twice, and a Query by what it read before its projection', async () => {
    const { service, table, once } = await aws();
    const units = () => ({ ...service.stats.capacity });
    const before = units();
    await once.send(new PutCommand(item(table, 'A', 1, { title: kilobytes(10) })));
    expect(units().writeUnits - before.writeUnits).toBe(10);
    const afterPut = units();
    await once.send(new GetCommand({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }));
    expect(units().readUnits - afterPut.readUnits).toBe(3);
    const afterGet = units();
    await once.send(new GetCommand({ TableName: table, Key: { pk: 'A', id: 1 } }));
    expect(units().readUnits - afterGet.readUnits).toBe(1.5);
    const beforeTransaction = units();
    await once.send(
      new TransactWriteCommand({
        TransactItems: [{ Put: item(table, 'B', 1, { title: kilobytes(2) }) }, { Put: item(table, 'B', 2) }],
      }),
    );
    expect(units().writeUnits - beforeTransaction.writeUnits).toBe(2 * (2 + 1));
    await once.send(new PutCommand(item(table, 'A', 2, { title: kilobytes(10) })));
    const beforeQuery = units();
    await once.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'A' },
        ProjectionExpression: 'id',
        ConsistentRead: true,
      }),
    );
    expect(units().readUnits - beforeQuery.readUnits).toBe(5);
  });
});

describe('capacity of updates', () => {
  it('counts an update as the larger of the item before and its new values, not their sum: the hundredth update of an item costs what the first did', async () => {
    const { service, table, once } = await aws();
    await once.send(new PutCommand(item(table, 'A', 1, { n: 0, title: 'x'.repeat(1_500) })));
    const costOfUpdate = async (n: number) => {
      const before = service.stats.capacity.writeUnits;
      await once.send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: 'A', id: 1 },
          UpdateExpression: 'SET n = :n, note = :note',
          ExpressionAttributeValues: { ':n': n, ':note': 'y'.repeat(500) },
        }),
      );
      return service.stats.capacity.writeUnits - before;
    };
    const first = await costOfUpdate(1);
    for (let n = 2; n < 100; n++) await costOfUpdate(n);
    expect(first).toBe(2);
    expect(await costOfUpdate(100)).toBe(first);
  });
});

describe('latency', () => {
  it('takes each request its service time: at least the fastest measured PutItem (5.47 ms), a transaction at least 19.4 ms (to the millisecond a timer keeps)', async () => {
    const { table, once } = await aws({ latency: true });
    const timed = async (work: () => Promise<unknown>) => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    const puts: number[] = [];
    const transactions: number[] = [];
    for (let i = 0; i < 10; i++) {
      puts.push(await timed(() => once.send(new PutCommand(item(table, 'A', i)))));
      transactions.push(
        await timed(() =>
          once.send(
            new TransactWriteCommand({ TransactItems: [{ Put: item(table, 'B', i) }, { Put: item(table, 'C', i) }] }),
          ),
        ),
      );
    }
    expect(Math.min(...puts)).toBeGreaterThanOrEqual(5);
    expect(Math.min(...transactions)).toBeGreaterThanOrEqual(19);
  });
});

describe('internal server errors', () => {
  /** Dice that roll these numbers in turn, then never fail. */
  const dice =
    (...rolls: number[]) =>
    () =>
      rolls.shift() ?? 0.99;

  it('answers 500 before applying a write: nothing is written, and the SDK’s retry writes it', async () => {
    const { service, proxy, table, once, withRetries } = await aws({
      internalErrors: { rate: 0.5, random: dice(0.1, 0.99, 0.1) },
    });
    expect(await outcome(once.send(new PutCommand(item(table, 'A', 1))))).toBe('InternalServerError');
    const { Item } = await once.send(
      new GetCommand({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }),
    );
    expect(Item).toBeUndefined();
    const from = proxy.seen.length;
    expect(await outcome(withRetries.send(new PutCommand(item(table, 'A', 2))))).toBe('ok');
    expect(proxy.seen.slice(from).filter(operation('PutItem'))).toHaveLength(2);
    expect(service.stats.internalErrors).toEqual({ before: 2, after: 0 });
  });

  it('answers 500 after applying a write: it is written, and a conditional retry finds it there', async () => {
    const { service, table, once, withRetries } = await aws({ internalErrors: { rate: 0.5, random: dice(0.3) } });
    const put = new PutCommand({ ...item(table, 'A', 1), ConditionExpression: 'attribute_not_exists(pk)' });
    expect(await outcome(withRetries.send(put))).toBe('ConditionalCheckFailedException');
    const { Item } = await once.send(
      new GetCommand({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }),
    );
    expect(Item).toEqual({ pk: 'A', id: 1 });
    expect(service.stats.internalErrors).toEqual({ before: 0, after: 1 });
  });

  it('answers 500 after applying a transaction: the SDK’s retry with the same token is answered done, and it is applied once', async () => {
    const { table, once, withRetries } = await aws({ internalErrors: { rate: 0.5, random: dice(0.3) } });
    const counted = addOne(table);
    expect(await outcome(withRetries.send(new TransactWriteCommand(counted)))).toBe('ok');
    const { Item } = await once.send(
      new GetCommand({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }),
    );
    expect(Item?.n).toBe(1);
  });
});

describe('the network in front of it', () => {
  it('keeps the fault proxy’s faults: a request the network holds back reaches DynamoDB only when let go', async () => {
    const { service, proxy, table, once } = await aws();
    let release: () => void = () => undefined;
    proxy.inject(both(operation('PutItem'), mentions('held')), {
      holdRequest: new Promise<void>((resolve) => (release = resolve)),
    });
    const held = once.send(new PutCommand(item(table, 'A', 1, { note: 'held' })));
    await proxy.next(mentions('held'));
    expect(service.stats.requests.PutItem ?? 0).toBe(0);
    release();
    expect(await outcome(held)).toBe('ok');
    expect(service.stats.requests.PutItem).toBe(1);
  });
});
