import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runServerless } from '../../harness/cli';
import { START_WITHIN_MS, startOffline, type OfflineServer } from '../../harness/offline';
import { freePort } from '../../harness/project';
import { ApiClient } from '../support/client';

/** One command of the framework: loading it takes about 1.5 s idle; this allows for a busy machine. */
const COMMAND_WITHIN_MS = 60_000;

describe('npm run debug', () => {
  let inspectorPort: number;
  let server: OfflineServer;
  beforeAll(async () => {
    inspectorPort = await freePort();
    server = await startOffline({ script: 'debug', env: { INSPECT_PORT: String(inspectorPort) } });
  }, START_WITHIN_MS);
  afterAll(() => server.stop());

  it('serves the API with Node’s inspector open for a debugger to attach', async () => {
    expect((await new ApiClient(server.url).get('/todos/1')).status).toBe(200);
    const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as {
      type: string;
      webSocketDebuggerUrl: string;
    }[];
    expect(targets).toEqual([
      expect.objectContaining({ type: 'node', webSocketDebuggerUrl: expect.stringMatching(/^ws:\/\/127\.0\.0\.1:/) }),
    ]);
    expect(server.output()).toContain(`Debugger listening on ws://127.0.0.1:${inspectorPort}/`);
  });
});

describe('configuration that is wrong', () => {
  it.each([
    [['--param=store=mysql'], {}, '--param=store must be memory or dynamodb, not "mysql"'],
    [['--param=sourcemaps=yes'], {}, '--param=sourcemaps must be on or off, not "yes"'],
    [[], { LOG_LEVEL: 'verbose' }, 'LOG_LEVEL must be one of debug, info, warn, error, silent, not "verbose"'],
  ])(
    'stops `serverless %j` with one line naming the allowed values',
    async (args, env, message) => {
      const result = await runServerless(['package', '--package', '/nonexistent/never-written', ...args], { env });
      expect(result.code).not.toBe(0);
      expect(`${result.stdout}${result.stderr}`.split('\n')).toContainEqual(expect.stringContaining(message));
    },
    COMMAND_WITHIN_MS,
  );
});
