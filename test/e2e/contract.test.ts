import { describe, it, expect } from '@jest/globals';
import { Contract } from '../support/contract';
import { ApiClient, type ApiResponse } from '../support/client';
import { NOT_FOUND_IDS } from '../support/expectations';
import { E2E_STORES, serverFor } from './servers';

/**
 * Every row and rule of SPEC.md, over real HTTP against `PORT=<n> npm start`.
 * The tests run in order on one fresh server: the first sees the seeded store.
 */
const JSON_TYPE = 'application/json; charset=utf-8';

function expectJson(response: ApiResponse, status: number, body: unknown): void {
  expect({ status: response.status, contentType: response.contentType, body: response.json() }).toEqual({
    status,
    contentType: JSON_TYPE,
    body,
  });
}

function expectNotFound(response: ApiResponse): void {
  expectJson(response, 404, { error: 'Todo not found' });
}

describe.each(E2E_STORES)('$store store', ({ store }) => {
  const api = new ApiClient(serverFor(__filename, store), new Contract());

  describe('SPEC.md over HTTP', () => {
    it('§1: starts with records 1 (completed = false) and 2 (completed = true)', async () => {
      expectJson(await api.get('/todos'), 200, [
        { id: 1, title: expect.any(String), completed: false },
        { id: 2, title: expect.any(String), completed: true },
      ]);
    });

    it('§4 POST: the first created record gets id 3, completed = false, title as sent; other fields ignored', async () => {
      const response = await api.post('/todos', { title: '  Buy milk 🥛 ', completed: true, id: 99, extra: 1 });
      expectJson(response, 201, { id: 3, title: '  Buy milk 🥛 ', completed: false });
      // 201 Created names the new record's address.
      expect(response.headers.get('location')).toBe('/todos/3');
    });

    it('§2: new records are appended; the list keeps order', async () => {
      expectJson(await api.post('/todos', { title: 'fourth' }), 201, { id: 4, title: 'fourth', completed: false });
      const ids = (await api.get('/todos')).json() as { id: number }[];
      expect(ids.map((todo) => todo.id)).toEqual([1, 2, 3, 4]);
    });

    it('§4 GET by id: 200 with the record, found by a path value that Number() converts', async () => {
      expectJson(await api.get('/todos/3'), 200, { id: 3, title: '  Buy milk 🥛 ', completed: false });
      expectJson(await api.get('/todos/004'), 200, { id: 4, title: 'fourth', completed: false });
    });

    it('§3: PUT moves completed false → true → false and answers the record after the update', async () => {
      expectJson(await api.put('/todos/3', { completed: true }), 200, {
        id: 3,
        title: '  Buy milk 🥛 ',
        completed: true,
      });
      expectJson(await api.put('/todos/3', { completed: false }), 200, {
        id: 3,
        title: '  Buy milk 🥛 ',
        completed: false,
      });
    });

    it('§4 PUT is partial: a title alone keeps completed; the id cannot change', async () => {
      expectJson(await api.put('/todos/2', { title: 'renamed', id: 50 }), 200, {
        id: 2,
        title: 'renamed',
        completed: true,
      });
      expectJson(await api.get('/todos/2'), 200, { id: 2, title: 'renamed', completed: true });
      expectNotFound(await api.get('/todos/50'));
    });

    it('§4 DELETE: 200 with the plain-text body "Deleted", then 404 for GET, PUT and DELETE', async () => {
      const deleted = await api.delete('/todos/4');
      expect({ status: deleted.status, contentType: deleted.contentType, text: deleted.text }).toEqual({
        status: 200,
        contentType: 'text/plain; charset=utf-8',
        text: 'Deleted',
      });
      expectNotFound(await api.get('/todos/4'));
      expectNotFound(await api.put('/todos/4', { title: 'back?' }));
      expectNotFound(await api.delete('/todos/4'));
      const ids = ((await api.get('/todos')).json() as { id: number }[]).map((todo) => todo.id);
      expect(ids).toEqual([1, 2, 3]);
    });

    it('§1: the counter never reuses an id, also that of the newest record after its delete', async () => {
      expectJson(await api.post('/todos', { title: 'after delete' }), 201, {
        id: 5,
        title: 'after delete',
        completed: false,
      });
    });

    it.each(NOT_FOUND_IDS.filter((id) => id.trim() !== ''))(
      '§7: GET, PUT and DELETE on id %j answer 404 "Todo not found" and change nothing',
      async (id) => {
        const before = (await api.get('/todos')).json();
        const path = `/todos/${encodeURIComponent(id)}`;
        expectNotFound(await api.get(path));
        expectNotFound(await api.put(path, { title: 'x', completed: true }));
        expectNotFound(await api.delete(path));
        expectJson(await api.get('/todos'), 200, before);
      },
    );

    it('§4: GET /todos answers an empty array when every record is deleted', async () => {
      const todos = (await api.get('/todos')).json() as { id: number }[];
      for (const { id } of todos) expect((await api.delete(`/todos/${id}`)).status).toBe(200);
      expectJson(await api.get('/todos'), 200, []);
      expectJson(await api.post('/todos', { title: 'again' }), 201, { id: 6, title: 'again', completed: false });
    });
  });

  describe('one store for all five functions', () => {
    it('a record created through POST is seen by the other four functions, and gone for all once deleted', async () => {
      const created = (await api.post('/todos', { title: 'shared' })).json() as { id: number };
      const path = `/todos/${created.id}`;
      expect((await api.get('/todos')).json()).toContainEqual({ id: created.id, title: 'shared', completed: false });
      expectJson(await api.get(path), 200, { id: created.id, title: 'shared', completed: false });
      expectJson(await api.put(path, { completed: true }), 200, { id: created.id, title: 'shared', completed: true });
      expectJson(await api.get(path), 200, { id: created.id, title: 'shared', completed: true });
      expect((await api.delete(path)).status).toBe(200);
      expectNotFound(await api.get(path));
      expectNotFound(await api.put(path, { completed: false }));
      expectNotFound(await api.delete(path));
      expect((await api.get('/todos')).json()).not.toContainEqual(expect.objectContaining({ id: created.id }));
    });
  });
});
