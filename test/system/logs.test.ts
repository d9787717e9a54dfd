import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiClient } from '../support/client';
import { eventually } from '../../harness/wait';
import { requestLogLine } from '../support/expectations';
import { START_WITHIN_MS, startOffline, type OfflineServer } from '../../harness/offline';

/** What an operator sees from a running `npm start`: one JSON line per request. */
describe('npm start logs', () => {
  let server: OfflineServer;
  beforeAll(async () => {
    server = await startOffline({ env: { LOG_LEVEL: 'info' } });
  }, START_WITHIN_MS);
  afterAll(async () => {
    await server.stop();
  });

  const jsonLines = () =>
    server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it('prints one JSON line for a request, with its fields and no title', async () => {
    const api = new ApiClient(server.url);
    const before = jsonLines().length;
    expect((await api.post('/todos', { title: 'do not log me' })).status).toBe(201);
    expect((await api.get('/todos/3')).status).toBe(200);
    // stdout arrives a moment after the response.
    await eventually(() => jsonLines().length >= before + 2, { within: 10_000, what: 'two log lines' });
    const lines = jsonLines().slice(before);
    expect(lines).toEqual([
      expect.objectContaining({ level: 'info', method: 'POST', route: 'POST /todos', status: 201, todoId: '3' }),
      requestLogLine(
        {
          method: 'GET',
          route: 'GET /todos/{id}',
          status: 200,
          requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
          todoId: '3',
        },
        // getTodo's first request: a cold start of its bundle.
        ['ColdStart'],
      ),
    ]);
    expect(server.output()).not.toContain('do not log me');
  });
});
