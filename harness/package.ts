import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { unzipSync } from 'fflate';
import { runServerless } from './cli';
import { PROJECT_ROOT } from './project';
import { scratchCopy } from './scratch';

export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  [attribute: string]: unknown;
}

export interface Template {
  Resources: Record<string, Resource>;
  Outputs?: Record<string, unknown>;
  [section: string]: unknown;
}

export interface Packaged {
  /** Where the zips and templates are. Shared: read it, never change or delete it. */
  readonly dir: string;
  readonly template: Template;
  readonly resources: Record<string, Resource>;
}

/** Everything `serverless package` reads; a change to any of these makes a new package. */
const INPUTS = [
  'serverless.yml',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'functions',
  'lib',
  'scripts',
  'serverless',
];
/** The environment serverless.yml reads into the stack. */
const ENV_INPUTS = ['LOG_LEVEL'];
const KEEP_PACKAGES = 8;

function filesUnder(dir: string, entry: string): string[] {
  const path = join(dir, entry);
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesUnder(dir, join(entry, name)));
}

function cacheKey(cwd: string, params: string[]): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ params, env: ENV_INPUTS.map((name) => process.env[name] ?? null) }));
  for (const file of INPUTS.flatMap((entry) => filesUnder(cwd, entry))) {
    hash.update(relative(cwd, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

function load(dir: string): Packaged {
  const template = JSON.parse(readFileSync(join(dir, 'cloudformation-template-update-stack.json'), 'utf8')) as Template;
  return { dir, template, resources: template.Resources };
}

/**
 * `serverless package` with the given stage parameters and no AWS credentials at all, built once
 * per content: the result is kept under node_modules/.cache, keyed by a hash of every input, so
 * the test files and the bench that need the same package share one build. It is built in a
 * scratch copy of the project: the framework writes to the project's `.serverless/` while it
 * packages, and two packages at once in one folder would trade zips.
 */
export async function servicePackage(params: string[] = []): Promise<Packaged> {
  const cache = join(PROJECT_ROOT, 'node_modules/.cache/todo-api/package');
  const dir = join(cache, cacheKey(PROJECT_ROOT, params));
  if (existsSync(join(dir, 'cloudformation-template-update-stack.json'))) return load(dir);
  mkdirSync(cache, { recursive: true });
  const building = `${dir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  const scratch = scratchCopy();
  try {
    await packageInto(building, params, scratch.dir);
  } finally {
    scratch.remove();
  }
  // Another process may have built the same package meanwhile; either copy will do.
  if (existsSync(dir)) rmSync(building, { recursive: true, force: true });
  else renameSync(building, dir);
  prune(cache);
  return load(dir);
}

/** Runs `serverless package --package <dir>` as a deploy would, with no credentials. */
export async function packageInto(dir: string, params: string[] = [], cwd = PROJECT_ROOT): Promise<void> {
  const result = await runServerless(['package', '--package', dir, ...params.map((param) => `--param=${param}`)], {
    cwd,
    env: { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_PROFILE: 'none' },
  });
  if (result.code !== 0) throw new Error(`serverless package failed:\n${result.stdout}\n${result.stderr}`);
}

/** Keeps the newest packages only: each is a few hundred KB, and sources change often. */
function prune(cache: string): void {
  const entries = readdirSync(cache)
    .filter((name) => !name.endsWith('.tmp'))
    .map((name) => ({ path: join(cache, name), time: statSync(join(cache, name)).mtimeMs }))
    .sort((a, b) => b.time - a.time);
  for (const { path } of entries.slice(KEEP_PACKAGES)) rmSync(path, { recursive: true, force: true });
}

/** Each function's zip, unpacked: file name → contents. */
export function functionZips(packaged: Pick<Packaged, 'dir'>): Map<string, Record<string, Uint8Array>> {
  const zips = readdirSync(packaged.dir)
    .filter((name) => name.endsWith('.zip'))
    .sort();
  return new Map(zips.map((zip) => [zip.replace('.zip', ''), unzipSync(readFileSync(join(packaged.dir, zip)))]));
}

/** A function's bundled JavaScript, as it ships. */
export function functionCode(packaged: Pick<Packaged, 'dir'>, name: string): Uint8Array {
  const code = functionZips(packaged).get(name)?.[`functions/${name}.js`];
  if (code === undefined) throw new Error(`no bundle for ${name} in ${packaged.dir}`);
  return code;
}
