import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { round, type Row } from '../lib';

/** Run in a fresh process with --expose-gc: heap bytes a stored record adds, at a size. */
const CHILD = `
const { memoryStore } = require(process.argv[1]);
const size = Number(process.argv[2]);
(async () => {
  await memoryStore.readList();
  globalThis.gc(); globalThis.gc();
  const before = process.memoryUsage().heapUsed;
  // Each title a flat string from JSON.parse, as a request body gives it.
  for (let i = 0; i < size; i++) await memoryStore.create({ title: JSON.parse('"twenty characters!!' + (i % 10) + '"') });
  globalThis.gc(); globalThis.gc();
  process.stdout.write(String((process.memoryUsage().heapUsed - before) / size));
})();
`;

/**
 * Heap per record for 20-character titles (each title its own string, as records from
 * requests are). A record is an object of three fields in a Map entry.
 */
export function memory(): Row[] {
  const store = join(__dirname, '../../lib/memory-store.ts');
  // The largest list of these titles that the size limit (lib/list-size.ts) allows is about 85,000.
  return [10_000, 80_000].map((size) => {
    const output = execFileSync(process.execPath, [
      '--expose-gc',
      '--require',
      'tsx/cjs',
      '-e',
      CHILD,
      store,
      String(size),
    ]);
    return {
      section: 'memory',
      name: `heap per record @ ${size.toLocaleString('en')}`,
      value: round(Number(output.toString()), 1),
      unit: 'bytes',
    };
  });
}
