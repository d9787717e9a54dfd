import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { round, type BenchOptions, type Row } from '../lib';
import { treesFor } from '../trees';

/**
 * What `npm install` costs a new user: `npm ci` of each tree's package.json and lockfile into an
 * empty folder, from npm's cache (the network is not what is measured): packages, megabytes on
 * disk, seconds. Optional: it writes a few hundred MB and takes a minute a tree.
 */
export function install(options: BenchOptions): Row[] {
  const rows: Row[] = [];
  for (const tree of treesFor(options.baseline)) {
    const dir = mkdtempSync(join(tmpdir(), 'todo-install-'));
    try {
      for (const file of ['package.json', 'package-lock.json']) cpSync(join(tree.dir, file), join(dir, file));
      const started = performance.now();
      const output = execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], {
        cwd: dir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const seconds = (performance.now() - started) / 1000;
      const packages = Number(/added (\d+) packages/.exec(output)?.[1]);
      const megabytes = Number(
        execFileSync('du', ['-sm', join(dir, 'node_modules')], { encoding: 'utf8' }).split('\t')[0],
      );
      rows.push({
        section: 'install',
        name: `${tree.name}: npm ci, from npm's cache`,
        value: round(megabytes, 0),
        unit: 'MB',
        note: `${packages} packages, ${round(seconds, 1)} s`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}
