import type { APIGatewayProxyEventV2, APIGatewayProxyHandlerV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { awsDynamoDb, type AwsDynamoDb } from '../../harness/aws-dynamodb/dynamodb';
import { parseRequest } from '../../harness/aws-dynamodb/requests';
import { context, event } from '../../test/support/event';
import { startFaultProxy, type Upstream } from '../../harness/fault-proxy';
import { fillTable } from '../../harness/filled-table';
import { createTodo, deleteTodo, getTodo, listTodos, updateTodo } from '../../test/support/routes';
import { dynamoDb } from '../../lib/dynamodb/client';
import { todoItems } from '../../lib/dynamodb/reads';
import { MAX_LIST_BYTES } from '../../lib/list-size';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import { readLogLevel } from '../../lib/log';
import { REAL_RUNTIME } from '../../lib/runtime';
// The domain's createTodo, apart from the handler of that name (test/support/routes.ts).
import { createTodo as createRecord } from '../../lib/todos';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  ensureTable,
  localClient,
  startDynamoDbLocal,
} from '../../test/support/dynamodb-local-process';
import { round, type Row } from '../lib';

/**
 * What one GET /todos costs DynamoDB (issue 39; lib/dynamodb/list.ts): read units by partition and
 * DynamoDB requests, on DynamoDB as AWS runs it (harness/aws-dynamodb/: strongly consistent reads
 * in 4 KB units, a Query charged for what it read), at 10^3 and 10^4 records of 20-character titles.
 * A container is a store with its own client and the listTodos handler on it, called with an event:
 * a 304 to If-None-Match, a warm container's list when nothing changed and after one POST, PUT or
 * DELETE from another container, a cold container's list (whole: past 64 KB of records it shares
 * what it read), a new container's from the list shared, and the whole-list Query that every list
 * of the code before bfb3e82 was.
 *
 * Units do not depend on timing, so the profile's requests go through one at a time here (each
 * one's units are then its own) and it answers no 500s (a retry would be counted as a list's
 * cost); its latency and throughput per partition are on. The records are written straight into
 * DynamoDB Local, as the store writes them (harness/filled-table.ts).
 */

const SIZES = [1_000, 10_000] as const;
const TITLE_LENGTH = 20;

function title(n: number): string {
  return `todo ${n}`.padEnd(TITLE_LENGTH, '.');
}

/** DynamoDB's requests and units, as the profile charged them, by partition key value (COUNTER, TODO). */
interface Spent {
  requests: Record<string, number>;
  readUnits: Record<string, number>;
  writeUnits: number;
}

function emptySpent(): Spent {
  return { requests: {}, readUnits: {}, writeUnits: 0 };
}

function add(into: Record<string, number>, key: string, value: number): void {
  into[key] = (into[key] ?? 0) + value;
}

/**
 * The profile as an upstream that passes one data-plane request at a time and books what each
 * cost: its read units to the partition it read (a Query's, a GetItem's key), from the profile's
 * own running total around it.
 */
function bookkeeping(dynamodb: AwsDynamoDb): { upstream: Upstream; spent: Spent } {
  const spent = emptySpent();
  let turn: Promise<unknown> = Promise.resolve();
  const upstream: Upstream = {
    send(request) {
      const sent = turn.then(async () => {
        const { capacity } = dynamodb.stats;
        const before = { read: capacity.readUnits, write: capacity.writeUnits, requests: total(dynamodb) };
        const answer = await dynamodb.send(request);
        if (total(dynamodb) === before.requests) return answer; // CreateTable, DescribeTable…
        const parsed = parseRequest(request.seen.operation, request.seen.body);
        const partition = (parsed.queried ?? parsed.accesses[0]?.partition ?? '?').replace(/^.*\/[A-Z]+:/, '');
        add(spent.requests, parsed.operation, 1);
        add(spent.readUnits, partition, capacity.readUnits - before.read);
        spent.writeUnits += capacity.writeUnits - before.write;
        return answer;
      });
      turn = sent.catch(() => undefined);
      return sent;
    },
    close() {
      dynamodb.close();
    },
  };
  return { upstream, spent };
}

function total(dynamodb: AwsDynamoDb): number {
  return Object.values(dynamodb.stats.requests).reduce((sum, n) => sum + n, 0);
}

function minus(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(a).map(([key, value]) => [key, value - (b[key] ?? 0)]));
}

function since(now: Spent, before: Spent): Spent {
  return {
    requests: minus(now.requests, before.requests),
    readUnits: minus(now.readUnits, before.readUnits),
    writeUnits: now.writeUnits - before.writeUnits,
  };
}

function copy(spent: Spent): Spent {
  return { requests: { ...spent.requests }, readUnits: { ...spent.readUnits }, writeUnits: spent.writeUnits };
}

/** `count` records of 20-character titles and the counter a seed and `count - 2` POSTs would leave, straight into DynamoDB Local. */
async function filledTable(endpoint: string, count: number): Promise<string> {
  const table = `list-reads-${count}-${Date.now()}`;
  const client = localClient(endpoint);
  try {
    await ensureTable(client, table);
    const todos = Array.from({ length: count }, (_, i) => createRecord({ title: title(i + 1) }, i + 1));
    await fillTable(DynamoDBDocumentClient.from(client), table, todos);
  } finally {
    client.destroy();
  }
  return table;
}

/** A Lambda container of the functions named: a store of its own (its client, what it holds) and the handlers on it. */
function container(endpoint: string, table: string) {
  const store = new DynamoDbTodoStore(
    dynamoDb({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }),
    table,
  );
  return {
    list: listTodos(store),
    get: getTodo(store),
    post: createTodo(store),
    put: updateTodo(store),
    del: deleteTodo(store),
  };
}

function noop() {
  return undefined;
}

async function call(handler: APIGatewayProxyHandlerV2, request: APIGatewayProxyEventV2, expected: number) {
  const answer = (await handler(request, context(), noop)) as APIGatewayProxyStructuredResultV2;
  if (answer.statusCode !== expected) {
    throw new Error(
      `${request.routeKey} answered ${String(answer.statusCode)}, not ${expected}: ${String(answer.body)}`,
    );
  }
  return answer;
}

function row(size: number, name: string, spent: Spent, status: string): Row {
  const units = Object.values(spent.readUnits).reduce((sum, n) => sum + n, 0);
  const requests = Object.values(spent.requests).reduce((sum, n) => sum + n, 0);
  const partitions = ['COUNTER', 'TODO', 'SHARED']
    .map((key) => `${key} ${round(spent.readUnits[key] ?? 0, 1)}`)
    .join(', ');
  const operations = Object.entries(spent.requests)
    .filter(([, n]) => n > 0)
    .map(([operation, n]) => `${n} ${operation}`)
    .join(' + ');
  return {
    section: 'listReads',
    name: `${size} records: ${name}`,
    value: round(units, 1),
    unit: 'read units',
    note:
      `${partitions}; ${requests} DynamoDB request${requests === 1 ? '' : 's'} (${operations || 'none'})` +
      (spent.writeUnits > 0 ? `; ${round(spent.writeUnits, 1)} write units` : '') +
      `; ${status}`,
  };
}

async function figuresAt(size: number, endpoint: string, localEndpoint: string, spent: Spent): Promise<Row[]> {
  const table = await filledTable(localEndpoint, size);
  const rows: Row[] = [];
  async function measured(name: string, run: () => Promise<string>): Promise<void> {
    const before = copy(spent);
    const status = await run();
    rows.push(row(size, name, since(spent, before), status));
  }
  const writer = container(endpoint, table);
  const reader = container(endpoint, table);
  const middle = String(Math.floor(size / 2));
  let tag = '';
  async function listed(expected = 200, headers: Record<string, string> = {}): Promise<string> {
    const answer = await call(reader.list, event({ headers }), expected);
    tag = String(answer.headers?.etag);
    return `answered ${expected}`;
  }
  // The writer's own first request (its seed's read of the counter) is not a list's, nor a list: that would share it.
  await call(writer.get, event({ id: '1' }), 200);

  await measured("a cold container's GET /todos, no list shared (the whole list, then shared past 64 KB)", () =>
    listed(),
  );
  await measured("a warm container's GET /todos, nothing changed", () => listed());
  await measured('GET /todos with If-None-Match of the list, a warm container', () =>
    listed(304, { 'if-none-match': tag }),
  );
  await measured('GET /todos with If-None-Match of the list, a cold container', async () => {
    await call(container(endpoint, table).list, event({ headers: { 'if-none-match': tag } }), 304);
    return 'answered 304; its first request reads the counter once more (the seed, lib/dynamodb/seed.ts)';
  });
  await call(writer.post, event({ method: 'POST', body: { title: title(size + 1) } }), 201);
  await measured("a warm container's GET /todos after one POST", () => listed());
  await call(writer.put, event({ method: 'PUT', id: middle, body: { title: title(0) } }), 200);
  await measured("a warm container's GET /todos after one PUT", () => listed());
  await call(writer.del, event({ method: 'DELETE', id: String(Number(middle) + 1) }), 200);
  await measured("a warm container's GET /todos after one DELETE", () => listed());
  // The cold container's whole read shared the list where it read more than 64 KB (10^4 records).
  await measured("a new container's GET /todos after those writes: from the list shared, if any", async () => {
    await call(container(endpoint, table).list, event(), 200);
    return 'answered 200; its first request reads the counter once more (the seed)';
  });
  // Every GET /todos of the code before bfb3e82, 200 or 304, warm or cold: the whole list's Query (all its pages).
  const client = dynamoDb({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  await measured('before bfb3e82, any GET /todos: the whole-list Query', async () => {
    const items = await todoItems(
      { name: table, dynamodb: client, runtime: REAL_RUNTIME, maxListBytes: MAX_LIST_BYTES },
      AbortSignal.timeout(30_000),
    );
    return `${items.length} records read; a cold container also read the counter once (its seed)`;
  });
  return rows;
}

export async function listReads(): Promise<Row[]> {
  process.env.LOG_LEVEL = 'silent';
  readLogLevel();
  const local = await startDynamoDbLocal();
  const dynamodb = awsDynamoDb(local.endpoint, { internalErrors: { rate: 0 } });
  const { upstream, spent } = bookkeeping(dynamodb);
  const proxy = await startFaultProxy(upstream);
  const rows: Row[] = [];
  try {
    for (const size of SIZES) rows.push(...(await figuresAt(size, proxy.endpoint, local.endpoint, spent)));
  } finally {
    await proxy.close();
    dynamodb.close();
    await local.close();
  }
  return rows;
}
