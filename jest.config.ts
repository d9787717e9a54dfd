import { availableParallelism } from 'node:os';
import type { Config } from 'jest';

// Type checking is `tsc --noEmit` in `npm test`; ts-jest only transpiles (isolatedModules).
const transform: Config['transform'] = { '^.+\\.ts$': ['ts-jest', {}] };

// Local runs are on Node 20 (this machine); the AWS SDK's notice that its 2027 releases need Node 22 is
// about deployment, which uses nodejs22.x, and would only bury the test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Tests stay quiet unless LOG_LEVEL asks otherwise (the servers they start inherit it too).
process.env.LOG_LEVEL ??= 'silent';

/**
 * The bound for a test that states none, instead of jest's 5 s. Tests that start servers,
 * package or run load state their own bounds, derived from what they wait for. The others make
 * at most a few hundred calls to a handler, a local DynamoDB or a running server, each a few ms
 * idle: 60 s leaves room for a 2-core machine that other jobs keep busy. (jest reads this from
 * the root config only, not per project.)
 */
const TEST_WITHIN_MS = 60_000;

const config: Config = {
  testTimeout: TEST_WITHIN_MS,
  // Most tests wait on other processes (servers, DynamoDB Local, the framework's commands): two
  // test files at a time keep a 2-core machine busy where jest's default (cores - 1) would run one.
  maxWorkers: Math.max(2, availableParallelism() - 1),
  // One DynamoDB Local for every project (test/global-setup.ts).
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      // Real `serverless offline` processes over real HTTP; each test file starts its own.
      displayName: 'e2e',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
    },
    {
      displayName: 'system',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/system/**/*.test.ts'],
    },
    {
      // The shipped zips as AWS runs them: containers, a gateway, DynamoDB Local (harness/fleet.ts).
      displayName: 'fleet',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/fleet/**/*.test.ts'],
    },
    {
      // Tests that need programs from outside npm (Chromium, the AWS CLI): `npm run test:external`,
      // which .ci/run runs after installing them. `npm test` leaves them out.
      displayName: 'external',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/external/**/*.test.ts'],
    },
  ],
};

export default config;
