import { beforeEach, describe, expect, it } from '@jest/globals';
import { FIRST_NEW_ID, type TodoStore, type Written } from '../../lib/todos';
import { newTodo, todoPatch } from '../../lib/input';
import { STORES } from '../support/stores';
import { fullPatch, fullRequest, recordFrom } from '../support/todo-fields';

/** A write's answer that is no replay. */
const written = <T>(value: T): Written<T> => ({ value, replayed: false });

/** The TodoStore contract, which every implementation keeps. */
describe.each(STORES)('$name store', (fixture) => {
  let store: TodoStore;
  beforeEach(async () => {
    store = await fixture.fresh();
  });

  it('starts with record 1 (not completed), record 2 (completed) and next id 3', async () => {
    expect(await store.list()).toEqual([
      { id: 1, title: expect.any(String), completed: false },
      { id: 2, title: expect.any(String), completed: true },
    ]);
    expect(FIRST_NEW_ID).toBe(3);
    expect((await store.create({ title: 'next' })).value.id).toBe(3);
  });

  it('appends created records in list order with completed = false', async () => {
    expect(await store.create({ title: 'a' })).toEqual(written({ id: 3, title: 'a', completed: false }));
    expect(await store.create({ title: 'b' })).toEqual(written({ id: 4, title: 'b', completed: false }));
    expect((await store.list()).map((todo) => todo.id)).toEqual([1, 2, 3, 4]);
  });

  it('never reuses an id, also after deleting the newest record', async () => {
    const { value: a } = await store.create({ title: 'a' });
    expect(await store.remove(a.id)).toEqual(written(true));
    expect((await store.create({ title: 'b' })).value.id).toBe(a.id + 1);
  });

  it('updates only the fields present and keeps the record in its place', async () => {
    expect(await store.update(1, { completed: true })).toEqual(
      written({ id: 1, title: 'Read the spec', completed: true }),
    );
    expect(await store.update(1, { title: 'renamed' })).toEqual(written({ id: 1, title: 'renamed', completed: true }));
    expect(await store.update(1, {})).toEqual(written({ id: 1, title: 'renamed', completed: true }));
    expect(await store.get(1)).toEqual({ id: 1, title: 'renamed', completed: true });
    expect((await store.list()).map((todo) => todo.id)).toEqual([1, 2]);
  });

  it('does not change a record handed out earlier', async () => {
    const before = await store.get(1);
    await store.update(1, { title: 'changed' });
    expect(before).toEqual({ id: 1, title: 'Read the spec', completed: false });
  });

  it('answers undefined / false for an id that matches no record, and creates nothing', async () => {
    const before = await store.list();
    expect(await store.get(99)).toBeUndefined();
    expect(await store.update(99, { title: 'x' })).toBeUndefined();
    expect(await store.update(99, {})).toBeUndefined();
    expect(await store.remove(99)).toBeUndefined();
    expect(await store.list()).toEqual(before);
  });

  it('stores any title exactly: empty, unicode, long', async () => {
    for (const title of ['', 'çà 🚀 日本 \u0000 \n', 'x'.repeat(100_000)]) {
      const { value: created } = await store.create({ title });
      expect(await store.get(created.id)).toEqual({ id: created.id, title, completed: false });
    }
  });

  it('makes its record of every field a POST sets, and changes every field a PUT sets, whole (todo-fields.ts)', async () => {
    const body = fullRequest('every field');
    const { value: created } = await store.create(newTodo(body));
    expect(created).toEqual(recordFrom(body, 3));
    expect(await store.get(3)).toEqual(created);
    const patch = fullPatch('every field, changed');
    const changed = { ...created, ...patch };
    expect(await store.update(3, todoPatch(patch))).toEqual(written(changed));
    expect(await store.update(3, todoPatch({}))).toEqual(written(changed));
    expect(await store.list()).toEqual([expect.anything(), expect.anything(), changed]);
  });

  it('can hold an empty list', async () => {
    await store.remove(1);
    await store.remove(2);
    expect(await store.list()).toEqual([]);
  });
});
