import { availableParallelism } from 'node:os';
import type { Config } from 'jest';
import { DYNAMODB_ONLY, EVERY_STORE } from './test/store-tests';

// Type checking is `tsc --noEmit` in `npm test`; ts-jest only transpiles (isolatedModules).
const transform: Config['transform'] = { '^.+\\.ts$': ['ts-jest', {}] };

// The AWS SDK's notice that its 2027 releases need Node 22 is about deployment (nodejs22.x), and
// would only bury the test output on Node 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Tests stay quiet unless LOG_LEVEL asks otherwise.
process.env.LOG_LEVEL ??= 'silent';

/**
 * The bound for a test that states none, instead of jest's 5 s: a test makes at most a few
 * hundred calls to a handler or a local DynamoDB, each a few ms idle; 60 s leaves room for a
 * 2-core machine that other jobs keep busy.
 */
const TEST_WITHIN_MS = 60_000;

const unitFiles = (names: string[]) => names.map((name) => `<rootDir>/test/unit/${name}.test.ts`);

// jest's cache under node_modules/.cache, like other tools' caches, not in the system's temporary directory.
const CACHE_DIRECTORY = '<rootDir>/node_modules/.cache/jest';
const everyProject = { testEnvironment: 'node', transform, cacheDirectory: CACHE_DIRECTORY };

const config: Config = {
  cacheDirectory: CACHE_DIRECTORY,
  testTimeout: TEST_WITHIN_MS,
  // Most tests wait on DynamoDB Local: two test files at a time keep a 2-core machine busy.
  maxWorkers: Math.max(2, availableParallelism() - 1),
  projects: [
    {
      // `npm run test:unit`, the quick check: the handlers, the HTTP edge and the memory store, with
      // no Java. The tests of every store run here on the memory store (test/store-tests.ts).
      displayName: 'unit',
      ...everyProject,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      testPathIgnorePatterns: unitFiles(DYNAMODB_ONLY),
      setupFiles: ['<rootDir>/test/support/stores-memory.ts'],
    },
    {
      // The same tests on the DynamoDB store, and its own, on one DynamoDB Local (Java 17 or newer)
      // that test/dynamodb-setup.ts starts for the run.
      displayName: 'dynamodb',
      ...everyProject,
      testMatch: unitFiles([...EVERY_STORE, ...DYNAMODB_ONLY]),
      setupFiles: ['<rootDir>/test/support/stores-dynamodb.ts'],
      globalSetup: '<rootDir>/test/dynamodb-setup.ts',
      globalTeardown: '<rootDir>/test/dynamodb-teardown.ts',
    },
  ],
};

export default config;
