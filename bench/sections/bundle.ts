import { statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { functionZips, servicePackage } from '../../harness/package';
import type { Row } from '../lib';

export const BUNDLE_BUDGET_BYTES = 4 * 1024;

const zipBytes = (dir: string, fn: string) => statSync(join(dir, `${fn}.zip`)).size;

/**
 * The minified JS of each function, from the real `serverless package` zips, for each store; and
 * what source maps would add to the memory store's, were they shipped (`--param=sourcemaps=on`).
 */
export async function bundle(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const store of ['memory', 'dynamodb'] as const) {
    const packaged = await servicePackage([`store=${store}`]);
    for (const [fn, files] of functionZips(packaged)) {
      const code = files[`functions/${fn}.js`] ?? new Uint8Array();
      const gzip = gzipSync(code, { level: 9 }).length;
      rows.push({
        section: 'bundle',
        name: `${fn} (${store})`,
        value: code.length,
        unit: 'bytes',
        note: `${gzip} bytes gzip, zip ${zipBytes(packaged.dir, fn)} bytes`,
        ...(store === 'memory' ? { budget: '≤ 4096', met: code.length <= BUNDLE_BUDGET_BYTES } : {}),
      });
    }
  }
  const plain = await servicePackage(['store=memory']);
  const mapped = await servicePackage(['store=memory', 'sourcemaps=on']);
  const plainZips = functionZips(plain);
  for (const [fn, files] of functionZips(mapped)) {
    const code = files[`functions/${fn}.js`]?.length ?? NaN;
    const map = files[`functions/${fn}.js.map`]?.length ?? NaN;
    const without = plainZips.get(fn)?.[`functions/${fn}.js`]?.length ?? NaN;
    rows.push({
      section: 'bundle',
      name: `${fn} (memory) with source maps: .map`,
      value: map,
      unit: 'bytes',
      note: `JS ${without} → ${code} bytes; zip ${zipBytes(plain.dir, fn)} → ${zipBytes(mapped.dir, fn)} bytes`,
    });
  }
  return rows;
}
