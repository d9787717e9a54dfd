import type { Config } from 'jest';

// Type checking is `tsc --noEmit` in `npm test`; ts-jest only transpiles (isolatedModules).
const transform: Config['transform'] = { '^.+\\.ts$': ['ts-jest', {}] };

const config: Config = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
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
      displayName: 'package',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/package/**/*.test.ts'],
    },
  ],
};

export default config;
