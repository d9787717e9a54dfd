import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { badDay } from '../../harness/fault-proxy';
import { startFleet, type Fleet } from '../../harness/fleet';
import { runWorkload, type WorkloadOptions, type WorkloadReport } from '../../harness/history';
import { LAMBDA_NODE_VERSION } from '../../harness/lambda-node';
import { RESPONSE_LIMIT_BYTES } from '../support/event';
import { servicePackage, type Packaged } from '../../harness/package';
import { COSTLIEST_CHARACTER, fillTable, fullList, titleAtTheCap } from '../../harness/filled-table';
import { MAX_LIST_BYTES } from '../../lib/list-size';
import { newTodoBytes, type Todo } from '../../lib/todos';
import { freshTable, localDocumentClient, testDynamoDbEndpoint } from '../support/stores';

/**
 * The zips that `serverless package` ships, as AWS runs them (harness/fleet.ts): each function a
 * pool of single-invocation containers on Node 22, each with its own store and counter, behind an
 * HTTP API gateway, on DynamoDB Local through a fault proxy. What holds here holds where the
 * emulator, one process for all five functions, cannot show it.
 */

/** Packaging (about 5 s idle) and, on the first run of a machine, installing Node 22 (185 MB). */
const PREPARE_WITHIN_MS = 300_000;
/** A workload of a few hundred requests; with faults, each costs the SDK's 2 s timeout now and then. */
const WORKLOAD_WITHIN_MS = 180_000;
/** A write the bad day holds back lands within its hold (2.6 s) and one more round trip of a busy machine. */
const SETTLE_WITHIN_MS = 30_000;
/** Records at the cap a full list is left room for, for POSTs that meet each other at its limit. */
const ROOM_FOR = 10;

let packaged: Packaged;
beforeAll(async () => {
  packaged = await servicePackage([]);
}, PREPARE_WITHIN_MS);

let fleets: Fleet[] = [];
/** A fleet of `caps`, on `table` if given (filled before: the fleet makes a new table otherwise). */
async function fleet(caps: Record<string, number> = {}, table?: string): Promise<Fleet> {
  const started = await startFleet({
    packaged,
    dynamoDbEndpoint: testDynamoDbEndpoint(),
    caps,
    logLevel: 'warn',
    ...(table === undefined ? {} : { table }),
  });
  fleets.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(fleets.map((started) => started.stop()));
  fleets = [];
});

/**
 * `runWorkload` on the fleet under the faults of a bad day; its final list is read once every
 * write the proxy held back has landed.
 */
async function workloadOnABadDay(started: Fleet, options: Omit<WorkloadOptions, 'settled'>): Promise<WorkloadReport> {
  badDay(started.proxy);
  const report = await runWorkload(started.url, { ...options, settled: () => started.proxy.idle(SETTLE_WITHIN_MS) });
  started.proxy.heal();
  return report;
}

/**
 * The mixed workload of 12 clients sharing 4 records, on a bad day: its history as the contract
 * allows, no request stored twice, and no record holding what no acknowledged write left it with.
 */
async function sharedWorkloadOnABadDay(
  started: Fleet,
  writes: Pick<WorkloadOptions, 'requestsPerClient' | 'keyed' | 'retries'>,
): Promise<void> {
  const report = await workloadOnABadDay(started, { clients: 12, shared: 4, ...writes });
  expect(report.problems).toEqual([]);
  expect(report.duplicates).toBe(0);
  expect(report.wrongValues).toBe(0);
}

/** GET /todos as raw bytes, with the Accept-Encoding given. */
function rawList(
  url: string,
  acceptEncoding: string,
): Promise<{ status: number; encoding: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/todos`, { headers: { 'accept-encoding': acceptEncoding } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const encoding = response.headers['content-encoding'];
        resolve({ status: response.statusCode ?? 0, encoding, body: Buffer.concat(chunks) });
      });
    });
    request.on('error', reject);
    request.end();
  });
}

/** A PUT of record `id`, with these headers. */
function put(url: string, id: number, body: object, headers: Record<string, string>): Promise<Response> {
  return fetch(`${url}/todos/${id}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** A fresh Idempotency-Key, in the draft's quoted form. */
function keyHeader(): Record<string, string> {
  return { 'idempotency-key': `"${randomUUID()}"` };
}

/** What the counting clients did: PUTs answered 200 (each once, a replay included), and the count they left. */
interface Counted {
  readonly oks: number;
  readonly preconditionFailed: number;
  readonly final: number;
}

/**
 * `clients` clients each add one to record `id`'s title, a number, `times` times: read it, PUT
 * it plus one. With `ifMatch` each PUT names the ETag it read, and a 412 sends the client back to
 * read again; without, each PUT is blind, as clients wrote before conditional requests. A PUT
 * answered neither 200 nor 412 (a 503 of a bad day) is sent again as it was, with its key, so a
 * PUT applied but unanswered is answered once, by its replay.
 */
async function countTogether(url: string, id: number, options: { clients: number; times: number; ifMatch: boolean }) {
  let oks = 0;
  let preconditionFailed = 0;
  async function client(): Promise<void> {
    for (let done = 0; done < options.times;) {
      // A read a bad day answers 503 is read again, as a client does: its body has no title, its answer no ETag.
      let read = await fetch(`${url}/todos/${id}`);
      for (let attempt = 0; attempt < 5 && read.status !== 200; attempt++) read = await fetch(`${url}/todos/${id}`);
      if (read.status !== 200) throw new Error(`GET /todos/${id} answered ${read.status} five times`);
      const { title } = (await read.json()) as { title: string };
      const headers = { ...keyHeader(), ...(options.ifMatch ? { 'if-match': read.headers.get('etag') ?? '' } : {}) };
      let status = 0;
      for (let attempt = 0; attempt < 5 && status !== 200 && status !== 412; attempt++) {
        status = (await put(url, id, { title: String(Number(title) + 1) }, headers)).status;
      }
      if (status === 200) {
        oks += 1;
        done += 1;
      } else if (status === 412) preconditionFailed += 1;
      else throw new Error(`PUT /todos/${id} answered ${status} five times`);
    }
  }
  await Promise.all(Array.from({ length: options.clients }, client));
  const final = Number(((await (await fetch(`${url}/todos/${id}`)).json()) as { title: string }).title);
  return { oks, preconditionFailed, final } satisfies Counted;
}

describe('the fleet', () => {
  it(`runs the functions on Lambda's Node, ${LAMBDA_NODE_VERSION}, where this platform has it`, async () => {
    const started = await fleet();
    if (started.node.fallback === undefined) expect(started.node.version).toBe(`v${LAMBDA_NODE_VERSION}`);
    else expect(started.node.version).toBe(process.version);
    expect((await fetch(`${started.url}/todos/1`)).status).toBe(200);
    expect(started.stats('getTodo')).toMatchObject({ containers: 1, coldStarts: 1, invocations: 1 });
  });

  it(
    'answers a concurrent mixed workload, clients sharing some records, as its whole history allows: every record linearizable, ids unique and without gaps, nothing written twice or lost, lists in order',
    async () => {
      const started = await fleet();
      const report = await runWorkload(started.url, {
        clients: 16,
        requestsPerClient: 25,
        keyed: false,
        retries: 0,
        shared: 4,
      });
      expect(report.problems).toEqual([]);
      expect(report.statuses['201']).toBeGreaterThan(50);
      expect(started.stats('createTodo').containers).toBeGreaterThan(1);
    },
    WORKLOAD_WITHIN_MS,
  );

  it(
    'answers the same workload under the faults of a bad day, with no keys and no retries, as its history allows: a write the network repeats is stored once',
    async () => {
      const started = await fleet();
      await sharedWorkloadOnABadDay(started, { requestsPerClient: 40, keyed: false, retries: 0 });
      // Writes met each other on the counter and on shared records, as DynamoDB cancels them.
      expect(started.dynamodb?.stats.conflicts.transactionsCancelled).toBeGreaterThan(0);
    },
    WORKLOAD_WITHIN_MS,
  );

  it(
    'answers the same workload under the faults of a bad day, its writes keyed and retried, as its history allows',
    async () => {
      const started = await fleet();
      await sharedWorkloadOnABadDay(started, { requestsPerClient: 20, keyed: true, retries: 3 });
    },
    WORKLOAD_WITHIN_MS,
  );

  it(
    'stores every title of 200 keyed POSTs, sent again up to 3 times on a bad day, exactly once',
    async () => {
      const started = await fleet({ createTodo: 16 });
      const report = await workloadOnABadDay(started, {
        clients: 16,
        requestsPerClient: 13,
        keyed: true,
        retries: 3,
        only: 'POST',
      });
      const posts = report.history.filter((exchange) => exchange.method === 'POST');
      expect(posts.length).toBeGreaterThanOrEqual(200);
      // Every POST got its 201 in the end, and every title is stored once.
      expect(posts.filter((exchange) => exchange.attempts.at(-1)?.status !== 201)).toEqual([]);
      const titles = posts.map((exchange) => exchange.asked?.title);
      for (const title of titles) expect(report.final.filter((todo) => todo.title === title)).toHaveLength(1);
      expect(report.problems).toEqual([]);
    },
    WORKLOAD_WITHIN_MS,
  );

  it('seeds a new table once when a cold fleet gets 40 requests at once', async () => {
    const started = await fleet();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? fetch(`${started.url}/todos`).then(async (response) => ({
              status: response.status,
              body: await response.json(),
            }))
          : fetch(`${started.url}/todos`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ title: `cold ${i}` }),
            }).then(async (response) => ({ status: response.status, body: await response.json() })),
      ),
    );
    expect(answers.filter((answer) => answer.status !== 200 && answer.status !== 201)).toEqual([]);
    const final = (await (await fetch(`${started.url}/todos`)).json()) as { id: number }[];
    expect(final.map((todo) => todo.id)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
    expect(started.stats('listTodos').coldStarts + started.stats('createTodo').coldStarts).toBeGreaterThan(2);
  });

  it(
    "keeps GET /todos answerable at the list's limit: POSTs past it get 409, and the list answers 200 with and without gzip, within Lambda's answer",
    async () => {
      // The list written full but for room for ROOM_FOR records at the cap, whose answer is the
      // furthest from what DynamoDB holds (harness/filled-table.ts); twice as many such POSTs.
      const title = titleAtTheCap('one more', COSTLIEST_CHARACTER);
      const filled = fullList({ room: ROOM_FOR * newTodoBytes({ title }) });
      const table = await freshTable();
      await fillTable(localDocumentClient(testDynamoDbEndpoint()), table, filled);
      const started = await fleet({}, table);
      const statuses: number[] = [];
      for (let i = 0; i < 2 * ROOM_FOR; i += 10) {
        const batch = await Promise.all(
          Array.from({ length: 10 }, () =>
            fetch(`${started.url}/todos`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ title }),
            }).then((response) => response.status),
          ),
        );
        statuses.push(...batch);
      }
      // A POST answered 5xx logs its cause at error (the fleet logs from warn up): a failure here shows it.
      expect(started.logs('createTodo').filter((line) => line.includes('"level":"error"'))).toEqual([]);
      expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(ROOM_FOR);
      expect(statuses.filter((status) => status !== 201)).toEqual(statuses.filter((status) => status === 409));
      expect(statuses).toContain(409);
      for (const encoding of ['identity', 'gzip']) {
        const list = await rawList(started.url, encoding);
        expect(list.status).toBe(200);
        const text = list.encoding === 'gzip' ? gunzipSync(list.body).toString('utf8') : list.body.toString('utf8');
        expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_LIST_BYTES);
        expect((JSON.parse(text) as Todo[]).slice(0, filled.length)).toEqual(filled);
      }
      const answers = started.records().filter((record) => record.routeKey === 'GET /todos');
      expect(answers).toHaveLength(2);
      for (const record of answers) expect(record.responseBytes).toBeLessThanOrEqual(RESPONSE_LIMIT_BYTES);
    },
    WORKLOAD_WITHIN_MS,
  );

  it(
    'loses no update when clients count together on one record with If-Match, on a bad day: the count is the number of 200s',
    async () => {
      const started = await fleet();
      await put(started.url, 1, { title: '0' }, {});
      badDay(started.proxy);
      const counted = await countTogether(started.url, 1, { clients: 8, times: 4, ifMatch: true });
      started.proxy.heal();
      expect(counted.final).toBe(counted.oks);
      expect(counted.oks).toBe(32);
      // The clients did meet: some PUTs named a version another had already moved on.
      expect(counted.preconditionFailed).toBeGreaterThan(0);
    },
    WORKLOAD_WITHIN_MS,
  );

  it(
    'loses updates when the same clients PUT blind, without If-Match: the test above has teeth',
    async () => {
      const started = await fleet();
      await put(started.url, 2, { title: '0' }, {});
      const counted = await countTogether(started.url, 2, { clients: 8, times: 4, ifMatch: false });
      expect(counted.oks).toBe(32);
      expect(counted.final).toBeLessThan(counted.oks);
    },
    WORKLOAD_WITHIN_MS,
  );

  it(
    'performs exactly the DynamoDB actions its IAM role grants, on its table only',
    async () => {
      const started = await fleet();
      await runWorkload(started.url, { clients: 12, requestsPerClient: 20, keyed: true, retries: 0 });
      // A keyed PUT whose If-Match names a version since changed: its 412 is kept with a ConditionCheck.
      const read = (await fetch(`${started.url}/todos/1`)).headers.get('etag') ?? '';
      await put(started.url, 1, { completed: true }, {});
      expect((await put(started.url, 1, { completed: false }, { 'if-match': read, ...keyHeader() })).status).toBe(412);
      const role = Object.values(packaged.resources).find((resource) => resource.Type === 'AWS::IAM::Role');
      const statements = (
        role?.Properties.Policies as { PolicyDocument: { Statement: { Action: string[]; Resource: unknown }[] } }[]
      ).flatMap((policy) => policy.PolicyDocument.Statement);
      const granted = statements.filter((statement) => JSON.stringify(statement.Resource).includes('TodosTable'));
      const grantedActions = new Set(granted.flatMap((statement) => statement.Action));
      const performed = started.dynamoDbActions();
      expect([...performed].filter((action) => !grantedActions.has(action))).toEqual([]);
      expect([...grantedActions].filter((action) => !performed.has(action)).sort()).toEqual([]);
      for (const statement of granted) expect(statement.Resource).toEqual({ 'Fn::GetAtt': ['TodosTable', 'Arn'] });
    },
    WORKLOAD_WITHIN_MS,
  );
});
