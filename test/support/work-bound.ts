import { jest } from '@jest/globals';
import { ONLY_A_HANG_MS } from './bounds';

/**
 * A setup file of the `unit` and `simulation` projects, whose tests compute and start no other
 * process: a test that states no bound gets ONLY_A_HANG_MS, not jest.config.ts's TEST_WITHIN_MS
 * (test/support/bounds.ts says why). jest reads `testTimeout` from the root config alone, for
 * every project; a setup file's `jest.setTimeout` is that file's project's default.
 */
jest.setTimeout(ONLY_A_HANG_MS);
