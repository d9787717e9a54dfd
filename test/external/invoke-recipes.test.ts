import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCommand } from '../../harness/cli';
import { START_WITHIN_MS, startOffline, type OfflineServer } from '../../harness/offline';
import { PROJECT_ROOT, freePort } from '../../harness/project';
import { createTodo } from '../../lib/todos';
import { seed } from '../support/expectations';

/**
 * The README's recipe for Lambda's Invoke API: the lines of the block after its marker, and the
 * statuses the paragraph after the block says its commands answer, in their order.
 */
function recipe(): { lines: string[]; statuses: number[] } {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const marker = readme.indexOf('<!-- recipe: invoke');
  const block = /```sh\n([\s\S]*?)```\n\n(.*?)\n\n/s.exec(readme.slice(marker));
  if (marker < 0 || block === null) throw new Error('README.md has no invoke recipe');
  const [, commands = '', after = ''] = block;
  return {
    lines: commands.trim().split('\n'),
    statuses: [...after.matchAll(/"statusCode":(\d+)/g)].map(([, status]) => Number(status)),
  };
}

/** The port the README uses; the test runs the recipe on a free one instead. */
const README_PORT = '3002';

/**
 * The README's recipe for calling a function through `npm start`'s Lambda endpoint, run as
 * written, with curl and with the AWS CLI (`apt-get install awscli`; .ci/run installs it).
 */
describe('the README’s invoke recipe', () => {
  const {
    lines: [start = '', curl = '', awsCli = ''],
    statuses: [curlStatus, awsCliStatus],
  } = recipe();
  let server: OfflineServer;
  let port: string;
  let cwd: string;
  beforeAll(async () => {
    port = String(await freePort());
    expect(start).toBe(`LAMBDA_PORT=${README_PORT} npm start`);
    server = await startOffline({ script: 'start', env: { LAMBDA_PORT: port } });
    // The recipe reads events/ and writes answer.json where it runs: a folder of its own.
    cwd = mkdtempSync(join(tmpdir(), 'todo-recipe-'));
    symlinkSync(join(PROJECT_ROOT, 'events'), join(cwd, 'events'));
  }, START_WITHIN_MS);
  afterAll(async () => {
    await server.stop();
    rmSync(cwd, { recursive: true, force: true });
  });

  const run = (line: string) => runCommand('sh', ['-c', line.replaceAll(README_PORT, port)], { cwd });

  it('with curl, answers the function’s result, with the status the README says', async () => {
    expect(curl).toMatch(/^curl /);
    const result = await run(curl);
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout) as { statusCode: number; body: string };
    expect({ statusCode: answer.statusCode, body: JSON.parse(answer.body) as unknown }).toEqual({
      statusCode: 200,
      body: seed(1),
    });
    expect(curlStatus).toBe(answer.statusCode);
  });

  it('with the AWS CLI, writes the function’s result to answer.json, with the status the README says', async () => {
    expect(awsCli).toMatch(/ aws lambda invoke /);
    const result = await run(awsCli);
    expect(result).toMatchObject({ code: 0 });
    const answer = JSON.parse(readFileSync(join(cwd, 'answer.json'), 'utf8')) as { statusCode: number; body: string };
    expect({ statusCode: answer.statusCode, body: JSON.parse(answer.body) as unknown }).toEqual({
      statusCode: 201,
      body: createTodo({ title: 'Buy milk' }, 3),
    });
    expect(awsCliStatus).toBe(answer.statusCode);
  });
});
