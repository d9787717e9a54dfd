import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PROJECT_ROOT } from '../../harness/project';

/**
 * What the project's own commands write into a checkout, and what its user may keep there: the
 * output of `npm run package` (.serverless/), of `npm run dynamodb` (.dynamodb/), a coverage
 * report, the bench's results. Tests work in scratch copies and temporary folders; they must
 * leave these as they found them. And the servers' work folders (.esbuild/<command>-<pid>) must
 * go with their processes.
 */
const OUTPUTS = ['.serverless', '.dynamodb', 'coverage', 'bench/latest.json', 'bench/results.json'];
const WORK_FOLDERS = '.esbuild';

/** Every file under OUTPUTS with its size and time, and the work folders, by path. */
export function userFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (path: string): void => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
    else files.set(relative(PROJECT_ROOT, path), `${stat.size} bytes, modified ${stat.mtime.toISOString()}`);
  };
  for (const output of OUTPUTS) walk(join(PROJECT_ROOT, output));
  const work = join(PROJECT_ROOT, WORK_FOLDERS);
  for (const folder of existsSync(work) ? readdirSync(work) : [])
    files.set(join(WORK_FOLDERS, folder), 'a work folder');
  return files;
}

/** What differs between two listings, one entry a path. Work folders gone meanwhile are not a change: their processes ended. */
export function changedUserFiles(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed: string[] = [];
  for (const [path, was] of before) {
    const now = after.get(path);
    if (now === undefined && !path.startsWith(`${WORK_FOLDERS}/`)) changed.push(`${path} deleted`);
    else if (now !== undefined && now !== was) changed.push(`${path} changed`);
  }
  for (const path of after.keys())
    if (!before.has(path)) changed.push(`${path} ${path.startsWith(WORK_FOLDERS) ? 'left behind' : 'written'}`);
  return changed;
}
