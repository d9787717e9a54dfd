import { statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { functionZips, servicePackage } from '../../harness/package';
import { heldTo, type Budget } from '../budget';
import type { BenchOptions, Row } from '../lib';
import { THIS_TREE, packagedAt, treesFor, type Tree } from '../trees';

/**
 * What `serverless package` ships, with its defaults: the DynamoDB store and its own DynamoDB
 * client (no AWS SDK but the credential chain, loaded from the runtime off Lambda's own
 * credentials), no source maps. The bench's other sections that measure what ships (cold-init.ts) build the same.
 */
export const SHIPPED: readonly string[] = [];

/**
 * The budgets of each function's zip (what a deploy uploads, and Lambda fetches onto a new worker
 * before a cold start) and of its JS gzipped (what its size is once the zip's own overhead is set
 * aside). Set on 24 November 2026 at that day's figures (zips 17,778–18,321 bytes, gzip
 * 16,008–16,509) with about 9 % to spare; raised on 26 November 2026 (20,000 / 18,000 before) by
 * what issues 31 and 33 added (the outcome contract and the decision table, If-None-Match and
 * If-Match on GET, AWS's partitions, the signing clock, the runtime: zips 20,750–21,458, gzip
 * 18,739–19,386), which cold init, the figure a user feels, showed within its noise (+0.2 to
 * +1.3 ms over d9f079e in one run of `coldInit --baseline d9f079e`), with about 5 % to spare. The
 * AWS SDK's client, bundled as before issue 27, is still seven times over. docs/performance.md says
 * why. Sizes have no noise: two packages of one tree are the same byte for byte.
 */
export const ZIP_BUDGET: Budget = { limit: 22_500, noise: 0, unit: 'bytes' };
export const GZIP_BUDGET: Budget = { limit: 20_500, noise: 0, unit: 'bytes' };

/** A figure's budget fields, on this tree: a baseline's figure is measured beside it, held to nothing. */
function heldIn(tree: Tree, value: number, budget: Budget): Partial<Row> {
  return tree === THIS_TREE ? heldTo(value, budget) : {};
}

function zipBytes(dir: string, fn: string): number {
  return statSync(join(dir, `${fn}.zip`)).size;
}

/**
 * Each function's zip and gzipped JS, from the real `serverless package` zips, held to their
 * budgets (this tree's; a `--baseline` tree's are measured beside them); and what source maps
 * would add to this tree's, were they shipped (`--param=sourcemaps=on`).
 */
export async function bundle(options: BenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  for (const tree of treesFor(options.baseline)) {
    const shipped = await packagedAt(tree, [...SHIPPED]);
    for (const [fn, files] of functionZips(shipped)) {
      const code = files[`functions/${fn}.js`] ?? new Uint8Array();
      const zip = zipBytes(shipped.dir, fn);
      const gzip = gzipSync(code, { level: 9 }).length;
      const minified = `minified JS ${code.length} bytes`;
      const name = `${tree.name}: ${fn}`;
      rows.push(
        {
          section: 'bundle',
          name: `${name}: zip`,
          value: zip,
          unit: 'bytes',
          ...heldIn(tree, zip, ZIP_BUDGET),
          note: minified,
        },
        { section: 'bundle', name: `${name}: JS gzip`, value: gzip, unit: 'bytes', ...heldIn(tree, gzip, GZIP_BUDGET) },
      );
    }
  }
  const shipped = await servicePackage([...SHIPPED]);
  const mapped = await servicePackage([...SHIPPED, 'sourcemaps=on']);
  const shippedZips = functionZips(shipped);
  for (const [fn, files] of functionZips(mapped)) {
    const code = files[`functions/${fn}.js`]?.length ?? NaN;
    const map = files[`functions/${fn}.js.map`]?.length ?? NaN;
    const without = shippedZips.get(fn)?.[`functions/${fn}.js`]?.length ?? NaN;
    rows.push({
      section: 'bundle',
      name: `${fn} with source maps: .map`,
      value: map,
      unit: 'bytes',
      note: `JS ${without} → ${code} bytes; zip ${zipBytes(shipped.dir, fn)} → ${zipBytes(mapped.dir, fn)} bytes`,
    });
  }
  return rows;
}
