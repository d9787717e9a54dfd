/**
 * `npm run starter -- <folder>`: writes to <folder> a project a team can start its own service
 * from. It holds the five handlers, lib/ (the HTTP edge, the memory store, the DynamoDB store and
 * the AWS client it needs) and the tests that cover them, on the memory store and on DynamoDB
 * Local; not the harness, the simulator, the fleet, the bench, smoke or the mutation runner.
 *
 * The cut is a list, in one place (scripts/starter-files.ts): every file on it is copied as it is.
 * What the starter has of its own is in starter/ (its serverless.yml, jest.config.ts and
 * README.md); its package.json, package-lock.json and tsconfig.json are made from this
 * checkout's, so their versions and settings never drift. test/unit/starter.test.ts checks what a
 * starter holds, that every import in it resolves there, and that its table and routes are this
 * service's.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { copyFile, cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { CommandLineError, parseCommandLine, runTool } from './command-line';
import { DEPENDENCIES, DEV_DEPENDENCIES, SCRIPTS, STARTER, filesUnder } from './starter-files';

const TOOL = 'npm run starter';

/** This checkout. */
const ROOT = resolve(__dirname, '..');

const NODE_MODULES = 'node_modules/';

interface PackageJson {
  name: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  allowScripts?: Record<string, boolean>;
  [field: string]: unknown;
}

interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  hasInstallScript?: boolean;
  [field: string]: unknown;
}

interface PackageLock {
  packages: Record<string, LockEntry>;
  [field: string]: unknown;
}

const HELP = `Usage: ${TOOL} -- <folder> [--name <service>]

Writes to <folder> (new, or empty) a project to start your own service from: the five handlers,
lib/ (the HTTP edge, the memory store, the DynamoDB store), the tests that cover them, serverless.yml
with serverless-esbuild and serverless-offline only, and a package.json with only what those need.
Not the harness, the simulator, the fleet, the bench, smoke or the mutation runner. Then:

  cd <folder> && npm install && npm test    # DynamoDB Local's tests need Java 17 or newer
  npm start                                 # the API on http://localhost:3000

A relative <folder> is taken from where you run npm (e.g. ${TOOL} -- ../my-service).

  --name <service>   the service's name: the npm package's, serverless.yml's service, and so the
                     stack's, the table's and the functions' on AWS (default: the folder's name);
                     up to 40 lowercase letters, digits and hyphens, starting with a letter
  -h, --help         print this text

Exit status: 0 written; 1 it could not write; 2 a wrong command line, or a folder that is not empty.
`;

/** What the command line asks for: the folder to write, and the service's name. */
interface Request {
  readonly target: string;
  readonly name: string;
}

const OPTIONS = { name: { type: 'string' } } as const;

/**
 * A service's name as every place it goes accepts it: the npm package, the stack, the table
 * (`<name>-<stage>-todos`) and the functions (`<name>-<stage>-createTodo`, at most 64 characters).
 */
const SERVICE_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** `text`, then how to see what the tool takes: how every tool's wrong command line ends (scripts/command-line.ts). */
function withHelp(text: string): string {
  return `${text} (${TOOL} -- --help)`;
}

/** The request, from the command line; `help` when asked for the usage text. */
function requestFrom(args: readonly string[]): Request | 'help' {
  const parsed = parseCommandLine(args, OPTIONS, TOOL);
  if (parsed === 'help') return 'help';
  const [folder, extra] = parsed.positionals;
  if (folder === undefined)
    throw new CommandLineError(withHelp(`${TOOL} needs the folder to write: ${TOOL} -- ../my-service`));
  if (extra !== undefined)
    throw new CommandLineError(withHelp(`Unexpected argument "${extra}" for ${TOOL}: it takes one folder`));
  // npm runs a script in the package's folder; the user meant a folder relative to where they typed.
  const target = resolve(process.env.INIT_CWD ?? process.cwd(), folder);
  const name = parsed.values.name ?? basename(target);
  if (!SERVICE_NAME.test(name)) {
    const given = parsed.values.name === undefined ? `"${name}" (the folder's name)` : `--name "${name}"`;
    throw new CommandLineError(
      withHelp(
        `${given} cannot name a service: up to 40 lowercase letters, digits and hyphens, starting with a letter`,
      ),
    );
  }
  return { target, name };
}

/** Refuses a folder that would mix the starter with other files, or land inside this checkout. */
function checkTarget(target: string): void {
  const fromRoot = relative(ROOT, target);
  if (!(fromRoot === '..' || fromRoot.startsWith(`..${sep}`) || isAbsolute(fromRoot))) {
    throw new CommandLineError(withHelp(`${target} is inside this checkout: write the starter beside it`));
  }
  if (!existsSync(target)) return;
  if (!statSync(target).isDirectory()) throw new CommandLineError(withHelp(`${target} is a file, not a folder`));
  if (readdirSync(target).length > 0) {
    throw new CommandLineError(withHelp(`${target} is not empty: name a new or empty folder`));
  }
}

async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8')) as unknown;
}

/** Writes `value` as JSON, as Prettier formats it with this checkout's settings, so the starter's lint passes. */
async function writeJson(path: string, value: unknown): Promise<void> {
  const settings = await resolveConfig(join(ROOT, 'package.json'));
  await writeFile(path, await format(JSON.stringify(value), { ...settings, filepath: path }));
}

/**
 * `names` with the versions this checkout's package.json gives them, or, for a package it only
 * has through another (@aws-sdk/core, which a test imports), the version its lock installed.
 */
function versionsOf(names: readonly string[], root: PackageJson, lock: PackageLock): Record<string, string> {
  return Object.fromEntries(
    names.map((name) => {
      const installed = lock.packages[`${NODE_MODULES}${name}`]?.version;
      const version =
        root.dependencies[name] ??
        root.devDependencies[name] ??
        (installed === undefined ? undefined : `^${installed}`);
      if (version === undefined) throw new Error(`neither package.json nor package-lock.json has ${name}`);
      return [name, version];
    }),
  );
}

/** The starter's package.json: this one's settings and versions, its own scripts, only its dependencies. */
function starterPackage(root: PackageJson, lock: PackageLock, name: string): PackageJson {
  return {
    name,
    version: '1.0.0',
    private: true,
    description: root.description,
    scripts: SCRIPTS,
    dependencies: versionsOf(DEPENDENCIES, root, lock),
    devDependencies: versionsOf([...DEV_DEPENDENCIES].sort(), root, lock),
    overrides: root.overrides,
    engines: root.engines,
  };
}

/**
 * Where npm finds `name` for the package at `from` (a package-lock.json path such as
 * `node_modules/a/node_modules/b`, or '' for the project): in its own node_modules, then in each
 * folder above, as Node resolves it.
 */
function installedAt(lock: PackageLock, from: string, name: string): string | undefined {
  for (let folder = from; ; folder = folder.slice(0, Math.max(0, folder.lastIndexOf('/node_modules/')))) {
    const path = `${folder === '' ? '' : `${folder}/`}node_modules/${name}`;
    if (path in lock.packages) return path;
    if (folder === '') return undefined;
  }
}

/**
 * This checkout's package-lock.json cut to the packages the starter's dependencies need, each at
 * the version and place it has here: the starter installs what this project tested.
 */
function starterLock(lock: PackageLock, pkg: PackageJson): PackageLock {
  const kept = new Set<string>();
  function keep(from: string, wanted: Record<string, string> = {}, optional: (name: string) => boolean): void {
    for (const name of Object.keys(wanted)) {
      const path = installedAt(lock, from, name);
      if (path === undefined) {
        if (optional(name)) continue;
        throw new Error(`package-lock.json has no ${name} for ${from === '' ? 'the project' : from}`);
      }
      if (kept.has(path)) continue;
      kept.add(path);
      const entry = lock.packages[path] ?? {};
      keep(path, entry.dependencies, () => false);
      // Another platform's binaries are optional: the lock holds them all, npm installs the one that fits.
      keep(path, entry.optionalDependencies, () => true);
      keep(path, entry.peerDependencies, (peer) => entry.peerDependenciesMeta?.[peer]?.optional === true);
    }
  }
  keep('', { ...pkg.dependencies, ...pkg.devDependencies }, () => false);
  const project = lock.packages[''] ?? {};
  const packages = Object.fromEntries(Object.entries(lock.packages).filter(([path]) => kept.has(path)));
  return {
    ...lock,
    name: pkg.name,
    packages: {
      '': { ...project, name: pkg.name, dependencies: pkg.dependencies, devDependencies: pkg.devDependencies },
      ...packages,
    },
  };
}

/**
 * package.json's allowScripts for the starter: this checkout's denials (docs/contributing.md,
 * "Install scripts") of the packages with an install script that the starter installs too.
 */
function allowScriptsOf(root: PackageJson, lock: PackageLock): Record<string, boolean> {
  const withScripts = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf(NODE_MODULES) + NODE_MODULES.length));
  return Object.fromEntries(Object.entries(root.allowScripts ?? {}).filter(([name]) => withScripts.includes(name)));
}

/** This checkout's tsconfig.json, including only what the starter holds. */
async function starterTsconfig(target: string): Promise<unknown> {
  const tsconfig = (await readJson(join(ROOT, 'tsconfig.json'))) as { include: string[] };
  return { ...tsconfig, include: tsconfig.include.filter((entry) => existsSync(join(target, entry))) };
}

/** The starter's serverless.yml (starter/serverless.yml), its service named `name`. */
async function starterServerlessYml(name: string): Promise<string> {
  const yml = await readFile(join(ROOT, 'starter/serverless.yml'), 'utf8');
  const service = /^service: .*$/m;
  if (!service.test(yml)) throw new Error('starter/serverless.yml names no service');
  return yml.replace(service, `service: ${name}`);
}

/** Writes the starter to `target`, its service named `name`; returns the files it wrote, relative to it. */
export async function writeStarter({ target, name }: Request): Promise<string[]> {
  checkTarget(target);
  await mkdir(target, { recursive: true });
  for (const folder of STARTER.folders) await cp(join(ROOT, folder), join(target, folder), { recursive: true });
  async function copy(from: string, to: string): Promise<void> {
    await mkdir(dirname(to), { recursive: true });
    await copyFile(from, to);
  }
  for (const file of STARTER.files) await copy(join(ROOT, file), join(target, file));
  for (const file of STARTER.own) await copy(join(ROOT, 'starter', file), join(target, file));
  await writeFile(join(target, 'serverless.yml'), await starterServerlessYml(name));

  const root = (await readJson(join(ROOT, 'package.json'))) as PackageJson;
  const rootLock = (await readJson(join(ROOT, 'package-lock.json'))) as PackageLock;
  const pkg = starterPackage(root, rootLock, name);
  const lock = starterLock(rootLock, pkg);
  await writeJson(join(target, 'package.json'), { ...pkg, allowScripts: allowScriptsOf(root, lock) });
  await writeJson(join(target, 'package-lock.json'), lock);
  await writeJson(join(target, 'tsconfig.json'), await starterTsconfig(target));
  return filesUnder(target);
}

async function main(): Promise<number> {
  const request = requestFrom(process.argv.slice(2));
  if (request === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const { target, name } = request;
  const files = await writeStarter(request);
  process.stdout.write(
    `Wrote the service ${name}, ${files.length} files, to ${target}. Next:\n` +
      `  cd ${relative(process.env.INIT_CWD ?? process.cwd(), target) || '.'} && npm install && npm test\n` +
      '  npm start   # the API on http://localhost:3000\n',
  );
  return 0;
}

if (require.main === module) runTool(main);
