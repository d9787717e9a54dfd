import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { SignatureV4 } from '@smithy/signature-v4';
import { awsDynamoDb, type AwsDynamoDb } from '../../harness/aws-dynamodb/dynamodb';
import { mentions, operation, startFaultProxy, type FaultProxy, type SeenRequest } from '../../harness/fault-proxy';
import { eventually, sleep } from '../../harness/wait';
import { CONNECT_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../../lib/aws/https';
import { MAX_ATTEMPTS, MAX_IN_FLIGHT, dynamoDb, type DynamoDb, type DynamoDbOptions } from '../../lib/dynamodb/client';
import { Copies } from '../../lib/dynamodb/outcome';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../support/dynamodb-local-process';
import { freshTable, testDynamoDbEndpoint } from '../support/stores';

/**
 * The store's DynamoDB client (lib/dynamodb/client.ts), on its own, against DynamoDB Local behind
 * the fault proxy and DynamoDB as AWS runs it: everything the store relies on it for, since it no
 * longer has the AWS SDK's client to rely on.
 */

let proxies: FaultProxy[] = [];
let services: AwsDynamoDb[] = [];
let children: ChildProcess[] = [];
const savedEnv = { ...process.env };
afterEach(async () => {
  await Promise.all(proxies.map((proxy) => proxy.close()));
  for (const service of services) service.close();
  for (const child of children) child.kill('SIGKILL');
  proxies = [];
  services = [];
  children = [];
  process.env = { ...savedEnv };
});

/** The SDK's three attempts, their backoff, and one more round trip, on a busy machine. */
const ATTEMPTS_WITHIN_MS = MAX_ATTEMPTS * (REQUEST_TIMEOUT_MS + 2_000) + 10_000;

async function behindProxy(upstream: string | AwsDynamoDb = testDynamoDbEndpoint(), options: DynamoDbOptions = {}) {
  const proxy = await startFaultProxy(upstream);
  proxies.push(proxy);
  const client = dynamoDb({
    endpoint: proxy.endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    ...options,
  });
  return { proxy, client, table: await freshTable() };
}

/** A signal that is never aborted: the call has all the time it needs. */
const forever = () => new AbortController().signal;

/** DynamoDB keeps a transaction's token for ten minutes, whatever the table: each test needs its own. */
const freshToken = () => randomUUID();

/** The error a promise rejects with, by name, or 'ok'. */
async function outcome(work: Promise<unknown>): Promise<string> {
  try {
    await work;
    return 'ok';
  } catch (error) {
    return error instanceof Error ? error.name : String(error);
  }
}

/** What DynamoDB answers, by error: for the proxy to answer instead of DynamoDB. */
const refuse =
  (type: string, status = 400) =>
  () => ({ status, body: { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: type } });

function counted(client: DynamoDb, table: string, token: string, signal = forever()) {
  return client.transactWriteItems(
    [
      {
        Update: {
          TableName: table,
          Key: { pk: 'A', id: 1 },
          UpdateExpression: 'ADD n :one',
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
    ],
    token,
    signal,
    new Copies(),
  );
}

async function valueOf(client: DynamoDb, table: string): Promise<unknown> {
  return (await client.getItem({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }, forever()))?.n;
}

describe('a transaction’s token', () => {
  it('goes with every attempt: an answer lost after the transaction was applied is sent again, the very same body, and it is applied once', async () => {
    const { proxy, client, table } = await behindProxy();
    proxy.inject(operation('TransactWriteItems'), { dropAnswer: true });
    const token = freshToken();
    await counted(client, table, token);
    const sent = proxy.seen.filter(operation('TransactWriteItems'));
    expect(sent).toHaveLength(2);
    expect(sent[1]?.body).toBe(sent[0]?.body);
    expect(sent[0]?.body).toContain(`"ClientRequestToken":"${token}"`);
    expect(await valueOf(client, table)).toBe(1);
  });

  it('goes with the retries of a transaction sent again while its first copy is in progress (TransactionInProgressException), applied once', async () => {
    const service = awsDynamoDb(testDynamoDbEndpoint(), { latency: false, internalErrors: { rate: 0 } });
    services.push(service);
    const { client, table } = await behindProxy(service);
    const token = freshToken();
    let release: () => void = () => undefined;
    service.slow(mentions(token), new Promise<void>((resolve) => (release = resolve)));
    const inProgress = service.inProgress(mentions(token));
    const first = counted(client, table, token);
    await inProgress;
    const again = counted(client, table, token);
    await eventually(() => service.stats.conflicts.inProgress > 0, {
      within: 10_000,
      what: 'the copy refused while the first is in progress',
    });
    release();
    await Promise.all([first, again.catch(() => undefined)]);
    expect(await valueOf(client, table)).toBe(1);
  });
});

describe('a cancellation', () => {
  it('carries each action’s reason, in order, with the item a failed condition found (ReturnValuesOnConditionCheckFailure)', async () => {
    const { client, table } = await behindProxy();
    await client.putItem({ TableName: table, Item: { pk: 'A', id: 1, n: 1, note: { nested: true } } }, forever());
    const error = await client
      .transactWriteItems(
        [
          { Put: { TableName: table, Item: { pk: 'B', id: 1 } } },
          {
            Update: {
              TableName: table,
              Key: { pk: 'A', id: 1 },
              UpdateExpression: 'SET n = :two',
              ConditionExpression: 'n = :five',
              ExpressionAttributeValues: { ':two': 2, ':five': 5 },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        ],
        'cancelled',
        forever(),
        new Copies(),
      )
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      name: 'TransactionCanceledException',
      fate: 'not applied',
      cancellationReasons: [
        { code: 'None' },
        { code: 'ConditionalCheckFailed', item: { pk: 'A', id: 1, n: 1, note: { nested: true } } },
      ],
    });
  });
});

describe('timeouts and the deadline', () => {
  it(
    `gives up an attempt not answered within ${REQUEST_TIMEOUT_MS} ms, after ${MAX_ATTEMPTS} attempts`,
    async () => {
      const { proxy, client, table } = await behindProxy();
      proxy.inject(operation('GetItem'), { delayAnswerMs: REQUEST_TIMEOUT_MS + 1_000 }, Infinity);
      const started = Date.now();
      expect(
        await outcome(client.getItem({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }, forever())),
      ).toBe('TimeoutError');
      expect(Date.now() - started).toBeGreaterThanOrEqual(MAX_ATTEMPTS * REQUEST_TIMEOUT_MS);
      expect(proxy.seen.filter(operation('GetItem'))).toHaveLength(MAX_ATTEMPTS);
    },
    ATTEMPTS_WITHIN_MS,
  );

  it(
    `gives up a connection not made within ${CONNECT_TIMEOUT_MS} ms, after ${MAX_ATTEMPTS} attempts`,
    async () => {
      const port = await unansweredPort();
      const client = dynamoDb({
        endpoint: `http://127.0.0.1:${port}`,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      });
      const started = Date.now();
      expect(
        await outcome(client.getItem({ TableName: 't', Key: { pk: 'A', id: 1 }, ConsistentRead: true }, forever())),
      ).toBe('TimeoutError');
      expect(Date.now() - started).toBeGreaterThanOrEqual(MAX_ATTEMPTS * CONNECT_TIMEOUT_MS);
    },
    ATTEMPTS_WITHIN_MS,
  );

  it('stops at the deadline, with the deadline’s reason, and sends nothing after', async () => {
    const { proxy, client, table } = await behindProxy();
    proxy.freeze();
    const deadline = new AbortController();
    const reason = new Error('the deadline');
    setTimeout(() => {
      deadline.abort(reason);
    }, 300);
    await expect(
      client.getItem({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }, deadline.signal),
    ).rejects.toBe(reason);
    expect(proxy.seen.filter(operation('GetItem'))).toHaveLength(1);
  });
});

/** A DynamoDB stand-in that answers every request with `answer`, and counts them. */
async function standIn(answer: (response: ServerResponse) => void) {
  const seen = { requests: 0 };
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      seen.requests += 1;
      answer(response);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) =>
          server.close(() => {
            resolve();
          }),
        ),
    ),
  );
});

/** What a call came to within `ms`: its error's name, 'ok', or 'still pending'. The wait ends with the call. */
async function within(ms: number, work: Promise<unknown>): Promise<string> {
  const waiting = new AbortController();
  // Aborted only once the race is decided: its value is never read.
  const pending = delay(ms, 'still pending', { signal: waiting.signal }).catch(() => 'ended');
  try {
    return await Promise.race([outcome(work), pending]);
  } finally {
    waiting.abort();
  }
}

describe('answers cut short, and an abort while signing', () => {
  it('fails an attempt whose answer stops mid-body, and tries again, never waiting for the deadline', async () => {
    const { endpoint, seen } = await standIn((response) => {
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': '100' });
      response.write('{"Item":');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const client = dynamoDb({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
    const call = client.getItem({ TableName: 'any', Key: { pk: 'A', id: 1 }, ConsistentRead: true }, forever());
    // Its attempts and their backoff take well under a second; before, the call never settled.
    expect(await within(10_000, call)).toBe('NetworkError');
    expect(seen.requests).toBe(MAX_ATTEMPTS);
  });

  it('sends nothing when the deadline passes while credentials are still on their way', async () => {
    const { endpoint, seen } = await standIn(() => undefined);
    const slowCredentials = () => sleep(300).then(() => LOCAL_CREDENTIALS);
    const client = dynamoDb({ endpoint, region: LOCAL_REGION, credentials: slowCredentials });
    const deadline = new AbortController();
    const reason = new Error('the deadline');
    setTimeout(() => {
      deadline.abort(reason);
    }, 100);
    const call = client.getItem({ TableName: 'any', Key: { pk: 'A', id: 1 }, ConsistentRead: true }, deadline.signal);
    await expect(call).rejects.toBe(reason);
    // Past the moment the credentials came: still nothing sent.
    await sleep(500);
    expect(seen.requests).toBe(0);
  });
});

describe('retries', () => {
  it.each([
    ['a 500 (InternalServerError)', 'InternalServerError', MAX_ATTEMPTS, refuse('InternalServerError', 500)],
    [
      'TransactionInProgressException',
      'TransactionInProgressException',
      MAX_ATTEMPTS,
      refuse('TransactionInProgressException'),
    ],
    ['a failed condition', 'ConditionalCheckFailedException', 1, refuse('ConditionalCheckFailedException')],
    [
      'a cancellation (a conflict among its reasons)',
      'TransactionCanceledException',
      1,
      refuse('TransactionCanceledException'),
    ],
    ['a validation error', 'ValidationException', 1, refuse('ValidationException')],
  ])('answers %s as the SDK did: %s after %i attempt(s)', async (_what, name, attempts, answerWith) => {
    const { proxy, client, table } = await behindProxy();
    proxy.inject(operation('TransactWriteItems'), { answerWith }, Infinity);
    expect(await outcome(counted(client, table, freshToken()))).toBe(name);
    const sent = proxy.seen.filter(operation('TransactWriteItems'));
    expect(sent).toHaveLength(attempts);
    expect(new Set(sent.map((request) => request.body)).size).toBe(1);
  });

  it('owes a 500 its own attempts, whatever throttles came before it: two throttles and a 500 are not the end', async () => {
    const { proxy, client, table } = await behindProxy();
    proxy.inject(operation('PutItem'), { answerWith: refuse('ProvisionedThroughputExceededException') }, 2);
    proxy.inject(operation('PutItem'), { answerWith: refuse('InternalServerError', 500) }, 1);
    await client.putItem({ TableName: table, Item: { pk: 'A', id: 1, title: 'stored' } }, forever());
    expect(proxy.seen.filter(operation('PutItem'))).toHaveLength(MAX_ATTEMPTS + 1);
    const stored = await client.getItem({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }, forever());
    expect(stored).toEqual({ pk: 'A', id: 1, title: 'stored' });
  });

  it(
    'sends a throttled request again, the SDK’s three attempts and more, until its deadline: it was not applied',
    async () => {
      const { proxy, client, table } = await behindProxy();
      proxy.inject(operation('GetItem'), { answerWith: refuse('ProvisionedThroughputExceededException') }, Infinity);
      const reason = new Error('the deadline');
      const deadline = new AbortController();
      setTimeout(() => {
        deadline.abort(reason);
      }, 4_000);
      await expect(
        client.getItem({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }, deadline.signal),
      ).rejects.toBe(reason);
      expect(proxy.seen.filter(operation('GetItem')).length).toBeGreaterThan(MAX_ATTEMPTS);
    },
    ATTEMPTS_WITHIN_MS,
  );
});

describe('requests in flight', () => {
  it(`sends at most ${MAX_IN_FLIGHT} at once; the others wait their turn, and go once one is answered`, async () => {
    const { proxy, client, table } = await behindProxy();
    let release: () => void = () => undefined;
    proxy.inject(operation('GetItem'), { holdRequest: new Promise<void>((resolve) => (release = resolve)) }, Infinity);
    const calls = Array.from({ length: MAX_IN_FLIGHT + 10 }, (_, id) =>
      client.getItem({ TableName: table, Key: { pk: 'A', id }, ConsistentRead: true }, forever()),
    );
    await eventually(() => proxy.seen.length === MAX_IN_FLIGHT, {
      within: 10_000,
      what: `${MAX_IN_FLIGHT} requests at the proxy`,
    });
    // A moment more: none of the others goes while the first are held.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(proxy.seen).toHaveLength(MAX_IN_FLIGHT);
    release();
    await Promise.all(calls);
    expect(proxy.seen).toHaveLength(MAX_IN_FLIGHT + 10);
  });
});

describe('credentials, region and trace', () => {
  /** The access key a request was signed with, and the region of its signature's scope. */
  const signedWith = (request: SeenRequest | undefined) => {
    const [, key, region] =
      /Credential=([^/]+)\/\d+\/([^/]+)\/dynamodb\/aws4_request/.exec(String(request?.headers.authorization)) ?? [];
    return { key, region };
  };

  it('signs with the credentials of the environment, as Lambda gives them, its session token included', async () => {
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKIDFROMENV',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'the-session',
    });
    const proxy = await startFaultProxy(testDynamoDbEndpoint());
    proxies.push(proxy);
    const client = dynamoDb({ endpoint: proxy.endpoint, region: LOCAL_REGION });
    await client.getItem({ TableName: await freshTable(), Key: { pk: 'A', id: 1 }, ConsistentRead: true }, forever());
    expect(signedWith(proxy.seen[0]).key).toBe('AKIDFROMENV');
    expect(proxy.seen[0]?.headers['x-amz-security-token']).toBe('the-session');
  });

  it('signs, off Lambda, with a named profile’s credentials, through the AWS SDK’s own chain', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'todo-profile-'));
    try {
      writeFileSync(
        join(dir, 'credentials'),
        '[work]\naws_access_key_id = AKIDFROMPROFILE\naws_secret_access_key = secret\n',
      );
      writeFileSync(join(dir, 'config'), '[profile work]\nregion = eu-west-3\n');
      for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'])
        Reflect.deleteProperty(process.env, name);
      Object.assign(process.env, {
        AWS_PROFILE: 'work',
        AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
        AWS_CONFIG_FILE: join(dir, 'config'),
      });
      const proxy = await startFaultProxy(testDynamoDbEndpoint());
      proxies.push(proxy);
      const client = dynamoDb({ endpoint: proxy.endpoint, region: LOCAL_REGION });
      await client.getItem({ TableName: await freshTable(), Key: { pk: 'A', id: 1 }, ConsistentRead: true }, forever());
      expect(signedWith(proxy.seen[0]).key).toBe('AKIDFROMPROFILE');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('signs for AWS_REGION, the region Lambda sets, by default', async () => {
    process.env.AWS_REGION = 'eu-west-3';
    const { proxy, client, table } = await behindProxy(testDynamoDbEndpoint(), { region: undefined });
    await client.getItem({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }, forever());
    expect(signedWith(proxy.seen[0]).region).toBe('eu-west-3');
  });

  it('passes the function’s X-Ray trace on, on Lambda with active tracing', async () => {
    Object.assign(process.env, {
      AWS_LAMBDA_FUNCTION_NAME: 'todo-api-dev-getTodo',
      _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793',
    });
    const { proxy, client, table } = await behindProxy();
    await client.getItem({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }, forever());
    expect(proxy.seen[0]?.headers['x-amzn-trace-id']).toBe('Root=1-5759e988-bd862e3fe1be46a994272793');
  });

  it('signs each request exactly as the AWS SDK’s own SigV4 signer does (DynamoDB Local checks no signature)', async () => {
    const { proxy, client, table } = await behindProxy();
    await client.getItem({ TableName: table, Key: { pk: 'A', id: 1 }, ConsistentRead: true }, forever());
    const request = proxy.seen[0];
    if (request === undefined) throw new Error('no request');
    const url = new URL(proxy.endpoint);
    const date = String(request.headers['x-amz-date']);
    const signer = new SignatureV4({
      service: 'dynamodb',
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
      sha256: Sha256,
      applyChecksum: false,
    });
    const signed = await signer.sign(
      {
        method: 'POST',
        protocol: 'http:',
        hostname: url.hostname,
        port: Number(url.port),
        path: '/',
        headers: {
          host: url.host,
          'content-length': String(request.headers['content-length']),
          'content-type': String(request.headers['content-type']),
          'x-amz-target': String(request.headers['x-amz-target']),
        },
        body: request.body,
      },
      {
        signingDate: new Date(
          `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 11)}:${date.slice(11, 13)}:${date.slice(13)}`,
        ),
      },
    );
    expect(signature(request.headers.authorization)).toBe(signature(signed.headers.authorization));
  });
});

/** The Signature= part of an Authorization header. */
function signature(authorization: unknown): string | undefined {
  return /Signature=([0-9a-f]+)/.exec(String(authorization))?.[1];
}

/** SHA-256 for the SDK's signer, from node:crypto: an HMAC when it is given a key. */
class Sha256 {
  readonly #hash;
  constructor(secret?: SourceData) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: SourceData): void {
    this.#hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.#hash.digest());
  }
}

/** What the signer hands a hash: @smithy/types' SourceData. */
type SourceData = string | ArrayBuffer | ArrayBufferView;

/** The signer hands over strings, buffers and views of them; node:crypto takes a string or a Buffer. */
function bytes(data: SourceData): string | Buffer {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/**
 * A port whose connections are never completed: a listener in another process with room for no
 * waiting connection, its queue filled, then frozen, so the kernel drops every new handshake.
 */
async function unansweredPort(): Promise<number> {
  const child = spawn(process.execPath, [
    '-e',
    "const s = require('node:net').createServer(); s.listen({ port: 0, host: '127.0.0.1', backlog: 0 }, () => console.log(s.address().port));",
  ]);
  children.push(child);
  const port = await new Promise<number>((resolve) => {
    child.stdout.once('data', (data: Buffer) => {
      resolve(Number(String(data).trim()));
    });
  });
  child.kill('SIGSTOP');
  const fillers: Socket[] = Array.from({ length: 4 }, () => connect(port, '127.0.0.1').on('error', () => undefined));
  afterFillers.push(...fillers);
  return port;
}
const afterFillers: Socket[] = [];
afterEach(() => {
  for (const socket of afterFillers.splice(0)) socket.destroy();
});
