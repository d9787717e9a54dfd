import { describe, expect, it } from '@jest/globals';
import { Contract } from '../support/contract';

const contract = new Contract();
const json = 'application/json; charset=utf-8';

// That the document is valid OpenAPI 3.1 is checked by `npm run lint` (validate-api, against the
// official OpenAPI 3.1 schema); these tests pin what it says and the checker built on it.
describe('openapi.yaml', () => {
  it('describes exactly the five operations of SPEC.md', () => {
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

  it('says that no operation needs credentials (SPEC.md §5)', () => {
    expect((contract.document as unknown as { security: unknown }).security).toEqual([]);
  });

  it('accepts what the service answers, examples included', () => {
    const ok = [
      ['GET', '/todos', { status: 200, contentType: json, text: '[{"id":1,"title":"a","completed":false}]' }],
      ['GET', '/todos', { status: 200, contentType: json, text: '[]' }],
      ['GET', '/todos/1', { status: 404, contentType: json, text: '{"error":"Todo not found"}' }],
      ['POST', '/todos', { status: 201, contentType: json, text: '{"id":3,"title":"","completed":false}' }],
      ['POST', '/todos', { status: 413, contentType: json, text: '{"error":"too large"}' }],
      ['PUT', '/todos/abc', { status: 400, contentType: json, text: '{"error":"title must be a string"}' }],
      ['DELETE', '/todos/1', { status: 200, contentType: 'text/plain; charset=utf-8', text: 'Deleted' }],
      ['GET', '/todos', { status: 503, contentType: json, text: '{"error":"retry"}' }],
      // API Gateway's own answers: a throttled request, and a body over its 10 MB limit.
      ['GET', '/todos/1', { status: 429, contentType: json, text: '{"message":"Too Many Requests"}' }],
      ['POST', '/todos', { status: 413, contentType: json, text: '{"message":"Request Entity Too Large"}' }],
      ['PATCH', '/todos/1', { status: 404, contentType: json, text: '{"message":"Not Found"}' }],
    ] as const;
    for (const [method, path, response] of ok)
      expect(() => {
        contract.check(method, path, response);
      }).not.toThrow();
  });

  it.each([
    [
      'an undocumented status',
      'GET',
      '/todos/1',
      { status: 400, contentType: json, text: '{"error":"x"}' },
      /not documented/,
    ],
    ['a wrong media type', 'DELETE', '/todos/1', { status: 200, contentType: json, text: '"Deleted"' }, /media type/],
    [
      'a body that is not "Deleted"',
      'DELETE',
      '/todos/1',
      { status: 200, contentType: 'text/plain', text: 'OK' },
      /schema/,
    ],
    [
      'a Todo with an extra field',
      'GET',
      '/todos/1',
      { status: 200, contentType: json, text: '{"id":1,"title":"a","completed":false,"x":1}' },
      /schema/,
    ],
    [
      'a Todo with a string id',
      'POST',
      '/todos',
      { status: 201, contentType: json, text: '{"id":"3","title":"a","completed":false}' },
      /schema/,
    ],
    [
      'another 404 message',
      'GET',
      '/todos/9',
      { status: 404, contentType: json, text: '{"error":"Not found"}' },
      /schema/,
    ],
    [
      'a 500 on a route it does not have',
      'GET',
      '/nope',
      { status: 500, contentType: json, text: '{}' },
      /no such operation/,
    ],
  ] as const)('rejects %s', (_name, method, path, response, message) => {
    expect(() => {
      contract.check(method, path, response);
    }).toThrow(message);
  });
});
