import { availableParallelism } from 'node:os';
import type { Config } from 'jest';
import * as core from './test/store-tests';

// Type checking is `tsc --noEmit` in `npm test`; ts-jest only transpiles (isolatedModules).
const transform: Config['transform'] = { '^.+\\.ts$': ['ts-jest', {}] };

// Local runs are on Node 20 (this machine); the AWS SDK's notice that its 2027 releases need Node 22 is
// about deployment, which uses nodejs22.x, and would only bury the test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Tests stay quiet unless LOG_LEVEL asks otherwise (the servers they start inherit it too).
process.env.LOG_LEVEL ??= 'silent';

/**
 * The bound for a test that states none, instead of jest's 5 s, in the projects that start other
 * processes (test/support/bounds.ts: work is bounded by its count, a wait by what it waits for).
 * Tests that start servers, package or run load state their own bounds, derived from what they
 * wait for. The others make at most a few hundred calls to a handler, a local DynamoDB or a
 * running server, each a few ms idle: 60 s leaves room for a 2-core machine that other jobs keep
 * busy. jest reads this from the root config only, for every project: `unit` and `simulation`,
 * which only compute, set their own default in a setup file (WORK_BOUND).
 */
const TEST_WITHIN_MS = 60_000;
/** The setup file that gives a project of work alone the timeout only a hang meets (ONLY_A_HANG_MS). */
const WORK_BOUND = '<rootDir>/test/support/work-bound.ts';

/**
 * Unit test files that run on every store: on the memory store in `unit`, on DynamoDB Local in
 * `dynamodb`. The core's list (test/store-tests.ts), which a project made by `npm run starter` keeps.
 */
export const EVERY_STORE = core.EVERY_STORE;
/**
 * Unit test files of the DynamoDB store alone, or of the Java it needs: in `dynamodb` only. The
 * core's (test/store-tests.ts), then those that need the harness: AWS's DynamoDB as modelled
 * (harness/aws-dynamodb/), the fault proxy.
 */
export const DYNAMODB_ONLY = [
  ...core.DYNAMODB_ONLY,
  'aws-dynamodb',
  'dynamodb-client',
  'dynamodb-faults',
  'dynamodb-queue',
  'dynamodb-store',
  'dynamodb-under-load',
  'dynamodb-versions',
  'exactly-once',
];
/**
 * Unit test files too slow for the quick check, in `simulation`: the simulator's search, every
 * scenario to three faults of writes (two of reads) and a hundred seeds (378 s of CPU over worker
 * threads, 406 s wall alone at a load of 3 to 7 from other jobs, at 806641b, where the rest of
 * `unit` takes under a minute). It needs no Java, and keeps its full depth in `npm test`.
 */
export const SIMULATION = ['simulation'];
const unitFiles = (names: string[]) => names.map((name) => `<rootDir>/test/unit/${name}.test.ts`);

/** One DynamoDB Local for every project that needs one: jest runs a setup that several projects name once. */
const withDynamoDb = {
  globalSetup: '<rootDir>/test/dynamodb-setup.ts',
  globalTeardown: '<rootDir>/test/dynamodb-teardown.ts',
};

/**
 * What every project shares. Its cache is kept in the checkout, under node_modules/.cache like other
 * tools' caches, not in jest's default (the system's temporary directory), where a test run
 * would leave it behind (docs/contributing.md, "Commands side by side").
 */
const CACHE_DIRECTORY = '<rootDir>/node_modules/.cache/jest';
const everyProject = { testEnvironment: 'node', transform, cacheDirectory: CACHE_DIRECTORY };

const config: Config = {
  cacheDirectory: CACHE_DIRECTORY,
  testTimeout: TEST_WITHIN_MS,
  // Most tests wait on other processes (servers, DynamoDB Local, the framework's commands): two
  // test files at a time keep a 2-core machine busy where jest's default (cores - 1) would run one.
  maxWorkers: Math.max(2, availableParallelism() - 1),
  // The simulator's search first, also in a fresh clone, where jest knows no file's time.
  testSequencer: '<rootDir>/test/sequencer.cjs',
  // No test may change what the checkout's tools wrote (test/support/user-files.ts).
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  projects: [
    {
      // `npm run test:unit`, the quick check: the handlers, the HTTP edge, the memory store and the
      // scripts, within a minute on a 2-core machine, with no Java: no DynamoDB Local.
      displayName: 'unit',
      ...everyProject,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      testPathIgnorePatterns: unitFiles([...DYNAMODB_ONLY, ...SIMULATION]),
      setupFiles: ['<rootDir>/test/support/stores-memory.ts', WORK_BOUND],
    },
    {
      // `npm run test:simulation`: the simulator's search (SIMULATION), which alone would take
      // the quick check past its minute. No Java: its DynamoDB is simulated.
      displayName: 'simulation',
      ...everyProject,
      testMatch: unitFiles(SIMULATION),
      setupFiles: [WORK_BOUND],
    },
    {
      // The same tests on the DynamoDB store, and its own, on DynamoDB Local.
      displayName: 'dynamodb',
      ...everyProject,
      testMatch: unitFiles([...EVERY_STORE, ...DYNAMODB_ONLY]),
      setupFiles: ['<rootDir>/test/support/stores-dynamodb.ts'],
      ...withDynamoDb,
    },
    {
      // Real `serverless offline` processes over real HTTP; each test file starts its own.
      displayName: 'e2e',
      ...everyProject,
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
      ...withDynamoDb,
    },
    {
      displayName: 'system',
      ...everyProject,
      testMatch: ['<rootDir>/test/system/**/*.test.ts'],
      ...withDynamoDb,
    },
    {
      // The shipped zips as AWS runs them: containers, a gateway, DynamoDB Local (harness/fleet.ts).
      displayName: 'fleet',
      ...everyProject,
      testMatch: ['<rootDir>/test/fleet/**/*.test.ts'],
      ...withDynamoDb,
    },
    {
      // Tests that need programs from outside npm (Chromium, the AWS CLI): `npm run test:external`,
      // which .ci/run runs after installing them. `npm test` leaves them out.
      displayName: 'external',
      ...everyProject,
      testMatch: ['<rootDir>/test/external/**/*.test.ts'],
      ...withDynamoDb,
    },
  ],
};

export default config;
