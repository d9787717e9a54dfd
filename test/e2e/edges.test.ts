import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { START_WITHIN_MS } from '../../harness/offline';
import { createTodo, type Todo } from '../../lib/todos';
import { NOT_AN_OBJECT_BODIES, expectBadRequest } from '../support/expectations';
import { E2E_STORES, startService, type Service } from '../support/servers';

/** What docs/spec.md leaves open, answered as users of a well-made API expect. */
describe.each(E2E_STORES)('%s store', (store) => {
  let service: Service;
  beforeAll(async () => {
    service = await startService(store);
  }, START_WITHIN_MS);
  afterAll(() => service.stop());
  const listing = async (): Promise<unknown> => (await service.api.get('/todos')).json();

  describe('bad input', () => {
    it.each(NOT_AN_OBJECT_BODIES.filter((body) => body !== ''))(
      'POST and PUT answer 400 for the body %j',
      async (rawBody) => {
        const before = await listing();
        expectBadRequest(
          await service.api.request('POST', '/todos', { rawBody, headers: { 'content-type': 'application/json' } }),
        );
        expectBadRequest(
          await service.api.request('PUT', '/todos/1', { rawBody, headers: { 'content-type': 'application/json' } }),
        );
        expect(await listing()).toEqual(before);
      },
    );

    it('POST and PUT answer 400 when there is no body at all', async () => {
      expectBadRequest(await service.api.request('POST', '/todos'));
      expectBadRequest(await service.api.request('PUT', '/todos/1'));
    });

    it.each([{}, { title: null }, { title: 1 }, { title: ['a'] }])('POST answers 400 for %j', async (body) => {
      expectBadRequest(await service.api.post('/todos', body));
    });

    it.each([{ title: 1 }, { completed: 'true' }, { title: 'ok', completed: 0 }])(
      'PUT answers 400 for %j and changes nothing, not even the valid fields',
      async (body) => {
        const before = await listing();
        expectBadRequest(await service.api.put('/todos/1', body));
        expect(await listing()).toEqual(before);
      },
    );

    it('no rejected request uses up an id', async () => {
      const first = (await service.api.post('/todos', { title: 'first' })).json() as { id: number };
      expectBadRequest(await service.api.post('/todos', { title: 5 }));
      expectBadRequest(await service.api.request('POST', '/todos', { rawBody: '{' }));
      expect((await service.api.post('/todos', { title: 'second' })).json()).toMatchObject({ id: first.id + 1 });
    });

    it('keys such as __proto__ and constructor never reach a record', async () => {
      const response = await service.api.request('POST', '/todos', {
        rawBody: '{"title":"p","__proto__":{"completed":true,"x":1},"constructor":{"prototype":{"x":1}}}',
      });
      expect(response.status).toBe(201);
      const { id } = response.json() as Todo;
      expect(response.json()).toEqual(createTodo({ title: 'p' }, id));
    });

    it('a body without a JSON content type is still read as JSON', async () => {
      const response = await service.api.request('POST', '/todos', {
        rawBody: '{"title":"form"}',
        headers: { 'content-type': 'text/plain' },
      });
      expect(response.status).toBe(201);
    });
  });

  describe('CORS', () => {
    it('answers a preflight OPTIONS for any origin', async () => {
      const response = await service.api.request('OPTIONS', '/todos/1', {
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'PUT',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(response.status).toBeLessThan(300);
      expect(response.headers.get('access-control-allow-origin')).toMatch(/^(\*|https:\/\/app\.example)$/);
      expect(response.headers.get('access-control-allow-methods')).toContain('PUT');
      expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
    });

    it('puts Access-Control-Allow-Origin on responses, errors included', async () => {
      const headers = { origin: 'https://app.example' };
      for (const response of [
        await service.api.request('GET', '/todos', { headers }),
        await service.api.request('GET', '/todos/999', { headers }),
      ]) {
        expect(response.headers.get('access-control-allow-origin')).toMatch(/^(\*|https:\/\/app\.example)$/);
      }
    });
  });

  describe('routes', () => {
    it.each([
      ['GET', '/nope'],
      ['PATCH', '/todos/1'],
      ['GET', '/todos/1/extra'],
    ] as const)('%s %s is an unknown route: 404', async (method, path) => {
      expect((await service.api.request(method, path)).status).toBe(404);
    });
  });

  describe('concurrency', () => {
    /** A burst that once got 503s from a healthy DynamoDB: the client's sockets ran out. */
    const BURST = 500;

    it(`${BURST} concurrent POSTs all answer 201, with consecutive ids, all listed afterwards`, async () => {
      const responses = await Promise.all(
        Array.from({ length: BURST }, (_, i) => service.api.post('/todos', { title: `c${i}` })),
      );
      expect(responses.filter((response) => response.status !== 201).map((response) => response.text)).toEqual([]);
      const ids = responses.map((response) => (response.json() as { id: number }).id).sort((a, b) => a - b);
      const first = ids[0] ?? 0;
      expect(ids).toEqual(Array.from({ length: BURST }, (_, i) => first + i));
      const listed = ((await service.api.get('/todos')).json() as { id: number }[]).map((todo) => todo.id);
      expect(listed).toEqual(expect.arrayContaining(ids));
      expect(listed).toEqual([...listed].sort((a, b) => a - b));
    });
  });
});
