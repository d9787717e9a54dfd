import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from './project';

/**
 * Lambda's Node, for the fleet's containers: the runtime is `nodejs22.x` (serverless.yml), so
 * the shipped bundles should run on Node 22 here too, whatever Node runs the tests.
 *
 * The npm registry has Node's own binaries as packages with no install script
 * (`node-<platform>-<arch>`, 185 MB unpacked for linux-x64): too heavy for every user's
 * `npm install`, so it is installed here, on first use, into node_modules/.cache, and kept. Where
 * the registry has none for this platform, or it cannot be reached, the containers run on the
 * host's Node and a line says so.
 */

/** The release the fleet runs, pinned so that two machines run the same. */
export const LAMBDA_NODE_VERSION = '22.23.3';

export interface LambdaNode {
  /** The node binary for the containers. */
  readonly path: string;
  /** Its version, e.g. `v22.23.3`. */
  readonly version: string;
  /** Why the host's Node runs the containers instead, when it does. */
  readonly fallback?: string;
}

const run = promisify(execFile);
let found: Promise<LambdaNode> | undefined;

/** Lambda's Node, installed on first use; the host's Node, with the reason, when that is not possible. */
export function lambdaNode(): Promise<LambdaNode> {
  return (found ??= locate());
}

async function locate(): Promise<LambdaNode> {
  const pkg = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
  const dir = join(PROJECT_ROOT, 'node_modules/.cache/todo-api', `${pkg}-${LAMBDA_NODE_VERSION}`);
  const binary = join(dir, 'node_modules', pkg, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
  try {
    if (!existsSync(binary)) await install(pkg, dir);
    const { stdout } = await run(binary, ['--version']);
    return { path: binary, version: stdout.trim() };
  } catch (error) {
    const fallback =
      `fleet: no Node ${LAMBDA_NODE_VERSION} for ${process.platform}-${process.arch} ` +
      `(npm install ${pkg}@${LAMBDA_NODE_VERSION}: ${(error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''}); ` +
      `the containers run on this machine's Node ${process.version}`;
    console.warn(fallback);
    return { path: process.execPath, version: process.version, fallback };
  }
}

/**
 * Installs into a folder of this process's own, then renames it into place: two test workers
 * that start at once each install, and the second rename finds the first's and keeps it.
 */
async function install(pkg: string, dir: string): Promise<void> {
  const building = `${dir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  try {
    await run(
      'npm',
      [
        'install',
        '--prefix',
        building,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        `${pkg}@${LAMBDA_NODE_VERSION}`,
      ],
      { timeout: 300_000 },
    );
    if (!existsSync(dir)) renameSync(building, dir);
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}
