import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCommand } from '../../harness/cli';
import { noCredentials } from '../support/no-credentials';

/**
 * The commands that read a deployed stage, `npm run logs` and `npm run info` (scripts/aws-command.ts,
 * docs/operations.md): what they check before they ask AWS, each mistake stopping them with one line.
 */

/** npm, tsx and the SDK's credential chain: about 2 s idle. */
const COMMAND_WITHIN_MS = 30_000;

describe('`npm run logs` and `npm run info` without AWS credentials', () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'todo-home-'));
  });
  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
  });

  it.each([
    [['logs', '--', 'listTodos'], /^No AWS credentials: set AWS_PROFILE .*AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/],
    [['info'], /^No AWS credentials: set AWS_PROFILE .*AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/],
    [['info', '--', '--aws-profile', 'work'], /^No AWS credentials for profile "work": add it to ~\/\.aws\/config/],
  ])(
    '`npm run %j` stops with one line saying what is missing',
    async (args, line) => {
      // --silent: npm's own notices (a warning about the user's npmrc, say) stay out of the answer.
      const result = await runCommand('npm', ['run', '--silent', ...args], { env: noCredentials(home) });
      expect(result.code).not.toBe(0);
      expect(result.stderr.split('\n')).toEqual([expect.stringMatching(line), '']);
      expect(result.stdout).toBe('');
    },
    COMMAND_WITHIN_MS,
  );

  it(
    '`npm run logs` without a function says how to call it',
    async () => {
      const result = await runCommand('npm', ['run', '--silent', 'logs'], { env: noCredentials(home) });
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        'Usage: npm run logs -- <function> [--stage <stage>] [--region <region>] [--aws-profile <profile>]\n',
      );
    },
    COMMAND_WITHIN_MS,
  );
  it.each([
    ['logs', '--help', /^Usage: npm run logs -- <function> \[--stage <stage>\]/, ['--startTime', '--filter']],
    ['logs', '-h', /^Usage: npm run logs -- <function> /, ['<function>', '--stage', '--region', '--aws-profile']],
    ['info', '--help', /^Usage: npm run info \[-- --stage <stage>\]/, ['--stage', '--region', '--aws-profile']],
  ])(
    '`npm run %s -- %s` prints its usage and what each option does, and exits 0, before it looks for credentials',
    async (command, flag, usage, mentioned) => {
      const result = await runCommand('npm', ['run', '--silent', command, '--', flag], { env: noCredentials(home) });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(usage);
      for (const option of mentioned) expect(result.stdout).toContain(`  ${option}`);
    },
    COMMAND_WITHIN_MS,
  );

  it.each([
    [
      ['info', '--', '--stag', 'prod'],
      'Unknown option "--stag" for npm run info: did you mean "--stage"? Options: --stage, --region, --aws-profile (npm run info -- --help)',
    ],
    [
      ['logs', '--', 'createTodo', '--filtr', '{ $.status >= 500 }'],
      'Unknown option "--filtr" for npm run logs: did you mean "--filter"? Options: --stage, --region, --aws-profile, --startTime, --filter (npm run logs -- --help)',
    ],
    [
      ['logs', '--', 'createTodos'],
      'No function "createTodos" in serverless.yml: did you mean "createTodo"? Functions: listTodos, getTodo, createTodo, updateTodo, deleteTodo',
    ],
    [
      ['logs', '--', 'createTodo', '--stage', 'pr_od'],
      '--stage must be letters, digits and hyphens, as the framework\'s stage names are, not "pr_od"',
    ],
    [
      ['info', '--', '--stage', 'pr od'],
      '--stage must be letters, digits and hyphens, as the framework\'s stage names are, not "pr od"',
    ],
  ])(
    '`npm run %j` stops with one line on a name that is wrong, before it looks for credentials',
    async (args, line) => {
      const result = await runCommand('npm', ['run', '--silent', ...args], { env: noCredentials(home) });
      expect(result).toEqual({ code: 2, stdout: '', stderr: `${line}\n` });
    },
    COMMAND_WITHIN_MS,
  );
});
