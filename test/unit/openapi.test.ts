import { describe, expect, it } from '@jest/globals';
import { MAX_TITLE_LENGTH, createTodo, todoJson } from '../../lib/todos';
import { Contract, type ReceivedResponse } from '../../smoke/contract';

const contract = new Contract();

/** The part of a JSON Schema these tests read. */
interface Schema {
  readonly maxLength?: number;
  readonly properties?: Readonly<Record<string, unknown>>;
}
const json = 'application/json; charset=utf-8';
const text = 'text/plain; charset=utf-8';

/** An answer with these headers; `contentType` is its Content-Type. */
function answer(
  status: number,
  contentType: string,
  body: string,
  headers: Record<string, string> = {},
): ReceivedResponse {
  return { status, headers: new Headers({ 'content-type': contentType, ...headers }), text: body };
}
/** Tags as the service makes them (lib/conditional.ts): a Todo's strong, the list's weak. */
const etag = '"x0bR1dG2rqz5m7GkqvYt0w"';
const listEtag = `W/${etag}`;
const list = (body: string, headers: Record<string, string> = { vary: 'accept-encoding', etag: listEtag }) =>
  answer(200, json, body, headers);
const created = { location: '/todos/3', etag };
/** A Todo's JSON as the service answers it (lib/todos.ts), whatever fields a Todo has. */
const todo = (id: number, title = 'a') => todoJson(createTodo({ title }, id));
/** That JSON with a change the schema refuses. */
const todoWith = (id: number, change: Record<string, unknown>) =>
  JSON.stringify({ ...createTodo({ title: 'a' }, id), ...change });

// That the document is valid OpenAPI 3.1 is checked by `npm run lint` (validate-api, against the
// official OpenAPI 3.1 schema); these tests pin what it says and the checker built on it.
describe('openapi.yaml', () => {
  it('describes exactly the five operations of docs/spec.md', () => {
    const operations = Object.entries(contract.document.paths).flatMap(([path, item]) =>
      Object.keys(item).flatMap((method) => (method === 'parameters' ? [] : [`${method.toUpperCase()} ${path}`])),
    );
    expect(operations.sort()).toEqual([
      'DELETE /todos/{id}',
      'GET /todos',
      'GET /todos/{id}',
      'POST /todos',
      'PUT /todos/{id}',
    ]);
  });

  it('caps a title a client sets at MAX_TITLE_LENGTH (lib/todos.ts), for POST and PUT alike', () => {
    const { schemas } = contract.document.components as { schemas: Record<string, Schema> };
    expect(schemas.Title?.maxLength).toBe(MAX_TITLE_LENGTH);
    const titleRef = { $ref: '#/components/schemas/Title' };
    expect(schemas.NewTodo?.properties?.title).toEqual(titleRef);
    expect(schemas.TodoPatch?.properties?.title).toEqual(titleRef);
  });

  it('says that no operation needs credentials (docs/spec.md §5)', () => {
    expect((contract.document as unknown as { security: unknown }).security).toEqual([]);
  });

  it('accepts what the service answers, examples included', () => {
    const ok = [
      ['GET', '/todos', list(`[${todo(1)}]`)],
      ['GET', '/todos', list('[]')],
      // npm start's gateway names Origin too; a compressed list says so.
      ['GET', '/todos', list('[]', { vary: 'accept-encoding,origin', etag: listEtag })],
      ['GET', '/todos', list('[]', { vary: 'Origin, Accept-Encoding', 'content-encoding': 'gzip', etag: listEtag })],
      ['GET', '/todos', answer(304, json, '', { etag: listEtag })],
      ['GET', '/todos/1', answer(200, json, todo(1), { etag })],
      ['GET', '/todos/1', answer(304, json, '', { etag })],
      ['PUT', '/todos/1', answer(200, json, todo(1), { etag })],
      ['PUT', '/todos/1', answer(412, json, '{"error":"changed"}')],
      ['DELETE', '/todos/1', answer(412, json, '{"error":"changed"}')],
      // If-Match on a GET: a record changed since, or any tag but * on the list.
      ['GET', '/todos/1', answer(412, json, '{"error":"changed"}')],
      ['GET', '/todos', answer(412, json, '{"error":"weak"}')],
      ['GET', '/todos/1', answer(404, json, '{"error":"Todo not found"}')],
      ['POST', '/todos', answer(201, json, todo(3, ''), created)],
      ['POST', '/todos', answer(201, json, todo(3, ''), { ...created, 'idempotent-replayed': 'true' })],
      ['POST', '/todos', answer(413, json, '{"error":"too large"}')],
      ['POST', '/todos', answer(409, json, '{"error":"in progress"}', { 'retry-after': '1' })],
      ['POST', '/todos', answer(409, json, '{"error":"full"}')],
      ['PUT', '/todos/abc', answer(400, json, '{"error":"title must be a string"}')],
      ['DELETE', '/todos/1', answer(200, text, 'Deleted')],
      ['GET', '/todos', answer(503, json, '{"error":"retry"}', { 'retry-after': '1' })],
      // API Gateway's own answers: a throttled request, and a body over its 10 MB limit.
      ['GET', '/todos/1', answer(429, json, '{"message":"Too Many Requests"}')],
      ['POST', '/todos', answer(413, json, '{"message":"Request Entity Too Large"}')],
      ['PATCH', '/todos/1', answer(404, json, '{"message":"Not Found"}')],
    ] as const;
    for (const [method, path, response] of ok)
      expect(() => {
        contract.check(method, path, response);
      }).not.toThrow();
  });

  it.each([
    ['an undocumented status', 'GET', '/todos/1', answer(409, json, '{"error":"x"}'), /not documented/],
    ['a Todo without its ETag', 'GET', '/todos/1', answer(200, json, todo(1)), /header ETag is missing/],
    ['a weak ETag on a Todo', 'PUT', '/todos/1', answer(200, json, todo(1), { etag: listEtag }), /header ETag/],
    ['a 412 on a POST', 'POST', '/todos', answer(412, json, '{"error":"x"}'), /not documented/],
    ['a 304 with a body', 'GET', '/todos/1', answer(304, json, todo(1), { etag }), /a body where/],
    ['a wrong media type', 'DELETE', '/todos/1', answer(200, json, '"Deleted"'), /media type/],
    ['a body that is not "Deleted"', 'DELETE', '/todos/1', answer(200, 'text/plain', 'OK'), /schema/],
    ['a Todo with an extra field', 'GET', '/todos/1', answer(200, json, todoWith(1, { x: 1 })), /schema/],
    ['a Todo with a string id', 'POST', '/todos', answer(201, json, todoWith(3, { id: '3' }), created), /schema/],
    ['another 404 message', 'GET', '/todos/9', answer(404, json, '{"error":"Not found"}'), /schema/],
    ['a JSON answer that is not JSON', 'GET', '/todos/9', answer(404, json, '<html>'), /not JSON/],
    ['a 500 on a route it does not have', 'GET', '/nope', answer(500, json, '{}'), /no such operation/],
    ['a list without Vary', 'GET', '/todos', list('[]', { etag: listEtag }), /header Vary is missing/],
    ['a list without its ETag', 'GET', '/todos', list('[]', { vary: 'accept-encoding' }), /header ETag is missing/],
    [
      'a list whose Vary leaves out Accept-Encoding',
      'GET',
      '/todos',
      list('[]', { vary: 'origin', etag: listEtag }),
      /header Vary/,
    ],
    [
      'a list in another encoding',
      'GET',
      '/todos',
      list('[]', { vary: 'accept-encoding', 'content-encoding': 'br', etag: listEtag }),
      /header Content-Encoding/,
    ],
    ['a created Todo without its Location', 'POST', '/todos', answer(201, json, todo(3)), /header Location is missing/],
    [
      'Idempotent-Replayed other than "true"',
      'PUT',
      '/todos/3',
      answer(200, json, todo(3), { 'idempotent-replayed': 'false', etag }),
      /header Idempotent-Replayed/,
    ],
    [
      'a 503 without Retry-After',
      'GET',
      '/todos/1',
      answer(503, json, '{"error":"retry"}'),
      /header Retry-After is missing/,
    ],
    [
      'a Retry-After that is not a number of seconds',
      'DELETE',
      '/todos/1',
      answer(409, json, '{"error":"in progress"}', { 'retry-after': 'soon' }),
      /header Retry-After: "soon"/,
    ],
  ] as const)('rejects %s', (_name, method, path, response, message) => {
    expect(() => {
      contract.check(method, path, response);
    }).toThrow(message);
  });

  it('says which documented answer a response is, and none for the gateway’s own', () => {
    expect(contract.check('GET', '/todos/7', answer(404, json, '{"error":"Todo not found"}'))).toEqual({
      method: 'GET',
      template: '/todos/{id}',
      status: 404,
    });
    expect(contract.check('PATCH', '/todos/7', answer(404, json, '{"message":"Not Found"}'))).toBeUndefined();
  });

  it('lists every status of every operation', () => {
    const statuses = contract.statuses();
    expect(statuses).toContainEqual({ method: 'DELETE', template: '/todos/{id}', status: 200 });
    expect(statuses).toContainEqual({ method: 'POST', template: '/todos', status: 422 });
    expect(statuses.filter(({ method, template }) => method === 'GET' && template === '/todos')).toEqual(
      [200, 304, 400, 412, 429, 500, 503].map((status) => ({ method: 'GET', template: '/todos', status })),
    );
  });
});
