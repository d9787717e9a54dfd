import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import fs from 'node:fs';
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import type { TodoStore } from '../../lib/todos';
import { event, invoke, type EventOptions } from '../support/event';
import { requestLogLine } from '../support/expectations';
import { STORES } from '../support/stores';

/** Every line written to fd 1 while `run` runs, parsed as JSON (each must be). */
async function logLines(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const written: string[] = [];
  const spy = jest.spyOn(fs, 'writeSync').mockImplementation((fd: number, data: unknown) => {
    if (fd !== 1 || !(data instanceof Uint8Array)) throw new Error(`unexpected write to ${fd}`);
    written.push(Buffer.from(data).toString('utf8'));
    return data.length;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return written
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

interface Modules {
  http: typeof import('../../lib/http');
  createTodo: typeof import('../../functions/createTodo');
  getTodo: typeof import('../../functions/getTodo');
  log: typeof import('../../lib/log');
}

/** The modules as a container with this LOG_LEVEL loads them: the level is read once, at load. */
async function loadWith(level: string | undefined): Promise<Modules> {
  const saved = process.env.LOG_LEVEL;
  if (level === undefined) delete process.env.LOG_LEVEL;
  else process.env.LOG_LEVEL = level;
  try {
    let modules: Modules | undefined;
    await jest.isolateModulesAsync(async () => {
      modules = {
        http: await import('../../lib/http'),
        createTodo: await import('../../functions/createTodo'),
        getTodo: await import('../../functions/getTodo'),
        log: await import('../../lib/log'),
      };
    });
    if (modules === undefined) throw new Error('modules did not load');
    return modules;
  } finally {
    process.env.LOG_LEVEL = saved;
  }
}

describe('request logs', () => {
  let store: TodoStore;
  let modules: Modules;
  beforeEach(async () => {
    store = await (STORES[0]?.fresh() ?? Promise.reject(new Error('no store')));
    modules = await loadWith(undefined);
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  const call = (handler: APIGatewayProxyHandlerV2, options: EventOptions) =>
    logLines(() => invoke(handler, event(options)));

  it('writes one JSON line per request with level, method, route, status, duration, request id and todo id', async () => {
    const lines = await call(modules.getTodo.getTodo(store), { id: '2' });
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
    const lines = await call(modules.createTodo.createTodo(store), {
      method: 'POST',
      body: { title: 'secret title text' },
    });
    expect(lines).toEqual([expect.objectContaining({ level: 'info', status: 201, todoId: '3' })]);
    expect(JSON.stringify(lines)).not.toContain('secret title text');
  });

  it('logs 4xx at info, without a stack', async () => {
    const notFound = await call(modules.getTodo.getTodo(store), { id: '99' });
    const badRequest = await call(modules.createTodo.createTodo(store), { method: 'POST', rawBody: '{"title": "x",' });
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
    const handler = modules.http.httpHandler(() => Promise.reject(new Error('boom')));
    const lines = await logLines(async () => {
      response = await invoke(handler, event());
    });
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

  it('keeps a cut-down copy of a very long path id', async () => {
    const [line] = await call(modules.getTodo.getTodo(store), { id: '9'.repeat(400) });
    expect(line?.todoId).toBe(`${'9'.repeat(32)}…`);
  });
});

describe('LOG_LEVEL', () => {
  it('silent writes nothing; error keeps failures and drops 4xx', async () => {
    const store = await (STORES[0]?.fresh() ?? Promise.reject(new Error('no store')));
    const silent = await loadWith('silent');
    expect(await logLines(() => invoke(silent.getTodo.getTodo(store), event({ id: '1' })))).toEqual([]);
    const errorsOnly = await loadWith('error');
    expect(await logLines(() => invoke(errorsOnly.getTodo.getTodo(store), event({ id: '99' })))).toEqual([]);
    const failing = errorsOnly.http.httpHandler(() => Promise.reject(new Error('x')));
    expect(await logLines(() => invoke(failing, event()))).toHaveLength(1);
  });

  it('is read case-insensitively, and an unknown value means info', async () => {
    const { logLevelFrom } = (await loadWith(undefined)).log;
    expect([logLevelFrom('DEBUG'), logLevelFrom('warn'), logLevelFrom('loud'), logLevelFrom(undefined)]).toEqual([
      'debug',
      'warn',
      'info',
      'info',
    ]);
  });

  it('describes a thrown non-Error too', async () => {
    const { errorFields } = (await loadWith(undefined)).log;
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

  it('hands process.stdout the whole line when the synchronous write fails (a full non-blocking pipe)', async () => {
    const { writeLine } = (await loadWith(undefined)).log;
    jest.spyOn(fs, 'writeSync').mockImplementation(() => {
      throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' });
    });
    const queued = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    writeLine('{"a":1}\n');
    expect(queued).toHaveBeenCalledTimes(1);
    expect(Buffer.from(queued.mock.calls[0]?.[0] as Uint8Array).toString()).toBe('{"a":1}\n');
  });

  it('hands process.stdout the rest of a line written only in part', async () => {
    const { writeLine } = (await loadWith(undefined)).log;
    jest.spyOn(fs, 'writeSync').mockImplementation(() => 3);
    const queued = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    writeLine('{"a":1}\n');
    expect(Buffer.from(queued.mock.calls[0]?.[0] as Uint8Array).toString()).toBe('":1}\n');
  });

  it('writes nothing more when the synchronous write takes it all', async () => {
    const { writeLine } = (await loadWith(undefined)).log;
    jest.spyOn(fs, 'writeSync').mockImplementation((_fd: number, data: unknown) => (data as Uint8Array).length);
    const queued = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    writeLine('{"a":1}\n');
    expect(queued).not.toHaveBeenCalled();
  });
});
