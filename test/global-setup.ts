import { userFiles } from './support/user-files';

declare global {
  // Read by global-teardown.ts: jest runs both in the same context.
  var userFilesBefore: ReturnType<typeof userFiles> | undefined;
}

/** What the checkout's tools had written before the run: global-teardown.ts checks that no test changed it. */
export default function globalSetup(): void {
  globalThis.userFilesBefore = userFiles();
}
