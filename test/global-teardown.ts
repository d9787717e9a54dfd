import { TEST_RUN_ENV, changedUserFiles, userFiles, workFolderOwner } from './support/user-files';

/** Fails the run when a test changed what the checkout's tools had written, or left a work folder behind. */
export default function globalTeardown(): void {
  const before = globalThis.userFilesBefore;
  if (before === undefined) return;
  const run = process.env[TEST_RUN_ENV] ?? String(process.pid);
  const changed = changedUserFiles(before, userFiles(), (folder) => workFolderOwner(folder, run));
  if (changed.length > 0) {
    throw new Error(
      `tests changed files of this checkout outside their scratch folders: ${changed.join(', ')}. ` +
        'A test that packages, deploys or writes must do it in a scratch copy (harness/scratch.ts).',
    );
  }
}
