import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { unzipSync } from 'fflate';
import { freePort, PROJECT_ROOT } from './offline';

const run = promisify(execFile);

export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}

export interface Packaged {
  /** Where the zips and templates are. */
  readonly dir: string;
  readonly resources: Record<string, Resource>;
}

/**
 * `serverless package` with the given stage parameters and no AWS credentials at all. Runs of
 * this must not overlap in one project folder: serverless uses its `.serverless/` while it works.
 */
export async function servicePackage(params: string[] = [], cwd = PROJECT_ROOT): Promise<Packaged> {
  const dir = mkdtempSync(join(tmpdir(), 'todo-package-'));
  const cli = join(PROJECT_ROOT, 'node_modules/serverless/bin/serverless.js');
  await run(process.execPath, [cli, 'package', '--package', dir, ...params.map((param) => `--param=${param}`)], {
    cwd,
    // A PORT of its own, so its esbuild work folder is not a running server's.
    env: {
      ...process.env,
      PORT: String(await freePort()),
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
      AWS_PROFILE: 'none',
    },
  });
  const template = JSON.parse(readFileSync(join(dir, 'cloudformation-template-update-stack.json'), 'utf8')) as {
    Resources: Record<string, Resource>;
  };
  return { dir, resources: template.Resources };
}

/** Each function's zip, unpacked: file name → contents. */
export function functionZips(packaged: Packaged): Map<string, Record<string, Uint8Array>> {
  const zips = readdirSync(packaged.dir)
    .filter((name) => name.endsWith('.zip'))
    .sort();
  return new Map(zips.map((zip) => [zip.replace('.zip', ''), unzipSync(readFileSync(join(packaged.dir, zip)))]));
}
