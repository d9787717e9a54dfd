import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { TEST_RUN_ENV, changedUserFiles, userFiles, workFolderOwner } from '../support/user-files';

/**
 * The check global-teardown.ts makes after every run (test/support/user-files.ts): it must fail
 * on what a test did to a checkout, and on nothing its user had there, or does meanwhile: a
 * `.serverless/` left by `npm run package`, a DynamoDB Local's data, the work folder of their
 * `npm start` (issue 40: `npm test` beside a user's own server and files).
 */

/** A checkout as its user left it: the outputs of `npm run package`, `npm run dynamodb`, a coverage report and the bench. */
const USERS_FILES = {
  '.serverless/cloudformation-template-update-stack.json': '{"Resources":{}}',
  '.serverless/createTodo.zip': 'PK…',
  '.dynamodb/shared-local-instance.db': 'SQLite format 3',
  'coverage/lcov.info': 'TN:',
  'bench/results.json': '{}',
};
/** A time well before the run, as files a user made yesterday have. */
const YESTERDAY = new Date(Date.now() - 24 * 3_600_000);

let checkout: string;
const processes: ChildProcess[] = [];
beforeEach(() => {
  checkout = mkdtempSync(join(tmpdir(), 'todo-checkout-'));
  for (const [path, content] of Object.entries(USERS_FILES)) write(path, content);
});
afterEach(() => {
  for (const child of processes.splice(0)) child.kill();
  rmSync(checkout, { recursive: true, force: true });
});

function write(path: string, content: string): void {
  mkdirSync(dirname(join(checkout, path)), { recursive: true });
  writeFileSync(join(checkout, path), content);
  utimesSync(join(checkout, path), YESTERDAY, YESTERDAY);
}

/** A server that runs until the test ends, with `env` as its environment, and the work folder it would have. */
async function serverWithWorkFolder(env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { env, stdio: 'ignore' });
  processes.push(child);
  await once(child, 'spawn');
  const folder = `.esbuild/offline-${String(child.pid)}`;
  mkdirSync(join(checkout, folder), { recursive: true });
  return folder;
}

/** The environment of a process its user started: the run's own, without the run's name in it. */
function usersEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== TEST_RUN_ENV));
}

const RUN = 'the run';
const ownerOf = (folder: string) => workFolderOwner(folder, RUN);

describe('the teardown’s check of a checkout', () => {
  it('finds no change in what its user had there before the run and the run left as it was', async () => {
    await serverWithWorkFolder(usersEnvironment());
    const before = userFiles(checkout);
    expect([...before.keys()]).toEqual(expect.arrayContaining(Object.keys(USERS_FILES)));
    expect(changedUserFiles(before, userFiles(checkout), ownerOf)).toEqual([]);
  });

  it('reports each file a test wrote, changed or deleted there, and nothing else', () => {
    const before = userFiles(checkout);
    write('.serverless/deleteTodo.zip', 'PK…');
    write('.serverless/cloudformation-template-update-stack.json', '{"Resources":{"Table":{}}}');
    rmSync(join(checkout, '.dynamodb/shared-local-instance.db'));
    expect(changedUserFiles(before, userFiles(checkout), ownerOf).sort()).toEqual([
      '.dynamodb/shared-local-instance.db deleted',
      '.serverless/cloudformation-template-update-stack.json changed',
      '.serverless/deleteTodo.zip written',
    ]);
  });

  it('tells a server its user started during the run from one a test left running, or left behind', async () => {
    const before = userFiles(checkout);
    await serverWithWorkFolder(usersEnvironment());
    const testsServer = await serverWithWorkFolder({ ...process.env, [TEST_RUN_ENV]: RUN });
    const leftBehind = '.esbuild/invoke-999999999';
    mkdirSync(join(checkout, leftBehind), { recursive: true });
    expect(changedUserFiles(before, userFiles(checkout), ownerOf).sort()).toEqual([
      `${leftBehind} left behind`,
      `${testsServer} left behind, its process still running`,
    ]);
  });

  it('counts a work folder gone during the run as its process ended, whoever it was', async () => {
    const usersServer = await serverWithWorkFolder(usersEnvironment());
    const before = userFiles(checkout);
    rmSync(join(checkout, usersServer), { recursive: true });
    expect(changedUserFiles(before, userFiles(checkout), ownerOf)).toEqual([]);
  });

  it('names this run in every test worker, for the processes its tests start to inherit', () => {
    expect(process.env[TEST_RUN_ENV]).toMatch(/^\d+$/);
  });
});
