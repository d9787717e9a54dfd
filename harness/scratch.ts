import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from './project';

/** What a server needs from the project; node_modules is linked, not copied. */
const PROJECT_FILES = [
  'functions',
  'lib',
  'scripts',
  'serverless',
  'events',
  'serverless.yml',
  'package.json',
  'tsconfig.json',
];

export interface ScratchCopy {
  readonly dir: string;
  remove(): void;
}

/** A throwaway copy of the project (or of another checkout of it: `from`), for tests that edit source files. */
export function scratchCopy(from = PROJECT_ROOT): ScratchCopy {
  const dir = mkdtempSync(join(tmpdir(), 'todo-scratch-'));
  for (const entry of PROJECT_FILES) cpSync(join(from, entry), join(dir, entry), { recursive: true });
  symlinkSync(join(from, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return {
    dir,
    remove: () => {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `use` on a new scratch copy, and removes the copy afterwards, whatever happened. */
export async function withScratchCopy<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const scratch = scratchCopy();
  try {
    return await use(scratch.dir);
  } finally {
    scratch.remove();
  }
}
