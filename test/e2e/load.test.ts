import { describe, expect, it } from '@jest/globals';
import { runLoad } from '../../bench/load';
import { E2E_STORES, serverFor } from './servers';

/**
 * `npm run load`, smaller: a few thousand interleaved creates, updates, reads and deletes from
 * many connections, then a check from GET /todos that nothing was lost. No timing is asserted.
 */
describe.each(E2E_STORES)('load without loss ($store store)', ({ store }) => {
  it('keeps every acknowledged create, forgets every acknowledged delete, reuses no id, answers no 5xx', async () => {
    const report = await runLoad(serverFor(__filename, store), { amount: 3_000, connections: 16, maxSeconds: 60 });
    expect(report.problems).toEqual([]);
    expect(report.requests).toBe(3_000);
    expect(report.errors).toBe(0);
    expect(report.created).toBeGreaterThan(500);
    expect(report.deleted).toBeGreaterThan(100);
  }, 120_000);
});
