import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import fs from 'node:fs';
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { createTodo } from '../support/routes';
import { getTodo } from '../support/routes';
import { context, event, invoke, type EventOptions } from '../support/event';
import { httpHandler, json } from '../../lib/http';
import { errorFields, logLevelFrom, readLogLevel, writeLine } from '../../lib/log';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';
import { requestLogLine } from '../support/expectations';
import { logLines, withLogLevel } from '../support/logs';

/** The handlers as deployed: logging at the default level, info. */
describe('request logs', () => {
  beforeAll(async () => {
    // The container's first request is a cold start, and its line says so (test/unit/metrics.test.ts):
    // the lines below are those of a warm container.
    await withLogLevel('silent', () => invoke(getTodo(memoryStore), event({ id: '1' })));
  });
  beforeEach(() => {
    resetMemoryStore();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  const call = (handler: APIGatewayProxyHandlerV2, options: EventOptions) =>
    withLogLevel(undefined, () => logLines(() => invoke(handler, event(options))));

  it.each([
    ['no event at all', undefined],
    ['an empty event (`invoke local` with no --path)', {}],
    ['an event of another service', { Records: [{ eventSource: 'aws:s3' }] }],
    ['a REST API event (payload 1.0)', { httpMethod: 'GET', path: '/todos/1', headers: {} }],
  ])('answers %s with a JSON 400, logged, and never throws', async (_what, malformed) => {
    const handler = getTodo(memoryStore);
    const lines = await withLogLevel(undefined, () =>
      logLines(() => Promise.resolve(handler(malformed as never, context(), () => undefined))),
    );
    const answer = await Promise.resolve(handler(malformed as never, context(), () => undefined));
    expect(answer).toEqual({
      statusCode: 400,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ error: 'Not an API Gateway HTTP API event' }),
    });
    expect(lines).toEqual([expect.objectContaining({ level: 'info', message: 'request', status: 400 })]);
  });

  it('writes one JSON line per request with level, method, route, status, duration, request id and todo id', async () => {
    const lines = await call(getTodo(memoryStore), { id: '2' });
    expect(lines).toEqual([
      requestLogLine({
        method: 'GET',
        route: 'GET /todos/{id}',
        status: 200,
        requestId: 'aws-request-id',
        todoId: '2',
      }),
    ]);
  });

  it('logs the id of the record a POST created, and never the body or the title', async () => {
    const lines = await call(createTodo(memoryStore), {
      method: 'POST',
      body: { title: 'secret title text' },
    });
    expect(lines).toEqual([expect.objectContaining({ level: 'info', status: 201, todoId: '3', Created: 1 })]);
    expect(JSON.stringify(lines)).not.toContain('secret title text');
  });

  it('logs the id of the record a write answered with from the handler’s answer, not from its Location', async () => {
    const handler = httpHandler(() =>
      Promise.resolve({ response: json(201, {}, { location: '/todos/elsewhere' }), todoId: 41, replayed: false }),
    );
    const lines = await call(handler, { method: 'POST', body: { title: 't' } });
    expect(lines).toEqual([expect.objectContaining({ level: 'info', status: 201, todoId: '41', Created: 1 })]);
  });

  it('logs 4xx at info, without a stack', async () => {
    const notFound = await call(getTodo(memoryStore), { id: '99' });
    const badRequest = await call(createTodo(memoryStore), { method: 'POST', rawBody: '{"title": "x",' });
    for (const [line] of [notFound, badRequest]) {
      expect(line).toMatchObject({ level: 'info' });
      expect(line).not.toHaveProperty('error');
    }
    expect(notFound[0]).toMatchObject({ status: 404, todoId: '99' });
    expect(badRequest[0]).toMatchObject({ status: 400 });
    expect(JSON.stringify(badRequest)).not.toContain('"title"');
  });

  it('logs an unexpected failure at error, with its stack in the log and not in the body', async () => {
    let response: unknown;
    const handler = httpHandler(() => Promise.reject(new Error('boom')));
    const lines = await withLogLevel(undefined, () =>
      logLines(async () => {
        response = await invoke(handler, event());
      }),
    );
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'error',
        status: 500,
        error: expect.objectContaining({
          name: 'Error',
          message: 'boom',
          stack: expect.stringContaining('log.test.ts'),
        }),
      }),
    ]);
    expect(JSON.stringify(response)).not.toContain('boom');
  });

  it('keeps the first 32 characters of a very long path id', async () => {
    const [line] = await call(getTodo(memoryStore), { id: '9'.repeat(400) });
    expect(line?.todoId).toBe('9'.repeat(32));
  });
});

describe('LOG_LEVEL', () => {
  it('silent writes nothing; error keeps failures and drops 4xx', async () => {
    const handler = getTodo(memoryStore);
    expect(await withLogLevel('silent', () => logLines(() => invoke(handler, event({ id: '1' }))))).toEqual([]);
    expect(await withLogLevel('error', () => logLines(() => invoke(handler, event({ id: '99' }))))).toEqual([]);
    const failing = httpHandler(() => Promise.reject(new Error('x')));
    expect(await withLogLevel('error', () => logLines(() => invoke(failing, event())))).toHaveLength(1);
  });

  it('keeps the LOG_LEVEL it read until it reads it again, with nothing reloaded', async () => {
    const handler = getTodo(memoryStore);
    await withLogLevel('silent', async () => {
      // Changed behind its back: a container's environment does not change, so it is read once.
      process.env.LOG_LEVEL = 'info';
      expect(await logLines(() => invoke(handler, event({ id: '1' })))).toEqual([]);
      readLogLevel();
      expect(await logLines(() => invoke(handler, event({ id: '1' })))).toHaveLength(1);
    });
  });

  it('is read case-insensitively, and an unknown value means info', () => {
    expect([logLevelFrom('DEBUG'), logLevelFrom('warn'), logLevelFrom('loud'), logLevelFrom(undefined)]).toEqual([
      'debug',
      'warn',
      'info',
      'info',
    ]);
  });

  it('describes a thrown non-Error too', () => {
    expect(errorFields('plain')).toEqual({ message: 'plain' });
    expect(errorFields(new Error('outer', { cause: new Error('inner') }))).toMatchObject({
      message: 'outer',
      cause: { message: 'inner' },
    });
  });
});

describe('writeLine', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('hands process.stdout the whole line when the synchronous write fails (a full non-blocking pipe)', () => {
    jest.spyOn(fs, 'writeSync').mockImplementation(() => {
      throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' });
    });
    const queued = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    writeLine('{"a":1}\n');
    expect(queued).toHaveBeenCalledTimes(1);
    expect(Buffer.from(queued.mock.calls[0]?.[0] as Uint8Array).toString()).toBe('{"a":1}\n');
  });

  it('hands process.stdout the rest of a line written only in part', () => {
    jest.spyOn(fs, 'writeSync').mockImplementation(() => 3);
    const queued = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    writeLine('{"a":1}\n');
    expect(Buffer.from(queued.mock.calls[0]?.[0] as Uint8Array).toString()).toBe('":1}\n');
  });

  it('writes nothing more when the synchronous write takes it all', () => {
    jest.spyOn(fs, 'writeSync').mockImplementation((_fd: number, data: unknown) => (data as Uint8Array).length);
    const queued = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    writeLine('{"a":1}\n');
    expect(queued).not.toHaveBeenCalled();
  });
});
