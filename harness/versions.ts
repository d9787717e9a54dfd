import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { build, type Plugin } from 'esbuild';
import { zipSync } from 'fflate';
import type { DynamoDbTodoStore } from '../lib/dynamodb/store';
import type { TodoStore } from '../lib/todos';
import type { FunctionName } from '../test/support/routes';
import { functionZips, type Packaged } from './package';
import { PROJECT_ROOT } from './project';

/**
 * Version N+1 of the service, built for the deploy tests (issue 38: a deploy is a fault too): the
 * code as it is, with lib/todos.ts and lib/input.ts replaced by test/support/next-version/, the
 * domain with one more field. It is never shipped: esbuild swaps the two files while it bundles,
 * so nothing in lib/ or functions/ knows of it.
 *
 * - For the simulator, `nextStoreClass`: the DynamoDB store's module bundled with the swap, where
 *   every lib module that does not reach the domain (the errors, the client, the runtime, …) is
 *   left out of the bundle and required from its source: both versions then share the error
 *   classes (the store and the world tell answers by `instanceof` and by name) and one DynamoDB
 *   client type, and run on one simulated table and clock.
 * - For the fleet, `nextPackage`: the zips of a package with each function's bundle built again
 *   with the swap, as `serverless package` builds it (serverless.yml's esbuild options).
 *
 * What is built is kept under node_modules/.cache (never the system's temporary directory, which
 * the suite's teardown checks), named by a hash of its contents.
 */

/** Which code a container or a function runs: this checkout's, or version N+1's. */
export type Version = 'current' | 'next';

export const NEXT_VERSION_DIR = join(PROJECT_ROOT, 'test/support/next-version');
const CACHE = join(PROJECT_ROOT, 'node_modules/.cache/todo-api/next-version');

/** The domain's files, and what version N+1 has in their place. */
const SWAPPED: Readonly<Record<string, string>> = {
  [join(PROJECT_ROOT, 'lib/todos.ts')]: join(NEXT_VERSION_DIR, 'todos.ts'),
  [join(PROJECT_ROOT, 'lib/input.ts')]: join(NEXT_VERSION_DIR, 'input.ts'),
};

/** The source file a relative import names (the project imports without extensions). */
function sourceOf(resolveDir: string, path: string): string {
  const base = resolve(resolveDir, path);
  return existsSync(`${base}.ts`) ? `${base}.ts` : base;
}

/**
 * Replaces each file of `swaps` with its stand-in wherever it is imported, but in the stand-ins themselves: they build
 * on the file they stand in for (N+1's domain on the current rules it does not change, the title's cap, say; a bench's
 * pacing on the store's), imported from lib/, so those live in one place.
 */
function swapping(swaps: Readonly<Record<string, string>>): Plugin {
  const standIns = new Set(Object.values(swaps));
  return {
    name: 'swapped-files',
    setup(plugin) {
      plugin.onResolve({ filter: /^\.\.?\// }, ({ path, resolveDir, importer }) => {
        if (standIns.has(importer)) return undefined;
        const swapped = swaps[sourceOf(resolveDir, path)];
        return swapped === undefined ? undefined : { path: swapped };
      });
    },
  };
}

/** Replaces lib/todos.ts and lib/input.ts with version N+1's wherever they are imported. */
const swapDomain = swapping(SWAPPED);

/** Leaves `shared` modules out of the bundle: the bundle requires them from their sources. */
function requireShared(shared: ReadonlySet<string>): Plugin {
  return {
    name: 'shared-modules',
    setup(plugin) {
      plugin.onResolve({ filter: /^\.\.?\// }, ({ path, resolveDir }) => {
        const source = sourceOf(resolveDir, path);
        // Without its extension, as the sources import each other: jest and tsx resolve it to the .ts.
        return shared.has(source) ? { path: source.replace(/\.ts$/, ''), external: true } : undefined;
      });
    },
  };
}

/** Writes `contents` under the cache as `name`, once: a file of that name already holds them. */
function cached(name: string, contents: Uint8Array | string): string {
  const path = join(CACHE, name);
  if (existsSync(path)) return path;
  mkdirSync(dirname(path), { recursive: true });
  // Written apart, then renamed: two test files building at once never read half a file.
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, contents);
  renameSync(partial, path);
  return path;
}

function hashOf(...parts: (Uint8Array | string)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 16);
}

const STORE_ENTRY = join(PROJECT_ROOT, 'lib/dynamodb/store.ts');

/** The modules of `entry`'s graph (with N+1's domain) that do not reach the domain: kept shared. */
async function sharedModules(entry = STORE_ENTRY): Promise<Set<string>> {
  const { metafile } = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    metafile: true,
    absWorkingDir: PROJECT_ROOT,
    packages: 'external',
    plugins: [swapDomain],
  });
  const inputs = metafile.inputs;
  const domain = new Set(Object.values(SWAPPED).map((path) => relative(PROJECT_ROOT, path)));
  function reaches(path: string, seen: Set<string>): boolean {
    if (domain.has(path)) return true;
    if (seen.has(path)) return false;
    seen.add(path);
    return (inputs[path]?.imports ?? []).some((imported) => reaches(imported.path, seen));
  }
  return new Set(
    Object.keys(inputs)
      .filter((path) => !reaches(path, new Set()) && !path.includes('node_modules'))
      .map((path) => resolve(PROJECT_ROOT, path)),
  );
}

/** The store's class as version N+1 builds it: the same constructor, on the same DynamoDb and Runtime. */
export type StoreClass = typeof DynamoDbTodoStore;

let nextStore: Promise<StoreClass> | undefined;

/** Version N+1's DynamoDbTodoStore, built once per process (and once per content on a machine). */
export function nextStoreClass(): Promise<StoreClass> {
  nextStore ??= (async () => {
    const loaded = (await nextModule(STORE_ENTRY)) as { DynamoDbTodoStore?: StoreClass };
    if (loaded.DynamoDbTodoStore === undefined) throw new Error('the store of N+1 exports no DynamoDbTodoStore');
    return loaded.DynamoDbTodoStore;
  })();
  return nextStore;
}

/** A function's handler factory (`createTodo(store)`, say: test/support/routes.ts), and the store it takes. */
type HandlerFactory = (todos: TodoStore) => APIGatewayProxyHandlerV2;

/**
 * Version N+1's handler factory of function `name` (functions/<name>.ts built with N+1's domain): its input rules are
 * N+1's, and it answers through whatever store it is given (N+1's, for the deploy tests).
 */
export async function nextHandlerFactory(name: FunctionName): Promise<HandlerFactory> {
  const loaded = (await nextModule(join(PROJECT_ROOT, 'functions', `${name}.ts`))) as Record<string, unknown>;
  const factory = loaded[name];
  if (typeof factory !== 'function') throw new Error(`functions/${name}.ts of N+1 exports no ${name}`);
  return factory as HandlerFactory;
}

/**
 * `entry` bundled with N+1's domain, every module that does not reach the domain left out and required from its source
 * (one error class, one client type for both versions), and loaded: once per content on a machine.
 */
async function nextModule(entry: string): Promise<unknown> {
  const shared = await sharedModules(entry);
  const { outputFiles } = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    packages: 'external',
    // The swap first: the domain's files are never shared.
    plugins: [swapDomain, requireShared(shared)],
  });
  const code = outputFiles[0]?.contents;
  if (code === undefined) throw new Error(`esbuild wrote no bundle of ${entry}`);
  const path = cached(`${basename(entry, '.ts')}-${hashOf(code)}.cjs`, code);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a bundle built at run time has no static import
  return require(path) as unknown;
}

/** Version N+1's package: `packaged`'s template, and its zips with each function built again with N+1's domain. */
export function nextPackage(packaged: Pick<Packaged, 'dir' | 'template'>): Promise<Packaged> {
  return packageWith(packaged, SWAPPED);
}

/**
 * `packaged`'s template, and its zips with each function's bundle built again with the stand-ins of `swaps` (a file of
 * the project's for another), as serverless.yml's esbuild options build it for the DynamoDB store.
 */
export async function packageWith(
  packaged: Pick<Packaged, 'dir' | 'template'>,
  swaps: Readonly<Record<string, string>>,
): Promise<Packaged> {
  const zips = functionZips(packaged);
  const bundles = new Map<string, Uint8Array>();
  for (const name of zips.keys()) {
    const { outputFiles } = await build({
      entryPoints: [join(PROJECT_ROOT, 'functions', `${name}.ts`)],
      bundle: true,
      minify: true,
      platform: 'node',
      target: 'node22',
      format: 'cjs',
      write: false,
      logLevel: 'silent',
      mainFields: ['module', 'main'],
      external: ['@aws-sdk/credential-provider-node'],
      define: { 'process.env.TODO_STORE': '"dynamodb"' },
      plugins: [swapping(swaps)],
    });
    const code = outputFiles[0]?.contents;
    if (code === undefined) throw new Error(`esbuild wrote no bundle of ${name}`);
    bundles.set(name, code);
  }
  const templateText = readFileSync(join(packaged.dir, 'cloudformation-template-update-stack.json'));
  const dir = join(CACHE, `package-${hashOf(templateText, ...bundles.values())}`);
  if (!existsSync(join(dir, 'cloudformation-template-update-stack.json'))) {
    const building = `${dir}.${process.pid}.tmp`;
    rmSync(building, { recursive: true, force: true });
    mkdirSync(building, { recursive: true });
    for (const [name, files] of zips) {
      const code = bundles.get(name);
      if (code === undefined) continue;
      writeFileSync(join(building, `${name}.zip`), zipSync({ ...files, [`functions/${name}.js`]: code }));
    }
    writeFileSync(join(building, 'cloudformation-template-update-stack.json'), templateText);
    if (existsSync(dir)) rmSync(building, { recursive: true, force: true });
    else renameSync(building, dir);
  }
  return { dir, template: packaged.template, resources: packaged.template.Resources };
}
