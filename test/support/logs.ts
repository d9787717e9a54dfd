import fs from 'node:fs';
import { jest } from '@jest/globals';
import { readLogLevel } from '../../lib/log';

/** What a test reads of the service's log lines (lib/log.ts writes them to fd 1). */

/** Every line written to fd 1 while `run` runs, parsed as JSON (each must be). */
export async function logLines(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const written: string[] = [];
  const spy = jest.spyOn(fs, 'writeSync').mockImplementation((fd: number, data: unknown) => {
    if (fd !== 1 || !(data instanceof Uint8Array)) throw new Error(`unexpected write to ${fd}`);
    written.push(Buffer.from(data).toString('utf8'));
    return data.length;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return written
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Sets LOG_LEVEL (or unsets it) and has lib/log.ts read it, as a container starting with it would. */
function setLogLevel(level: string | undefined): void {
  if (level === undefined) delete process.env.LOG_LEVEL;
  else process.env.LOG_LEVEL = level;
  readLogLevel();
}

/** Runs `body` with LOG_LEVEL set as a container would have it, and puts the old value back. */
export async function withLogLevel<T>(level: string | undefined, body: () => Promise<T>): Promise<T> {
  const saved = process.env.LOG_LEVEL;
  setLogLevel(level);
  try {
    return await body();
  } finally {
    setLogLevel(saved);
  }
}
