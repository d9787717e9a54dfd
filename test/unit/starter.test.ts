import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { runCommand, type CommandResult } from '../../harness/cli';
import { PROJECT_ROOT } from '../../harness/project';
import { STARTER, filesUnder } from '../../scripts/starter-files';
import { brokenInComments, brokenInMarkdown, type Tree } from '../support/doc-links';
import { importClosure, importsOf, isRelative, packageOf, resolveRelative } from '../support/imports';

/**
 * `npm run starter -- <folder>` (scripts/starter.ts) writes a project to start a service from:
 * the core (functions/, lib/), the tests that cover it and what they share, and nothing of the
 * machinery that proves it. Here: what it holds, that every import in it resolves there (to its
 * own files, Node's modules or its package.json's dependencies), that no test of the core is left
 * behind, and that its serverless.yml deploys this service's table, permissions and routes. Its
 * own `npm install && npm test`, and `npm start` answering, run in .ci/run.
 */

/** Each run compiles the script with tsx (about 2 s idle) and copies a hundred files: room for a busy 2-core machine. */
const RUN_WITHIN_MS = 60_000;

/** The starter's dependencies that no file of it imports, and why it has them. */
const TOOLS: Record<string, string> = {
  esbuild: "serverless-esbuild's peer: it bundles each function",
  eslint: 'npm run lint',
  prettier: 'npm run lint',
  serverless: 'the framework (osls): npm start, package, deploy',
  'serverless-esbuild': "a plugin in serverless.yml's list",
  'serverless-offline': "a plugin in serverless.yml's list: npm start",
  'ts-jest': "jest.config.ts's transform",
  'ts-node': 'jest reads jest.config.ts with it',
  typescript: 'tsc --noEmit, in npm test',
  '@types/node': "tsconfig.json's types",
};

interface PackageJson {
  name: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  engines: unknown;
  overrides: unknown;
  allowScripts: Record<string, boolean>;
}

interface Lock {
  packages: Record<string, { version?: string }>;
}

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8')) as unknown;
}

/** serverless.yml as data; CloudFormation's own tags (!GetAtt) are kept as the text they hold. */
function serverlessYml(folder: string): Record<string, unknown> {
  return parse(readFileSync(join(folder, 'serverless.yml'), 'utf8'), { logLevel: 'error' }) as Record<string, unknown>;
}

function starter(args: readonly string[]): Promise<CommandResult> {
  return runCommand('npm', ['run', '--silent', 'starter', '--', ...args]);
}

describe('npm run starter', () => {
  let scratch: string;
  /** The starter, written by `npm run starter -- <scratch>/my-service`. */
  let dir: string;
  let written: CommandResult;
  let files: string[];

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'todo-starter-'));
    dir = join(scratch, 'my-service');
    written = await starter([dir]);
    files = existsSync(dir) ? filesUnder(dir) : [];
  }, RUN_WITHIN_MS);
  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  it('writes the project, named after its folder, and says what to do next', () => {
    expect(written).toMatchObject({ code: 0, stderr: '' });
    expect(written.stdout).toContain('npm install && npm test');
    expect((readJson(join(dir, 'package.json')) as PackageJson).name).toBe('my-service');
    expect(serverlessYml(dir).service).toBe('my-service');
  });

  it('holds the five handlers, all of lib/, the listed tests and what they share, and nothing else', () => {
    const ofRoot = (folder: string) => filesUnder(join(PROJECT_ROOT, folder)).map((file) => `${folder}/${file}`);
    const expected = [
      ...STARTER.folders.flatMap(ofRoot),
      ...STARTER.files,
      ...STARTER.own,
      'serverless.yml',
      'package.json',
      'package-lock.json',
      'tsconfig.json',
    ];
    expect(files).toEqual(expected.sort());
    expect(files.filter((file) => file.startsWith('functions/'))).toEqual(
      ['createTodo', 'deleteTodo', 'getTodo', 'listTodos', 'updateTodo'].map((name) => `functions/${name}.ts`),
    );
    const machinery = /^(?:harness|bench|smoke|scripts|serverless|test\/(?:e2e|system|fleet|external))\/|simulat|mutat/;
    expect(files.filter((file) => machinery.test(file))).toEqual([]);
  });

  it('resolves every relative import to a file of its own', () => {
    const unresolved = files
      .filter((file) => /\.(?:ts|js|cjs|mjs)$/.test(file))
      .flatMap((file) =>
        importsOf(join(dir, file))
          .filter(isRelative)
          .filter((specifier) => resolveRelative(join(dir, file), specifier)?.startsWith(`${dir}/`) !== true)
          .map((specifier) => `${file}: ${specifier}`),
      );
    expect(unresolved).toEqual([]);
  });

  it('depends on every package its files import, and on nothing else but the tools it runs', () => {
    const pkg = readJson(join(dir, 'package.json')) as PackageJson;
    const declared = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
    const imported = new Set(
      files
        .filter((file) => /\.(?:ts|js|cjs|mjs)$/.test(file))
        .flatMap((file) => importsOf(join(dir, file)).filter((specifier) => !isRelative(specifier)))
        .flatMap((specifier) => packageOf(specifier) ?? []),
    );
    // A package of types alone (aws-lambda) is declared as @types/<name>.
    const missing = [...imported].filter((name) => !declared.includes(name) && !declared.includes(`@types/${name}`));
    expect(missing).toEqual([]);
    const used = (name: string) => imported.has(name) || imported.has(name.replace(/^@types\//, ''));
    expect(declared.filter((name) => !used(name)).sort()).toEqual(Object.keys(TOOLS).sort());
  });

  it('cites in its own files (README.md, serverless.yml, jest.config.ts) only what it holds', () => {
    const folders = new Set(
      files.flatMap((file) =>
        file
          .split('/')
          .slice(0, -1)
          .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
      ),
    );
    const tree: Tree = {
      files,
      exists: (path) => files.includes(path) || folders.has(path),
      ignored: (path) => ['.esbuild', '.serverless', 'node_modules'].some((written) => path.startsWith(written)),
      read: (path) => (files.includes(path) ? readFileSync(join(dir, path), 'utf8') : undefined),
    };
    const own = [...STARTER.own, 'serverless.yml'].map((path) => ({
      path,
      text: readFileSync(join(dir, path), 'utf8'),
    }));
    const broken = own.flatMap((source) =>
      source.path.endsWith('.md') ? brokenInMarkdown(source, tree) : brokenInComments(source, tree),
    );
    expect(broken).toEqual([]);
  });

  it('takes its versions and settings from this package.json, and locks what this project locked', () => {
    const root = readJson(join(PROJECT_ROOT, 'package.json')) as PackageJson;
    const pkg = readJson(join(dir, 'package.json')) as PackageJson;
    const rootLock = (readJson(join(PROJECT_ROOT, 'package-lock.json')) as Lock).packages;
    const lock = (readJson(join(dir, 'package-lock.json')) as Lock).packages;
    // A package this project has only through another (@aws-sdk/core) at what its lock installed.
    const versionOf = (name: string) =>
      root.dependencies[name] ?? root.devDependencies[name] ?? `^${rootLock[`node_modules/${name}`]?.version ?? '?'}`;
    for (const [name, version] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
      expect({ name, version }).toEqual({ name, version: versionOf(name) });
    }
    expect(Object.keys(pkg.dependencies)).toEqual(Object.keys(root.dependencies));
    expect({ engines: pkg.engines, overrides: pkg.overrides }).toEqual({
      engines: root.engines,
      overrides: root.overrides,
    });
    expect(root.allowScripts).toMatchObject(pkg.allowScripts);

    const drifted = Object.entries(lock).filter(
      ([path, entry]) => path !== '' && entry.version !== rootLock[path]?.version,
    );
    expect(drifted).toEqual([]);
    expect(Object.keys(lock).length).toBeLessThan(Object.keys(rootLock).length);
  });

  it('leaves out no test of the core: every unit test file that needs only what the starter holds is in it', () => {
    const held = new Set([
      ...STARTER.folders.flatMap((folder) => filesUnder(join(PROJECT_ROOT, folder)).map((file) => `${folder}/${file}`)),
      ...STARTER.files,
    ]);
    const unitDir = join(PROJECT_ROOT, 'test/unit');
    const needsOnlyTheStarter = readdirSync(unitDir)
      .filter((file) => file.endsWith('.test.ts'))
      .filter((file) =>
        [...importClosure(join(unitDir, file))]
          .map((path) => relative(PROJECT_ROOT, path))
          .every((path) => path === `test/unit/${file}` || held.has(path)),
      );
    // The core's tests are most of the starter's: the check must find them, or it proves nothing.
    expect(needsOnlyTheStarter.length).toBeGreaterThan(20);
    expect(needsOnlyTheStarter.filter((file) => !files.includes(`test/unit/${file}`))).toEqual([]);
  });

  it('deploys what serverless.yml deploys: the runtime, the table, its permissions, the routes', () => {
    interface Config {
      provider: Record<string, unknown>;
      custom: {
        stores: { dynamodb: { iamStatements: unknown; resources: unknown } };
        esbuild: Record<string, unknown>;
      };
      functions: Record<string, { handler: string; events: unknown }>;
    }
    const ours = serverlessYml(PROJECT_ROOT) as unknown as Config;
    const theirs = serverlessYml(dir) as unknown as Config;
    const settings = ({ provider, custom, functions }: Config) => ({
      runtime: provider.runtime,
      architecture: provider.architecture,
      memorySize: provider.memorySize,
      timeout: provider.timeout,
      cors: (provider.httpApi as { cors: unknown }).cors,
      accessLog: provider.logs,
      table: custom.stores.dynamodb.resources,
      permissions: custom.stores.dynamodb.iamStatements,
      bundled: { mainFields: custom.esbuild.mainFields, exclude: custom.esbuild.exclude },
      routes: Object.fromEntries(
        Object.entries(functions).map(([name, { handler, events }]) => [name, { handler, events }]),
      ),
    });
    expect(settings(theirs)).toEqual(settings(ours));
    expect(theirs).toMatchObject({ plugins: ['serverless-esbuild', 'serverless-offline'] });
  });
});

describe('npm run starter’s command line', () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'todo-starter-'));
  });
  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  it(
    '`--help` prints the usage and writes nothing',
    async () => {
      const target = join(scratch, 'helped');
      const help = await starter([target, '--help']);
      expect(help).toMatchObject({ code: 0, stderr: '' });
      expect(help.stdout).toMatch(/^Usage: npm run starter -- <folder> \[--name <service>\]\n/);
      expect(help.stdout).toContain('npm install && npm test');
      expect(existsSync(target)).toBe(false);
    },
    RUN_WITHIN_MS,
  );

  it(
    'answers a mistyped option, a bad name, no folder and a folder that is not empty with one line, exit 2, writing nothing',
    async () => {
      const full = join(scratch, 'full');
      mkdirSync(full);
      writeFileSync(join(full, 'notes.txt'), 'mine\n');
      const runs = await Promise.all([
        starter([join(scratch, 'a'), '--nmae', 'x']),
        starter([join(scratch, 'b'), '--name', 'My_Service']),
        starter([]),
        starter([full]),
      ]);
      const lines = [
        'Unknown option "--nmae" for npm run starter: did you mean "--name"?',
        '--name "My_Service" cannot name a service: up to 40 lowercase letters, digits and hyphens',
        'npm run starter needs the folder to write: npm run starter -- ../my-service',
        `${full} is not empty: name a new or empty folder`,
      ];
      expect(runs.map(({ code, stdout, stderr }) => ({ code, stdout, stderr: stderr.split('\n')[0] }))).toEqual(
        lines.map((line) => ({ code: 2, stdout: '', stderr: expect.stringContaining(line) })),
      );
      for (const { stderr } of runs) expect(stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(readdirSync(scratch).sort()).toEqual(['full']);
      expect(readdirSync(full)).toEqual(['notes.txt']);
    },
    RUN_WITHIN_MS,
  );
});
