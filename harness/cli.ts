import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from './project';

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CommandOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Runs a command to its end and reports how it ended, without throwing on a failure. */
export function runCommand(
  command: string,
  args: string[],
  { cwd = PROJECT_ROOT, env = {} }: CommandOptions = {},
): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: { ...process.env, FORCE_COLOR: '0', ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** `serverless <args>`, the project's own copy (osls), as `npx serverless` runs it. */
export function runServerless(args: string[], options: CommandOptions = {}): Promise<CommandResult> {
  return runCommand(
    process.execPath,
    [join(PROJECT_ROOT, 'node_modules/serverless/bin/serverless.js'), ...args],
    options,
  );
}
