import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import { killGroup } from '../../harness/offline';
import { PROJECT_ROOT } from '../../harness/project';
import { eventually } from '../../harness/wait';
import { CHECKS } from '../../smoke/checks';
import type { Report } from '../../smoke/run';
import { startStageProxy, type StageProxy } from './stage-proxy';

/**
 * `npm run smoke -- <url> --json <file>`, run as a user runs it, in a process group of its own,
 * so that a test can press Ctrl-C as a terminal does: SIGINT to the whole group.
 */

/**
 * A whole run: npm and tsx start in about 2 s idle, and the checks send about 70 requests, each
 * a few ms on a local stage and up to about a second on DynamoDB Local under a busy machine.
 */
export const SMOKE_WITHIN_MS = 120_000;

export interface SmokeResult {
  /** The exit status as a shell says it: the code, or 128 + the signal's number for a signal. */
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
  /** What `--json` wrote; undefined when it wrote nothing. */
  readonly report: Report | undefined;
}

export interface SmokeProcess {
  stdout(): string;
  stderr(): string;
  /** Ctrl-C in the terminal that runs it. */
  interrupt(): void;
  /** Whether npm, or anything it started, is still running. */
  running(): boolean;
  readonly finished: Promise<SmokeResult>;
}

export function startSmoke(args: readonly string[]): SmokeProcess {
  const dir = mkdtempSync(join(tmpdir(), 'todo-smoke-'));
  const reportFile = join(dir, 'report.json');
  const child = spawn('npm', ['run', '--silent', 'smoke', '--', ...args, '--json', reportFile], {
    cwd: PROJECT_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  let closed = false;
  child.once('close', () => (closed = true));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const finished = (async () => {
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    // npm exits as its script did; when that was by a signal, npm sends itself the same one.
    const status = code ?? 128 + (signal === null ? 0 : constants.signals[signal]);
    let report: Report | undefined;
    try {
      report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
    } catch {
      report = undefined;
    }
    rmSync(dir, { recursive: true, force: true });
    return { status, stdout, stderr, report };
  })();
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    interrupt: () => {
      if (child.pid !== undefined) killGroup(child.pid, 'SIGINT');
    },
    running: () => !closed,
    finished,
  };
}

/** `npm run smoke -- <args>` to its end. */
export function runSmokeCommand(...args: string[]): Promise<SmokeResult> {
  return startSmoke(args).finished;
}

/** The lines of a run's output, without the empty one after the last newline. */
export function linesOf(output: string): string[] {
  return output.split('\n').filter((line) => line !== '');
}

/**
 * `npm run smoke -- <url>` on a stage it must leave as it found it: every check passes, in the
 * order smoke/checks.ts lists them, nothing on stderr, exit 0, no record of the run left, and
 * `list` (GET /todos) answering after the run what it answered before.
 */
export async function expectPassingRunThatLeavesTheList(url: string, list: () => Promise<unknown>): Promise<void> {
  const before = await list();
  const result = await runSmokeCommand(url);
  expect(result.stderr).toBe('');
  expect(linesOf(result.stdout).filter((line) => /^(pass|FAIL) /.test(line))).toEqual(
    CHECKS.map((check) => expect.stringContaining(`pass  ${check.name} (`)),
  );
  expect(result.status).toBe(0);
  expect(result.report?.records.left).toEqual([]);
  expect(await list()).toEqual(before);
}

/**
 * `npm run smoke -- <url>` interrupted with Ctrl-C while its third POST is held by a proxy: it
 * gives that POST up at once, deletes the two records it made, names the one that may still come
 * in one line, and exits 130 within `exitsWithin` ms. Then the held POST is released, and its
 * record, made within `recordWithin` ms, is the one the run named (`titled`). Returns the proxy (for the test to close) and that
 * record, and what the run reported.
 */
export async function expectInterruptedWithAPostInFlight(
  url: string,
  list: () => Promise<unknown>,
  { exitsWithin, recordWithin }: { exitsWithin: number; recordWithin: number },
): Promise<{ proxy: StageProxy; late: { id: number; title: string }; report: Report | undefined }> {
  const before = (await list()) as unknown[];
  let posts = 0;
  const proxy = await startStageProxy(url, { hold: (method) => method === 'POST' && ++posts === 3 });
  const run = startSmoke([proxy.url]);
  await proxy.holding;
  run.interrupt();
  await eventually(() => !run.running(), { within: exitsWithin, what: 'npm run smoke ending at Ctrl-C' });
  const result = await run.finished;
  expect(result.status).toBe(130);
  const titled = result.report?.records.titled ?? '';
  expect(linesOf(result.stderr)).toEqual([
    'Interrupted: deleting the records this run created, then stopping',
    `Cleanup: 1 POST got no answer and may still make a record, titled "${titled}…"`,
  ]);
  expect(result.stdout).toMatch(
    /\nInterrupted: \d+ of \d+ checks ran\nCleanup: deleted the 2 records this run created\n/,
  );
  expect(result.report).toMatchObject({
    result: 'interrupted',
    records: { created: 2, deleted: 2, left: [], unanswered: 1 },
  });
  expect(await list()).toEqual(before);
  // The POST given up reaches the stage after all: its record is the one the run named.
  proxy.release();
  const late = await eventually(
    async () => {
      const now = (await list()) as { id: number; title: string }[];
      return now.length > before.length ? now.at(-1) : undefined;
    },
    { within: recordWithin, what: 'the POST given up making its record' },
  );
  expect(late.title.startsWith(titled)).toBe(true);
  return { proxy, late, report: result.report };
}
