import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { START_WITHIN_MS } from '../../harness/offline';
import { NOT_FOUND_IDS, expectJson, expectTodoNotFound } from '../support/expectations';
import { E2E_STORES, startService, type Service } from '../support/servers';

/**
 * Every row and rule of docs/spec.md, over real HTTP against `PORT=<n> npm start` (and
 * `npm run start:dynamodb`), every response checked against openapi.yaml. Each test creates the
 * records it works on and asserts ids relative to them, so the tests hold in any order; only the
 * start state has a server of its own.
 */
describe.each(E2E_STORES)('%s store', (store) => {
  // Two servers, started side by side: one that only ever sees the start state, and one the
  // other tests share.
  let fresh: Service;
  let service: Service;
  beforeAll(async () => {
    [fresh, service] = await Promise.all([startService(store), startService(store)]);
  }, START_WITHIN_MS);
  afterAll(async () => {
    await Promise.all([fresh.stop(), service.stop()]);
  });

  describe('a server that has just started (docs/spec.md §1)', () => {
    it('holds records 1 (completed = false) and 2 (completed = true), and gives the first new record id 3', async () => {
      expectJson(await service.api.get('/todos'), 200, [
        { id: 1, title: expect.any(String), completed: false },
        { id: 2, title: expect.any(String), completed: true },
      ]);
      expectJson(await service.api.post('/todos', { title: 'first' }), 201, {
        id: 3,
        title: 'first',
        completed: false,
      });
    });
  });

  describe('docs/spec.md over HTTP', () => {
    const create = async (title: string): Promise<{ id: number; path: string }> => {
      const response = await service.api.post('/todos', { title });
      expect(response.status).toBe(201);
      const { id } = response.json() as { id: number };
      return { id, path: `/todos/${id}` };
    };
    const listedIds = async () => ((await service.api.get('/todos')).json() as { id: number }[]).map((todo) => todo.id);

    it('§4 POST: 201 with the next id, completed = false, the title as sent, other fields ignored; Location names it', async () => {
      const before = await create('before');
      const response = await service.api.post('/todos', { title: '  Buy milk 🥛 ', completed: true, id: 99, extra: 1 });
      expectJson(response, 201, { id: before.id + 1, title: '  Buy milk 🥛 ', completed: false });
      expect(response.headers.get('location')).toBe(`/todos/${before.id + 1}`);
    });

    it('§2: new records are appended; the list keeps creation order', async () => {
      const first = await create('first');
      const second = await create('second');
      const ids = await listedIds();
      expect(ids.slice(-2)).toEqual([first.id, second.id]);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    });

    it('§4 GET by id: 200 with the record, found by a path value that Number() converts', async () => {
      const { id, path } = await create('found');
      expectJson(await service.api.get(path), 200, { id, title: 'found', completed: false });
      expectJson(await service.api.get(`/todos/00${id}`), 200, { id, title: 'found', completed: false });
    });

    it('§3: PUT moves completed false → true → false and answers the record after the update', async () => {
      const { id, path } = await create('toggle');
      expectJson(await service.api.put(path, { completed: true }), 200, { id, title: 'toggle', completed: true });
      expectJson(await service.api.put(path, { completed: false }), 200, { id, title: 'toggle', completed: false });
    });

    it('§4 PUT is partial: a title alone keeps completed; the id cannot change', async () => {
      const { id, path } = await create('partial');
      await service.api.put(path, { completed: true });
      expectJson(await service.api.put(path, { title: 'renamed', id: id + 1000 }), 200, {
        id,
        title: 'renamed',
        completed: true,
      });
      expectJson(await service.api.get(path), 200, { id, title: 'renamed', completed: true });
      expectTodoNotFound(await service.api.get(`/todos/${id + 1000}`));
    });

    it('§4 DELETE: 200 with the plain-text body "Deleted", then 404 for GET, PUT and DELETE', async () => {
      const { id, path } = await create('doomed');
      const deleted = await service.api.delete(path);
      expect({ status: deleted.status, contentType: deleted.contentType, text: deleted.text }).toEqual({
        status: 200,
        contentType: 'text/plain; charset=utf-8',
        text: 'Deleted',
      });
      expectTodoNotFound(await service.api.get(path));
      expectTodoNotFound(await service.api.put(path, { title: 'back?' }));
      expectTodoNotFound(await service.api.delete(path));
      expect(await listedIds()).not.toContain(id);
    });

    it('§1: the counter never reuses an id, also that of the newest record after its delete', async () => {
      const newest = await create('newest');
      expect((await service.api.delete(newest.path)).status).toBe(200);
      expect((await create('after delete')).id).toBe(newest.id + 1);
    });

    it.each(NOT_FOUND_IDS.filter((id) => id.trim() !== ''))(
      '§7: GET, PUT and DELETE on id %j answer 404 "Todo not found" and change nothing',
      async (id) => {
        const before = (await service.api.get('/todos')).json();
        const path = `/todos/${encodeURIComponent(id)}`;
        expectTodoNotFound(await service.api.get(path));
        expectTodoNotFound(await service.api.put(path, { title: 'x', completed: true }));
        expectTodoNotFound(await service.api.delete(path));
        expectJson(await service.api.get('/todos'), 200, before);
      },
    );

    it('§4: GET /todos answers an empty array when every record is deleted, and ids go on', async () => {
      const last = await create('last');
      for (const id of await listedIds()) expect((await service.api.delete(`/todos/${id}`)).status).toBe(200);
      expectJson(await service.api.get('/todos'), 200, []);
      expectJson(await service.api.post('/todos', { title: 'again' }), 201, {
        id: last.id + 1,
        title: 'again',
        completed: false,
      });
    });

    it('one store for all five functions: a record created through POST is seen by the other four, and gone for all once deleted', async () => {
      const { id, path } = await create('shared');
      expect((await service.api.get('/todos')).json()).toContainEqual({ id, title: 'shared', completed: false });
      expectJson(await service.api.get(path), 200, { id, title: 'shared', completed: false });
      expectJson(await service.api.put(path, { completed: true }), 200, { id, title: 'shared', completed: true });
      expectJson(await service.api.get(path), 200, { id, title: 'shared', completed: true });
      expect((await service.api.delete(path)).status).toBe(200);
      expectTodoNotFound(await service.api.get(path));
      expectTodoNotFound(await service.api.put(path, { completed: false }));
      expectTodoNotFound(await service.api.delete(path));
      expect(await listedIds()).not.toContain(id);
    });
  });
});
