import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { stopGroup } from '../../harness/offline';
import { PROJECT_ROOT, freePort } from '../../harness/project';
import { sleep } from '../../harness/wait';
import { median, round, type Row } from '../lib';

const STARTS = 5;

/** Milliseconds from spawning the command to the first 200 from GET /todos. */
async function timeToFirstAnswer(command: string, args: string[]): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: PROJECT_ROOT,
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'silent' },
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}`);
      if (performance.now() - started > 60_000) throw new Error(`${command} did not answer within 60 s`);
      try {
        const response = await fetch(`http://localhost:${port}/todos`);
        if (response.status === 200) return performance.now() - started;
      } catch {
        // Not listening yet.
      }
      await sleep(5);
    }
  } finally {
    await stopGroup(child);
  }
}

/** Startup to the first answer, median of 5: through `npm start`, and serverless alone. */
export async function startup(): Promise<Row[]> {
  const rows: Row[] = [];
  const commands = [
    { name: 'npm start → first GET /todos', command: 'npm', args: ['run', '--silent', 'start'], budget: true },
    {
      name: 'serverless offline (without npm) → first GET /todos',
      command: process.execPath,
      args: [join(PROJECT_ROOT, 'node_modules/serverless/bin/serverless.js'), 'offline'],
      budget: false,
    },
  ];
  for (const { name, command, args, budget } of commands) {
    const times: number[] = [];
    for (let i = 0; i < STARTS; i++) times.push(await timeToFirstAnswer(command, args));
    const ms = median(times);
    rows.push({
      section: 'startup',
      name,
      value: round(ms, 0),
      unit: 'ms',
      note: `runs: ${times.map((t) => Math.round(t)).join(', ')}`,
      ...(budget ? { budget: '≤ 1500 ms', met: ms <= 1500 } : {}),
    });
  }
  return rows;
}
