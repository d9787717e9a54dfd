import { describe, it, expect, beforeEach, jest } from '@jest/globals';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';
import { FIRST_NEW_ID } from '../../lib/todos';

beforeEach(resetMemoryStore);

describe('memory store', () => {
  it('starts with record 1 (not completed), record 2 (completed) and next id 3', async () => {
    expect(await memoryStore.list()).toEqual([
      { id: 1, title: expect.any(String), completed: false },
      { id: 2, title: expect.any(String), completed: true },
    ]);
    expect((await memoryStore.create('next')).id).toBe(FIRST_NEW_ID);
    expect(FIRST_NEW_ID).toBe(3);
  });

  it('appends created records in list order with completed = false', async () => {
    const a = await memoryStore.create('a');
    const b = await memoryStore.create('b');
    expect(a).toEqual({ id: 3, title: 'a', completed: false });
    expect(b).toEqual({ id: 4, title: 'b', completed: false });
    expect((await memoryStore.list()).map((todo) => todo.id)).toEqual([1, 2, 3, 4]);
  });

  it('never reuses an id, also after deleting the newest record', async () => {
    const a = await memoryStore.create('a');
    expect(await memoryStore.remove(a.id)).toBe(true);
    expect((await memoryStore.create('b')).id).toBe(a.id + 1);
  });

  it('updates only the fields present and keeps the record in its place', async () => {
    expect(await memoryStore.update(1, { completed: true })).toEqual({
      id: 1,
      title: 'Read the spec',
      completed: true,
    });
    expect(await memoryStore.update(1, { title: 'renamed' })).toEqual({ id: 1, title: 'renamed', completed: true });
    expect(await memoryStore.update(1, {})).toEqual({ id: 1, title: 'renamed', completed: true });
    expect((await memoryStore.list()).map((todo) => todo.id)).toEqual([1, 2]);
  });

  it('does not change a record handed out earlier', async () => {
    const before = await memoryStore.get(1);
    await memoryStore.update(1, { title: 'changed' });
    expect(before).toEqual({ id: 1, title: 'Read the spec', completed: false });
  });

  it('answers undefined / false for an id that matches no record and changes nothing', async () => {
    const before = await memoryStore.list();
    expect(await memoryStore.get(99)).toBeUndefined();
    expect(await memoryStore.update(99, { title: 'x' })).toBeUndefined();
    expect(await memoryStore.remove(99)).toBe(false);
    expect(await memoryStore.list()).toEqual(before);
  });

  it('reset puts the store back to its start state', async () => {
    await memoryStore.create('a');
    await memoryStore.remove(1);
    resetMemoryStore();
    expect((await memoryStore.list()).map((todo) => todo.id)).toEqual([1, 2]);
    expect((await memoryStore.create('b')).id).toBe(3);
  });

  it('keeps its state on globalThis, so every bundled copy of this module shares it', async () => {
    const created = await memoryStore.create('shared');
    await jest.isolateModulesAsync(async () => {
      // A fresh copy of the module, as another function's bundle has.
      const copy = await import('../../lib/memory-store');
      expect(copy.memoryStore).not.toBe(memoryStore);
      expect(await copy.memoryStore.get(created.id)).toEqual(created);
    });
    expect.assertions(2);
  });
});
