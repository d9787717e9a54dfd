import { gzipSync } from 'node:zlib';
import { functionZips, servicePackage } from '../../harness/package';
import type { Row } from '../lib';

export const BUNDLE_BUDGET_BYTES = 4 * 1024;

/** The minified JS of each function, from the real `serverless package` zips, for each store. */
export async function bundle(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const store of ['memory', 'dynamodb'] as const) {
    const packaged = await servicePackage(store === 'memory' ? [] : ['store=dynamodb']);
    for (const [fn, files] of functionZips(packaged)) {
      const code = files[`functions/${fn}.js`] ?? new Uint8Array();
      const gzip = gzipSync(code, { level: 9 }).length;
      rows.push({
        section: 'bundle',
        name: `${fn} (${store})`,
        value: code.length,
        unit: 'bytes',
        note: `${gzip} bytes gzip`,
        ...(store === 'memory' ? { budget: '≤ 4096', met: code.length <= BUNDLE_BUDGET_BYTES } : {}),
      });
    }
  }
  return rows;
}
