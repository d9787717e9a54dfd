import { beforeEach, describe, expect, it } from '@jest/globals';
import {
  FIRST_NEW_ID,
  MAX_TITLE_LENGTH,
  SEED_TODOS,
  applyPatch,
  createTodo,
  type TodoStore,
  type Written,
} from '../../lib/todos';
import { newTodo, todoPatch } from '../../lib/input';
import { seed } from '../support/expectations';
import { STORES } from '../support/stores';
import { fullPatch, fullRequest, recordFrom } from '../support/todo-fields';
import { recordsOf } from '../support/records';

/** A write's answer that is no replay. */
const written = <T>(value: T): Written<T> => ({ value, replayed: false });

/** The TodoStore contract, which every implementation keeps. */
describe.each(STORES)('$name store', (fixture) => {
  let store: TodoStore;
  beforeEach(async () => {
    store = await fixture.fresh();
  });

  it('starts with record 1 (not completed), record 2 (completed) and next id 3', async () => {
    expect(await recordsOf(store)).toEqual(SEED_TODOS);
    expect(SEED_TODOS.map(({ id, completed }) => ({ id, completed }))).toEqual([
      { id: 1, completed: false },
      { id: 2, completed: true },
    ]);
    expect(FIRST_NEW_ID).toBe(3);
    expect((await store.create({ title: 'next' })).value.id).toBe(3);
  });

  it('appends created records in list order with completed = false', async () => {
    expect(await store.create({ title: 'a' })).toEqual(written(createTodo({ title: 'a' }, 3)));
    expect(await store.create({ title: 'b' })).toEqual(written(createTodo({ title: 'b' }, 4)));
    expect((await recordsOf(store)).map((todo) => todo.id)).toEqual([1, 2, 3, 4]);
  });

  it('never reuses an id, also after deleting the newest record', async () => {
    const { value: a } = await store.create({ title: 'a' });
    expect(await store.remove(a.id)).toEqual(written(true));
    expect((await store.create({ title: 'b' })).value.id).toBe(a.id + 1);
  });

  it('updates only the fields present and keeps the record in its place', async () => {
    const done = applyPatch(seed(1), { completed: true });
    expect(await store.update(1, { completed: true })).toEqual(written(done));
    const renamed = applyPatch(done, { title: 'renamed' });
    expect(await store.update(1, { title: 'renamed' })).toEqual(written(renamed));
    expect(await store.update(1, {})).toEqual(written(renamed));
    expect(await store.get(1)).toEqual(renamed);
    expect((await recordsOf(store)).map((todo) => todo.id)).toEqual([1, 2]);
  });

  it('does not change a record handed out earlier', async () => {
    const before = await store.get(1);
    await store.update(1, { title: 'changed' });
    expect(before).toEqual(seed(1));
  });

  it('answers undefined / false for an id that matches no record, and creates nothing', async () => {
    const before = await recordsOf(store);
    expect(await store.get(99)).toBeUndefined();
    expect(await store.update(99, { title: 'x' })).toBeUndefined();
    expect(await store.update(99, {})).toBeUndefined();
    expect(await store.remove(99)).toBeUndefined();
    expect(await recordsOf(store)).toEqual(before);
  });

  it('stores any title exactly: empty, unicode, the longest a client may set', async () => {
    for (const title of ['', 'çà 🚀 日本 \u0000 \n', '🚀'.repeat(MAX_TITLE_LENGTH)]) {
      const { value: created } = await store.create({ title });
      expect(await store.get(created.id)).toEqual(createTodo({ title }, created.id));
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
    expect(await recordsOf(store)).toEqual([expect.anything(), expect.anything(), changed]);
  });

  it('can hold an empty list', async () => {
    await store.remove(1);
    await store.remove(2);
    expect(await recordsOf(store)).toEqual([]);
  });
});
