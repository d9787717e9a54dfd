import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { START_WITHIN_MS } from '../../harness/offline';
import { expectJson } from '../support/expectations';
import { E2E_STORES, startService, type Service } from '../support/servers';

/**
 * Over real HTTP against `npm start` and `npm run start:dynamodb`, every response checked against
 * openapi.yaml: the Idempotency-Key (a retried write gets its first answer), the list's size
 * limit (a 409 rather than an unanswerable list), and GET /todos gzip-compressed.
 */

/** GET /todos as raw bytes, with the Accept-Encoding given: fetch would ask for gzip and decode it itself. */
function rawList(url: string, acceptEncoding: string): Promise<{ headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/todos`, { headers: { 'accept-encoding': acceptEncoding } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve({ headers: response.headers, body: Buffer.concat(chunks) });
      });
    });
    request.on('error', reject);
    request.end();
  });
}

describe.each(E2E_STORES)('%s store', (store) => {
  let service: Service;
  beforeAll(async () => {
    service = await startService(store);
  }, START_WITHIN_MS);
  afterAll(async () => {
    await service.stop();
  });
  const keyed = (key: string) => ({ 'idempotency-key': `"${key}-${store}"` });

  it('answers a POST sent again with its Idempotency-Key with the first 201, Location and Idempotent-Replayed', async () => {
    const send = () =>
      service.api.request('POST', '/todos', { body: { title: 'once over HTTP' }, headers: keyed('post') });
    const first = await send();
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const titles = ((await service.api.get('/todos')).json() as { title: string }[]).map((todo) => todo.title);
    expect(titles.filter((title) => title === 'once over HTTP')).toHaveLength(1);
  });

  it('answers a DELETE sent again with its key with the first 200 "Deleted"', async () => {
    const { id } = (await service.api.post('/todos', { title: 'to delete' })).json() as { id: number };
    const send = () => service.api.request('DELETE', `/todos/${id}`, { headers: keyed(`delete-${id}`) });
    expect((await send()).text).toBe('Deleted');
    const again = await send();
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([200, 'Deleted', 'true']);
  });

  it('answers 422 for a key sent again with another body, and 400 for a malformed key', async () => {
    await service.api.request('POST', '/todos', { body: { title: 'a' }, headers: keyed('reused') });
    expectJson(await service.api.request('POST', '/todos', { body: { title: 'b' }, headers: keyed('reused') }), 422, {
      error: 'Idempotency-Key was used with a different request',
    });
    expectJson(
      await service.api.request('POST', '/todos', { body: { title: 'c' }, headers: { 'idempotency-key': 'unquoted' } }),
      400,
      { error: expect.stringContaining('Idempotency-Key') },
    );
  });

  it('sends GET /todos gzip-compressed to a client that accepts gzip, and plain to one that does not', async () => {
    for (let i = 0; i < 30; i++) await service.api.post('/todos', { title: `compressible title number ${i}` });
    const plain = await rawList(service.url, 'identity');
    const zipped = await rawList(service.url, 'gzip');
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toEqual(expect.stringMatching(/accept-encoding/i));
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gunzipSync(zipped.body).toString('utf8')).toBe(plain.body.toString('utf8'));
    expect(zipped.body.length).toBeLessThan(plain.body.length / 2);
  });
});

describe.each(E2E_STORES)('a list at its size limit (%s store)', (store) => {
  let service: Service;
  beforeAll(async () => {
    service = await startService(store);
  }, START_WITHIN_MS);
  afterAll(async () => {
    await service.stop();
  });

  /** About 90 POSTs of 64 KB through the emulator, one at a time, and a list of 6 MB: 120 s allows for a busy machine. */
  const FILL_WITHIN_MS = 120_000;
  it(
    'refuses the POST that would take it past 6,000,000 bytes with a JSON 409, and GET /todos still answers',
    async () => {
      const title = 'x'.repeat(65_536 - 12);
      let created = 0;
      for (;;) {
        const response = await service.api.post('/todos', { title });
        if (response.status === 409) {
          expectJson(response, 409, {
            error: 'The list would be larger than 6000000 bytes: delete records or shorten titles',
          });
          break;
        }
        expect(response.status).toBe(201);
        created++;
      }
      expect(created).toBeGreaterThan(80);
      const list = await service.api.get('/todos');
      expect(list.status).toBe(200);
      expect((list.json() as unknown[]).length).toBe(created + 2);
    },
    FILL_WITHIN_MS,
  );
});
