import type { Config } from 'jest';

// Type checking is `tsc --noEmit` in `npm test`; ts-jest only transpiles (isolatedModules).
const transform: Config['transform'] = { '^.+\\.ts$': ['ts-jest', {}] };

// Local runs are on Node 20 (this machine); the AWS SDK's notice that its 2027 releases need Node 22 is
// about deployment, which uses nodejs22.x, and would only bury the test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Tests stay quiet unless LOG_LEVEL asks otherwise (the servers they start inherit it too).
process.env.LOG_LEVEL ??= 'silent';

const config: Config = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      globalSetup: '<rootDir>/test/unit/global-setup.ts',
      globalTeardown: '<rootDir>/test/unit/global-teardown.ts',
    },
    {
      // Real `serverless offline` processes over real HTTP, one per test file, started once in global setup.
      displayName: 'e2e',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
      globalSetup: '<rootDir>/test/e2e/global-setup.ts',
      globalTeardown: '<rootDir>/test/e2e/global-teardown.ts',
    },
    {
      displayName: 'system',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/system/**/*.test.ts'],
    },
  ],
};

export default config;
