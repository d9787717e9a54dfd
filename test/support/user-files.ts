import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
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

/**
 * Names the test run in the environment of every process it starts (global-setup.ts sets it
 * before jest starts its workers, which pass it on to the servers and commands tests start), so
 * the teardown can tell a work folder of the run's from one of a server its user started meanwhile.
 */
export const TEST_RUN_ENV = 'TODO_TEST_RUN';

/** Every file under OUTPUTS with its size and time, and the work folders, by path relative to `root`. */
export function userFiles(root = PROJECT_ROOT): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (path: string): void => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
    else files.set(relative(root, path), `${stat.size} bytes, modified ${stat.mtime.toISOString()}`);
  };
  for (const output of OUTPUTS) walk(join(root, output));
  const work = join(root, WORK_FOLDERS);
  for (const folder of existsSync(work) ? readdirSync(work) : [])
    files.set(join(WORK_FOLDERS, folder), 'a work folder');
  return files;
}

/**
 * Whose a work folder is, by the process its name ends with: gone (then nothing removes it any
 * more), running and started by the run `run` names, or running and another's (its user's own
 * `npm start`, or another run's server).
 */
export type WorkFolderOwner = 'gone' | 'this run' | 'another';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The owner of `folder` (`.esbuild/<command>-<pid>`): what its process's environment says of `run`. */
export function workFolderOwner(folder: string, run: string): WorkFolderOwner {
  const pid = Number(/-(\d+)$/.exec(folder)?.[1]);
  if (!(pid > 0 && isRunning(pid))) return 'gone';
  try {
    const environment = readFileSync(`/proc/${String(pid)}/environ`, 'utf8').split('\0');
    return environment.includes(`${TEST_RUN_ENV}=${run}`) ? 'this run' : 'another';
  } catch {
    // No /proc (macOS), or not ours to read: counted as the run's, so that a server a test left
    // running is still reported, at the cost of blaming the run for a user's server started meanwhile.
    return 'this run';
  }
}

/**
 * What the tests changed between two listings, one entry a path. What was there before and is
 * the same after is the user's, untouched, whatever it is. A work folder is a process's, and
 * removed when it ends: one gone meanwhile is not a change (its process ended), and one that
 * appeared is the run's only if its process is gone without removing it, or is one of the run's
 * still running; a server its user started during the run has one too.
 */
export function changedUserFiles(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  ownerOf: (folder: string) => WorkFolderOwner,
): string[] {
  const isWorkFolder = (path: string) => path.startsWith(`${WORK_FOLDERS}/`);
  const changed: string[] = [];
  for (const [path, was] of before) {
    const now = after.get(path);
    if (now === undefined && !isWorkFolder(path)) changed.push(`${path} deleted`);
    else if (now !== undefined && now !== was) changed.push(`${path} changed`);
  }
  for (const path of after.keys()) {
    if (before.has(path)) continue;
    if (!isWorkFolder(path)) {
      changed.push(`${path} written`);
      continue;
    }
    const owner = ownerOf(path);
    if (owner === 'gone') changed.push(`${path} left behind`);
    else if (owner === 'this run') changed.push(`${path} left behind, its process still running`);
  }
  return changed;
}
