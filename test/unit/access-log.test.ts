import { describe, expect, it } from '@jest/globals';
import { accessLog, type Answered, type LoggedRequest } from '../../lib/access-log';
import { StoreUnavailable, TodoNotFound } from '../../lib/errors';
import { created, json, text } from '../../lib/http';
import { createTodo } from '../../lib/todos';

/** A request as httpHandler hands it to accessLog: a warm container's GET /todos/{id}, unless told otherwise. */
function request(overrides: Partial<LoggedRequest> = {}): LoggedRequest {
  return {
    method: 'GET',
    route: 'GET /todos/{id}',
    pathId: '2',
    requestId: 'aws-request-id',
    durationMs: 0.12,
    coldStart: false,
    ...overrides,
  };
}

const POST = request({ method: 'POST', route: 'POST /todos', pathId: undefined });
const DELETE = request({ method: 'DELETE', route: 'DELETE /todos/{id}' });
const PUT = request({ method: 'PUT', route: 'PUT /todos/{id}' });

const todo = createTodo({ title: 'secret title text' }, 3);

describe('accessLog: the request’s line', () => {
  it('names the request and its answer, at info', () => {
    expect(accessLog(request(), { response: json(200, { id: 2 }) })).toEqual({
      level: 'info',
      fields: {
        message: 'request',
        method: 'GET',
        route: 'GET /todos/{id}',
        status: 200,
        durationMs: 0.12,
        requestId: 'aws-request-id',
        todoId: '2',
        error: undefined,
      },
      metrics: [],
    });
  });

  it('names a POST’s new record by the id in the store’s answer, never by its Location', () => {
    const answered: Answered = {
      response: json(201, todo, { location: '/todos/not-this-one' }),
      todoId: 3,
      replayed: false,
    };
    expect(accessLog(POST, answered).fields).toMatchObject({ status: 201, todoId: '3' });
  });

  it('names a record by the path’s {id} as sent, where there is one', () => {
    const answered: Answered = { response: json(200, { ...todo, id: 7 }), todoId: 7, replayed: false };
    expect(accessLog(request({ method: 'PUT', pathId: '007' }), answered).fields).toMatchObject({ todoId: '007' });
  });

  it('keeps the first 32 characters of a path id', () => {
    expect(accessLog(request({ pathId: '9'.repeat(400) }), { response: json(404, {}) }).fields.todoId).toBe(
      '9'.repeat(32),
    );
  });

  it('never holds the title or the body', () => {
    const entry = accessLog(POST, { response: created(todo), todoId: 3, replayed: false });
    expect(JSON.stringify(entry)).not.toContain('secret title text');
  });

  it('logs a 4xx at info, without its error', () => {
    const entry = accessLog(request({ pathId: '99' }), { response: json(404, {}), error: new TodoNotFound() });
    expect(entry.level).toBe('info');
    expect(entry.fields.error).toBeUndefined();
  });

  it('logs a 5xx at error, with the error’s stack and causes', () => {
    const error = new Error('boom', { cause: new Error('underneath') });
    const entry = accessLog(request(), { response: json(500, {}), error });
    expect(entry.level).toBe('error');
    expect(entry.fields.error).toMatchObject({
      name: 'Error',
      message: 'boom',
      stack: expect.stringContaining('access-log.test.ts'),
      cause: { message: 'underneath' },
    });
  });

  it('names what it can of an event that is not API Gateway’s', () => {
    const unknown = request({ method: undefined, route: undefined, pathId: undefined });
    expect(accessLog(unknown, { response: json(400, {}) })).toMatchObject({
      level: 'info',
      fields: { method: undefined, route: undefined, status: 400, todoId: undefined },
      metrics: [],
    });
  });
});

describe('accessLog: the metrics a request counts', () => {
  it.each<[string, LoggedRequest, Answered, string[]]>([
    ['a POST answered 201', POST, { response: created(todo), todoId: 3, replayed: false }, ['Created']],
    ['a DELETE answered 200', DELETE, { response: text(200, 'Deleted'), replayed: false }, ['Deleted']],
    ['a replayed POST, once, as a replay', POST, { response: created(todo), todoId: 3, replayed: true }, ['Replayed']],
    ['a replayed DELETE, as a replay', DELETE, { response: text(200, 'Deleted'), replayed: true }, ['Replayed']],
    ['a PUT', PUT, { response: json(200, todo), todoId: 3, replayed: false }, []],
    ['a GET', request(), { response: json(200, todo) }, []],
    ['a refused POST', POST, { response: json(400, {}), error: new Error('x') }, []],
    ['a DELETE of no record', DELETE, { response: json(404, {}), error: new TodoNotFound() }, []],
    ['a POST answered 200, which creates nothing', POST, { response: json(200, {}) }, []],
    ['a GET answered 201', request(), { response: json(201, {}) }, []],
  ])('counts %s as %j', (_case, logged, answered, metrics) => {
    expect(accessLog(logged, answered).metrics).toEqual(metrics);
  });

  it('counts a cold start first, beside what the request counts', () => {
    const entry = accessLog({ ...POST, coldStart: true }, { response: created(todo), todoId: 3, replayed: false });
    expect(entry.metrics).toEqual(['ColdStart', 'Created']);
  });

  it.each([
    ['StoreTimeouts', true],
    ['StoreErrors', false],
  ])('counts a 503 from the store by its cause: %s', (metric, timedOut) => {
    const error = new StoreUnavailable('DynamoDB did not answer', { timedOut });
    const entry = accessLog(request(), { response: json(503, {}), error });
    expect(entry).toMatchObject({ level: 'error', metrics: [metric] });
  });
});
