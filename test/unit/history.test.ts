import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { context, event, invoke, type Method } from '../support/event';
import { runWorkload } from '../../harness/history';
import { isLinearizable, type Operation } from '../../harness/linearizability';
import { nonLinearizableRecords, type Timed } from '../../harness/record-model';
import { functionFor, handlersOn, type FunctionName } from '../support/routes';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';
import { applyPatch, createTodo } from '../../lib/todos';
import * as next from '../support/next-version/todos';

/**
 * The history check (harness/history.ts, harness/record-model.ts, harness/linearizability.ts):
 * it must see a wrong answer even where the final list is right, and accept every right history
 * however its requests overlap.
 */

/** A register: writes set it, reads see it. */
const write = (value: number, start: number, end: number): Operation<number> => ({
  start,
  end,
  step: () => value,
  label: `write ${value}`,
});
const read = (value: number, start: number, end: number): Operation<number> => ({
  start,
  end,
  step: (state) => (state === value ? state : undefined),
  label: `read ${value}`,
});
const linearizable = (operations: Operation<number>[]) => isLinearizable(operations, 0, String);

describe('the linearizability search', () => {
  it('accepts operations in sequence that explain each other', () => {
    expect(linearizable([write(1, 0, 1), read(1, 2, 3), write(2, 4, 5), read(2, 6, 7)])).toBe(true);
  });

  it('refuses a read of a value overwritten before the read began', () => {
    expect(linearizable([write(1, 0, 1), write(2, 2, 3), read(1, 4, 5)])).toBe(false);
  });

  it('lets overlapping operations take effect in either order', () => {
    expect(linearizable([write(1, 0, 10), read(1, 1, 2), read(0, 3, 4)])).toBe(false);
    expect(linearizable([write(1, 0, 10), read(0, 1, 2), read(1, 3, 4)])).toBe(true);
  });

  it('lets a write without an answer take effect later, or never', () => {
    expect(linearizable([write(1, 0, Infinity), read(0, 5, 6), read(1, 7, 8)])).toBe(true);
    expect(linearizable([write(1, 0, Infinity), read(0, 5, 6)])).toBe(true);
    // But not before it was sent.
    expect(linearizable([read(1, 0, 1), write(1, 2, Infinity)])).toBe(false);
  });
});

/** One request of a hand-made history. */
function timed(
  method: Timed['method'],
  path: string,
  start: number,
  status: number,
  body: unknown,
  asked?: Timed['asked'],
): Timed {
  return {
    method,
    path,
    ...(asked === undefined ? {} : { asked }),
    start,
    end: start + 1,
    status,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

const ours = (record: Readonly<Record<string, unknown>>) => String(record.title).startsWith('t-');

/** Record 7 as a POST of 't-a' makes it, and as PUTs of a title and of completed change it. */
const A = createTodo({ title: 't-a' }, 7);
const B = applyPatch(A, { title: 't-b' });
const C = applyPatch(A, { title: 't-c' });

describe('the history check', () => {
  it('sees a DELETE answered 404 for the record it removed, though the final list is right', () => {
    const history = [
      timed('POST', '/todos', 0, 201, A, { title: 't-a' }),
      timed('DELETE', '/todos/7', 10, 404, { error: 'Todo not found' }),
      timed('GET', '/todos', 20, 200, []),
    ];
    expect(nonLinearizableRecords(history, ours)).toEqual([
      expect.stringContaining('record 7: no order of its operations explains their answers'),
    ]);
  });

  it('sees a PUT answered with a record it did not leave', () => {
    const history = [
      timed('POST', '/todos', 0, 201, A, { title: 't-a' }),
      timed('PUT', '/todos/7', 10, 200, A, { completed: true }),
    ];
    expect(nonLinearizableRecords(history, ours)).toHaveLength(1);
  });

  it('accepts writes of two clients that overlap, whichever took effect last, and a write whose answer was lost', () => {
    const history = [
      timed('POST', '/todos', 0, 201, A, { title: 't-a' }),
      { ...timed('PUT', '/todos/7', 10, 200, B, { title: 't-b' }), end: 30 },
      { ...timed('PUT', '/todos/7', 12, 200, C, { title: 't-c' }), end: 28 },
      timed('GET', '/todos/7', 40, 200, B),
      timed(
        'PUT',
        '/todos/7',
        50,
        503,
        { error: 'Service temporarily unavailable, please retry' },
        { completed: true },
      ),
      timed('GET', '/todos', 60, 200, [B]),
      timed('GET', '/todos', 70, 200, [applyPatch(B, { completed: true })]),
    ];
    expect(nonLinearizableRecords(history, ours)).toEqual([]);
  });

  it('accepts a POST answered 503 whose record appears later, and sees one that appears before it was sent', () => {
    const created = [
      timed('POST', '/todos', 0, 503, { error: 'Service temporarily unavailable, please retry' }, { title: 't-a' }),
      timed('GET', '/todos', 10, 200, [createTodo({ title: 't-a' }, 9)]),
    ];
    expect(nonLinearizableRecords(created, ours)).toEqual([]);
    const early = [
      timed('GET', '/todos', 0, 200, [createTodo({ title: 't-a' }, 9)]),
      timed('POST', '/todos', 10, 503, { error: 'Service temporarily unavailable, please retry' }, { title: 't-a' }),
    ];
    expect(nonLinearizableRecords(early, ours)).toHaveLength(1);
  });
});

/** The five handlers on a plain HTTP server, some of them replaced: a service that may be wrong. */
async function serve(replace: Partial<Record<FunctionName, APIGatewayProxyHandlerV2>> = {}): Promise<Server> {
  resetMemoryStore();
  const handlers = { ...handlersOn(memoryStore), ...replace };
  const server = createServer((request: IncomingMessage, response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const method = (request.method ?? 'GET') as Method;
      const [, id] = /^\/todos(?:\/([^/]+))?$/.exec(request.url ?? '') ?? [];
      const name = functionFor(method, id !== undefined);
      if (name === undefined) {
        response.writeHead(404).end();
        return;
      }
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8');
      const answer = await invoke(
        handlers[name],
        event({ method, ...(id === undefined ? {} : { id }), ...(body === undefined ? {} : { rawBody: body }) }),
        context(),
      );
      response.writeHead(answer.statusCode ?? 200, answer.headers as Record<string, string>).end(answer.body);
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  return server;
}

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map(async (server) => new Promise((resolve) => server.close(resolve))));
  servers = [];
});

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Enough requests that DELETEs of records the clients hold are certain to be among them. */
const WORKLOAD = { clients: 6, requestsPerClient: 40, keyed: false, retries: 0, shared: 3 };

describe('the history check, across two versions of the domain (a deploy: issue 38)', () => {
  // Version N+1's field (test/support/next-version/todos.ts), which the check knows of by no name.
  const high = next.createTodo({ title: 't-a', priority: 'high' }, 7);

  it('compares every field an answer shows: a field that changed with no write asking for it is seen', () => {
    const history = [
      timed('POST', '/todos', 0, 201, high, { title: 't-a', priority: 'high' }),
      timed('PUT', '/todos/7', 10, 200, next.applyPatch(high, { title: 't-b', priority: 'normal' }), { title: 't-b' }),
    ];
    expect(nonLinearizableRecords(history, ours)).toEqual([
      expect.stringContaining('record 7: no order of its operations explains their answers'),
    ]);
  });

  it('accepts an older version’s view, which does not show the field, between answers that do', () => {
    const history = [
      timed('POST', '/todos', 0, 201, high, { title: 't-a', priority: 'high' }),
      timed('PUT', '/todos/7', 10, 200, B, { title: 't-b' }),
      timed('GET', '/todos', 20, 200, [next.applyPatch(high, { title: 't-b' })]),
    ];
    expect(nonLinearizableRecords(history, ours)).toEqual([]);
  });
});

describe('the workload’s check, against a running service', () => {
  it('finds nothing wrong with a right service, clients sharing records included', async () => {
    const report = await runWorkload(urlOf(await serve()), WORKLOAD);
    expect(report.problems).toEqual([]);
    expect(report.history.filter((exchange) => exchange.client === -1)).toHaveLength(3);
  });

  it('finds a service whose DELETE removes the record and then answers 404', async () => {
    const { deleteTodo } = handlersOn(memoryStore);
    const report = await runWorkload(
      urlOf(
        await serve({
          deleteTodo: async (...args) => {
            const answer = await invoke(deleteTodo, args[0], args[1]);
            return answer.statusCode === 200
              ? { ...answer, statusCode: 404, body: '{"error":"Todo not found"}' }
              : answer;
          },
        }),
      ),
      WORKLOAD,
    );
    expect(report.nonLinearizable).toBeGreaterThan(0);
    expect(report.problems).toContainEqual(
      expect.stringMatching(/no order of its operations explains their answers.*DELETE/),
    );
  });
});
