import { TEST_RUN_ENV, userFiles } from './support/user-files';

declare global {
  // Read by global-teardown.ts: jest runs both in the same context.
  var userFilesBefore: ReturnType<typeof userFiles> | undefined;
}

/** What the checkout's tools had written before the run: global-teardown.ts checks that no test changed it. */
export default function globalSetup(): void {
  globalThis.userFilesBefore = userFiles();
  // Before jest starts its workers, so every process a test starts inherits it.
  process.env[TEST_RUN_ENV] = String(process.pid);
}
