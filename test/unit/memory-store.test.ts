import { describe, expect, it, jest } from '@jest/globals';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';

describe('memory store', () => {
  it('keeps its state on globalThis, so every bundled copy of this module shares it', async () => {
    resetMemoryStore();
    const { value: created } = await memoryStore.create('shared');
    await jest.isolateModulesAsync(async () => {
      // A fresh copy of the module, as another function's bundle has.
      const copy = await import('../../lib/memory-store');
      expect(copy.memoryStore).not.toBe(memoryStore);
      expect(await copy.memoryStore.get(created.id)).toEqual(created);
    });
    expect.assertions(2);
  });

  it('reset puts the store back to records 1 and 2 and next id 3', async () => {
    await memoryStore.create('a');
    await memoryStore.remove(1);
    resetMemoryStore();
    expect((await memoryStore.list()).map((todo) => todo.id)).toEqual([1, 2]);
    expect((await memoryStore.create('b')).value.id).toBe(3);
  });
});
