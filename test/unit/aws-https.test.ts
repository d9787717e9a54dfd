import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import FakeTimers from '@sinonjs/fake-timers';
import {
  CONNECT_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  RequestFailure,
  httpsTransport,
  type Answer,
  type Service,
  type Transport,
} from '../../lib/aws/https';
import { simulatedWire } from '../../harness/simulation/socket';
import { fakeRuntime } from '../support/fake-runtime';

/**
 * lib/aws/https.ts, the transport of every copy the store sends: its timeouts and what it reports
 * of a copy with no answer (never sent while its socket connects; unknown once it has connected),
 * run on a clock the test owns over simulated sockets (harness/simulation/socket.ts), as the
 * simulator runs it; and over node:http to a local server, as production does. No test waits for
 * a timeout in real time.
 */

const T0 = Date.UTC(2026, 10, 26);
const CONNECT_MS = 2;
/** A local server answers within this, on a busy machine. */
const LOCAL_WITHIN_MS = 10_000;

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

function service(url: string): Service {
  return {
    url: new URL(url),
    region: 'us-east-1',
    name: 'dynamodb',
    target: 'DynamoDB_20120810',
    credentials: () => Promise.resolve(CREDENTIALS),
    maxSockets: 50,
  };
}

/** A fake clock the transport's timers run on, installed nowhere. */
const transportRuntime = () => fakeRuntime(T0, () => '00000000-0000-4000-a000-000000000000');

/** What the far side of the simulated socket does with each copy: answers it, or stays silent. */
type Far = 'answers' | 'silent';

/** The transport over simulated sockets: `far` for each copy the network carries; `connects` for each new socket. */
function simulated({
  far = (): Far => 'answers',
  connects = (): boolean => true,
}: { far?: () => Far; connects?: () => boolean } = {}) {
  const { clock, runtime } = transportRuntime();
  const carried: { operation: string; body: string }[] = [];
  const carry: Transport = (operation, body, signal) =>
    new Promise<Answer>((resolve, reject) => {
      carried.push({ operation, body });
      signal.addEventListener('abort', () => {
        reject(signal.reason as Error);
      });
      if (far() === 'answers') {
        runtime.after(1, () => {
          resolve({ status: 200, body: { Item: { id: { N: '1' } } } });
        });
      }
    });
  const wire = simulatedWire({ runtime, carry, connectMs: CONNECT_MS, connects, awsNow: runtime.now });
  // The time each copy was signed at, as its X-Amz-Date says.
  const signedAt: string[] = [];
  const watched = {
    ...wire,
    open: (headers: Record<string, string>) => {
      signedAt.push(headers['x-amz-date'] ?? '');
      return wire.open(headers);
    },
  };
  return {
    clock,
    carried,
    signedAt,
    transport: httpsTransport(service('https://dynamodb.us-east-1.amazonaws.com'), watched),
  };
}

/** How a copy ended, and when, in ms of the fake clock. */
async function outcome(
  clock: FakeTimers.Clock,
  sent: Promise<Answer>,
): Promise<{ at: number; answer?: Answer; failure?: RequestFailure }> {
  const ended: { at?: number; answer?: Answer; failure?: RequestFailure } = {};
  sent.then(
    (answer) => Object.assign(ended, { at: clock.now - T0, answer }),
    (failure: unknown) => Object.assign(ended, { at: clock.now - T0, failure: failure as RequestFailure }),
  );
  await clock.runAllAsync();
  return { at: ended.at ?? -1, ...ended };
}

describe('the transport over simulated sockets, on a clock of its own', () => {
  it('reports a copy whose socket never connects as never sent, at the connect timeout', async () => {
    const { clock, carried, transport } = simulated({ connects: () => false });
    const { at, failure } = await outcome(clock, transport('GetItem', '{}', new AbortController().signal));
    expect(failure).toBeInstanceOf(RequestFailure);
    expect({ name: failure?.name, mayHaveGone: failure?.mayHaveGone, at }).toEqual({
      name: 'TimeoutError',
      mayHaveGone: false,
      at: CONNECT_TIMEOUT_MS,
    });
    expect(carried).toEqual([]);
  });

  it('reports a copy with no answer after its socket connected as maybe gone, at the answer timeout', async () => {
    const { clock, carried, transport } = simulated({ far: () => 'silent' });
    const { at, failure } = await outcome(clock, transport('PutItem', '{"Item":{}}', new AbortController().signal));
    expect({ name: failure?.name, mayHaveGone: failure?.mayHaveGone, at }).toEqual({
      name: 'TimeoutError',
      mayHaveGone: true,
      at: CONNECT_MS + REQUEST_TIMEOUT_MS,
    });
    expect(carried).toEqual([{ operation: 'PutItem', body: '{"Item":{}}' }]);
  });

  it('sends the next copy on the kept-alive socket: no connection, and its answer timeout from the start', async () => {
    const answers: Far[] = ['answers', 'silent'];
    const { clock, transport } = simulated({
      far: () => answers.shift() ?? 'answers',
      connects: () => answers.length > 0,
    });
    const first = await outcome(clock, transport('GetItem', '{}', new AbortController().signal));
    expect(first.answer).toMatchObject({ status: 200, body: { Item: { id: { N: '1' } } } });
    const started = clock.now - T0;
    // A second new socket would never connect (`connects` is false now): only the kept-alive one sends.
    const second = await outcome(clock, transport('PutItem', '{}', new AbortController().signal));
    expect({ mayHaveGone: second.failure?.mayHaveGone, after: second.at - started }).toEqual({
      mayHaveGone: true,
      after: REQUEST_TIMEOUT_MS,
    });
  });

  it('signs at its clock’s time, and ends a copy at once when its signal aborts', async () => {
    const { clock, signedAt, transport } = simulated({ far: () => 'silent' });
    const controller = new AbortController();
    const sent = transport('GetItem', '{}', controller.signal);
    clock.setTimeout(() => {
      controller.abort(new Error('the deadline'));
    }, 100);
    const { at, failure } = await outcome(clock, sent);
    expect({ message: failure?.message, at }).toEqual({ message: 'the deadline', at: 100 });
    // The simulated clock's time, 26 November 2026, not this machine's.
    expect(signedAt).toEqual(['20261126T000000Z']);
  });
});

describe('the transport over node:http, as production runs it', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => {
      if (server === undefined) resolve();
      else
        server.close(() => {
          resolve();
        });
    });
    server = undefined;
  });

  it(
    'sends a signed POST with the operation as its X-Amz-Target, and reads the answer’s JSON',
    async () => {
      const seen: { headers: IncomingHttpHeaders; body: string }[] = [];
      server = createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          seen.push({ headers: request.headers, body });
          response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end('{"Count":0}');
        });
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const transport = httpsTransport(service(`http://127.0.0.1:${port}`));
      const answer = await transport('Query', '{"TableName":"todos"}', AbortSignal.timeout(LOCAL_WITHIN_MS));
      expect(answer).toMatchObject({ status: 200, body: { Count: 0 } });
      expect(seen).toHaveLength(1);
      expect(seen[0]?.body).toBe('{"TableName":"todos"}');
      expect(seen[0]?.headers['x-amz-target']).toBe('DynamoDB_20120810.Query');
      expect(seen[0]?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
    },
    LOCAL_WITHIN_MS,
  );
});
