import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { START_WITHIN_MS } from '../../harness/offline';
import { SEED_TODOS, applyPatch, createTodo, type Todo } from '../../lib/todos';
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
      // The seed's titles are sample text; what the spec says of records 1 and 2 is checked of the seed.
      expect(SEED_TODOS.map(({ id, completed }) => ({ id, completed }))).toEqual([
        { id: 1, completed: false },
        { id: 2, completed: true },
      ]);
      expectJson(await fresh.api.get('/todos'), 200, SEED_TODOS);
      expectJson(await fresh.api.post('/todos', { title: 'first' }), 201, createTodo({ title: 'first' }, 3));
    });
  });

  describe('docs/spec.md over HTTP', () => {
    /** POSTs `title`: the record it made, as the domain makes it (createTodo), and its path. */
    const create = async (title: string): Promise<{ id: number; path: string; todo: Todo }> => {
      const response = await service.api.post('/todos', { title });
      expect(response.status).toBe(201);
      const { id } = response.json() as Todo;
      const todo = createTodo({ title }, id);
      expect(response.json()).toEqual(todo);
      return { id, path: `/todos/${id}`, todo };
    };
    const listedIds = async () => ((await service.api.get('/todos')).json() as { id: number }[]).map((todo) => todo.id);

    it('§4 POST: 201 with the next id, completed = false, the title as sent, other fields ignored; Location names it', async () => {
      const before = await create('before');
      const response = await service.api.post('/todos', { title: '  Buy milk 🥛 ', completed: true, id: 99, extra: 1 });
      expectJson(response, 201, createTodo({ title: '  Buy milk 🥛 ' }, before.id + 1));
      expect(response.json()).toMatchObject({ completed: false });
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
      const { id, path, todo } = await create('found');
      expectJson(await service.api.get(path), 200, todo);
      expectJson(await service.api.get(`/todos/00${id}`), 200, todo);
    });

    it('§3: PUT moves completed false → true → false and answers the record after the update', async () => {
      const { path, todo } = await create('toggle');
      const done = applyPatch(todo, { completed: true });
      expectJson(await service.api.put(path, { completed: true }), 200, done);
      expectJson(await service.api.put(path, { completed: false }), 200, applyPatch(done, { completed: false }));
    });

    it('§4 PUT is partial: a title alone keeps completed; the id cannot change', async () => {
      const { id, path, todo } = await create('partial');
      const done = applyPatch(todo, { completed: true });
      expectJson(await service.api.put(path, { completed: true }), 200, done);
      const renamed = applyPatch(done, { title: 'renamed' });
      expect(renamed).toMatchObject({ id, completed: true });
      expectJson(await service.api.put(path, { title: 'renamed', id: id + 1000 }), 200, renamed);
      expectJson(await service.api.get(path), 200, renamed);
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
      expectJson(
        await service.api.post('/todos', { title: 'again' }),
        201,
        createTodo({ title: 'again' }, last.id + 1),
      );
    });

    it('one store for all five functions: a record created through POST is seen by the other four, and gone for all once deleted', async () => {
      const { id, path, todo } = await create('shared');
      const done = applyPatch(todo, { completed: true });
      expect((await service.api.get('/todos')).json()).toContainEqual(todo);
      expectJson(await service.api.get(path), 200, todo);
      expectJson(await service.api.put(path, { completed: true }), 200, done);
      expectJson(await service.api.get(path), 200, done);
      expect((await service.api.delete(path)).status).toBe(200);
      expectTodoNotFound(await service.api.get(path));
      expectTodoNotFound(await service.api.put(path, { completed: false }));
      expectTodoNotFound(await service.api.delete(path));
      expect(await listedIds()).not.toContain(id);
    });
  });
});
