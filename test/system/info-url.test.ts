import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCommand } from '../../harness/cli';
import { PROJECT_ROOT } from '../../harness/project';
import { baseUrl } from '../../smoke/cli';

/** npm, tsx, the SDK's credential chain and the framework's output writer: about 3 s idle. */
const COMMAND_WITHIN_MS = 30_000;

const URL_OF_STAGE = 'https://abc123defg.execute-api.eu-west-1.amazonaws.com';

/**
 * `npm run info` ends with the command that checks the stage, its URL as `npm run smoke --` takes
 * it. With no AWS here, the framework is replaced by one that prints, with the framework's own
 * writer (osls' write-service-outputs), what `info --verbose` prints for a deployed stage.
 */
describe('npm run info', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'todo-info-'));
    for (const file of ['package.json', 'scripts/aws-command.ts', 'scripts/command-line.ts']) {
      cpSync(join(PROJECT_ROOT, file), join(dir, file), { recursive: true });
    }
    const modules = join(dir, 'node_modules');
    mkdirSync(modules);
    for (const entry of readdirSync(join(PROJECT_ROOT, 'node_modules'))) {
      if (entry !== 'serverless') symlinkSync(join(PROJECT_ROOT, 'node_modules', entry), join(modules, entry));
    }
    const real = join(PROJECT_ROOT, 'node_modules/serverless');
    mkdirSync(join(modules, 'serverless/bin'), { recursive: true });
    writeFileSync(
      join(modules, 'serverless/bin/serverless.js'),
      `if (process.argv.slice(2).join(' ') !== 'info --verbose') process.exit(3);
require(${JSON.stringify(`${real}/lib/utils/serverless-utils/log-reporters/node`)});
const write = require(${JSON.stringify(`${real}/lib/cli/write-service-outputs`)});
write(new Map([
  ['service', 'todo-api'],
  ['stage', 'prod'],
  ['region', 'eu-west-1'],
  ['stack', 'todo-api-prod'],
  ['endpoints', ['GET - ${URL_OF_STAGE}/todos', 'POST - ${URL_OF_STAGE}/todos']],
  ['functions', ['listTodos: todo-api-prod-listTodos', 'createTodo: todo-api-prod-createTodo']],
  ['\\nStack Outputs', ['HttpApiId: abc123defg', 'HttpApiUrl: ${URL_OF_STAGE}', 'AlarmTopicArn: arn:aws:sns:eu-west-1:123456789012:todo-api-prod-alarms']],
]));
`,
    );
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['0', '1'])(
    'prints what the framework prints, then `npm run smoke -- <the stage’s URL>` (FORCE_COLOR=%s)',
    async (color) => {
      const result = await runCommand('npm', ['run', '--silent', 'info'], {
        cwd: dir,
        env: {
          AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
          AWS_SECRET_ACCESS_KEY: 'example',
          AWS_PROFILE: '',
          FORCE_COLOR: color,
        },
      });
      expect(result.code).toBe(0);
      // Coloured as the framework colours it, or not: the URL is found either way.
      expect(result.stdout.includes('\u001b[')).toBe(color === '1');
      expect(result.stdout).toContain(`HttpApiUrl: ${URL_OF_STAGE}\n`);
      expect(result.stdout.endsWith(`\n\nCheck the stage: npm run smoke -- ${URL_OF_STAGE}\n`)).toBe(true);
      const url = /npm run smoke -- (\S+)\n$/.exec(result.stdout)?.[1] ?? '';
      expect(baseUrl(url)).toBe(url);
    },
    COMMAND_WITHIN_MS,
  );
});
