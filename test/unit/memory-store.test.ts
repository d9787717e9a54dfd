import { describe, expect, it, jest } from '@jest/globals';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';
import { recordsOf } from '../support/records';

describe('memory store', () => {
  it('keeps its state on globalThis, so every bundled copy of this module shares it', async () => {
    resetMemoryStore();
    const { value: created } = await memoryStore.create({ title: 'shared' });
    await jest.isolateModulesAsync(async () => {
      // A fresh copy of the module, as another function's bundle has.
      const copy = await import('../../lib/memory-store');
      expect(copy.memoryStore).not.toBe(memoryStore);
      expect(await copy.memoryStore.get(created.id)).toEqual(created);
    });
    expect.assertions(2);
  });

  it('answers an empty PUT with the record as it is: it writes nothing back and claims no key', async () => {
    resetMemoryStore();
    const before = await memoryStore.get(1);
    const key = { key: '"k"', fingerprint: 'an empty PUT', expiresAt: Date.now() + 60_000 };
    expect(await memoryStore.update(1, {}, { claim: key })).toEqual({ value: before, replayed: false });
    // The very record handed out before: an empty PUT replaces nothing.
    expect(await memoryStore.get(1)).toBe(before);
    // The key is still free for another request.
    const other = { ...key, fingerprint: 'another PUT' };
    expect(await memoryStore.update(1, { completed: true }, { claim: other })).toMatchObject({ replayed: false });
  });

  it('reset puts the store back to records 1 and 2 and next id 3', async () => {
    await memoryStore.create({ title: 'a' });
    await memoryStore.remove(1);
    resetMemoryStore();
    expect((await recordsOf(memoryStore)).map((todo) => todo.id)).toEqual([1, 2]);
    expect((await memoryStore.create({ title: 'b' })).value.id).toBe(3);
  });
});
