import { describe, expect, it } from '@jest/globals';
import { START_WITHIN_MS, startOffline } from '../../harness/offline';
import { applyPatch, createTodo } from '../../lib/todos';
import { ApiClient } from '../support/client';
import { seed } from '../support/expectations';
import { testDynamoDbEndpoint, uniqueTableName } from '../support/stores';

/** `npm run start:dynamodb` against an endpoint that outlives it: a restart keeps data and counter. */
describe('start:dynamodb with DYNAMODB_ENDPOINT', () => {
  const table = uniqueTableName();
  const start = () =>
    startOffline({ script: 'start:dynamodb', env: { DYNAMODB_ENDPOINT: testDynamoDbEndpoint(), TODOS_TABLE: table } });

  it(
    'keeps the list and the id counter across a restart of the service',
    async () => {
      const first = await start();
      let listBefore: unknown;
      try {
        const api = new ApiClient(first.url);
        expect((await api.post('/todos', { title: 'survives' })).json()).toMatchObject({ id: 3 });
        expect((await api.post('/todos', { title: 'deleted' })).json()).toMatchObject({ id: 4 });
        expect((await api.delete('/todos/4')).status).toBe(200);
        expect((await api.delete('/todos/1')).status).toBe(200);
        expect((await api.put('/todos/2', { title: 'changed' })).status).toBe(200);
        listBefore = (await api.get('/todos')).json();
      } finally {
        await first.stop();
      }

      const second = await start();
      try {
        const api = new ApiClient(second.url);
        expect((await api.get('/todos')).json()).toEqual(listBefore);
        expect(listBefore).toEqual([applyPatch(seed(2), { title: 'changed' }), createTodo({ title: 'survives' }, 3)]);
        // Record 1 is not seeded again, and id 4 is not reused.
        expect((await api.get('/todos/1')).status).toBe(404);
        expect((await api.post('/todos', { title: 'after restart' })).json()).toMatchObject({ id: 5 });
      } finally {
        await second.stop();
      }
    },
    3 * START_WITHIN_MS,
  );
});
