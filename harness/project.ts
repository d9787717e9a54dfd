import { resolve } from 'node:path';

/** The checkout the tests and the bench run against. */
export const PROJECT_ROOT = resolve(__dirname, '..');

export { freePort } from '../serverless/plugins/local-workflow/ports.cjs';
