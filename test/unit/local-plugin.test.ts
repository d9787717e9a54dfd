import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { PROJECT_ROOT, freePort } from '../../harness/project';
import { LEVELS } from '../../lib/log';
import invokeEvent from '../../serverless/plugins/local-workflow/invoke-event.cjs';
import ports from '../../serverless/plugins/local-workflow/ports.cjs';
import banner from '../../serverless/plugins/local-workflow/startup-banner.cjs';
import workFolders from '../../serverless/plugins/local-workflow/work-folders.cjs';
import stageParams from '../../serverless/plugins/stage-params.cjs';

/**
 * The local workflow plugin (serverless/plugins/local-workflow.cjs) checks LOG_LEVEL and
 * `--param=store` before a command goes any further; the values it allows are the ones the service
 * and serverless.yml know.
 */
describe('the local workflow plugin', () => {
  it('allows the log levels lib/log.ts knows', () => {
    expect(stageParams.LOG_LEVELS).toEqual([...LEVELS]);
  });

  it('allows the stores serverless.yml knows', () => {
    // CloudFormation's own tags (!GetAtt) are not YAML's; what they hold does not matter here.
    const config = parse(readFileSync(join(PROJECT_ROOT, 'serverless.yml'), 'utf8'), { logLevel: 'error' }) as {
      custom: { stores: Record<string, unknown> };
    };
    expect(stageParams.STORES).toEqual(Object.keys(config.custom.stores));
  });
});

describe('its ports (local-workflow/ports.cjs)', () => {
  it('refuses a LAMBDA_PORT equal to PORT, or to PORT’s default, naming another', async () => {
    expect(await ports.portProblems({ PORT: '5000', LAMBDA_PORT: '5000' })).toEqual([
      'Port 5000 is both PORT and LAMBDA_PORT, but the API and the Lambda invoke endpoint need one each: choose another, e.g. LAMBDA_PORT=5001',
    ]);
    expect(await ports.portProblems({ LAMBDA_PORT: '3000' })).toEqual([
      "Port 3000 is both PORT's default and LAMBDA_PORT, but the API and the Lambda invoke endpoint need one each: choose another, e.g. LAMBDA_PORT=3001",
    ]);
  });

  it('refuses a port in use, and takes free ones', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, 'localhost', resolve));
    const { port } = busy.address() as AddressInfo;
    try {
      expect(await ports.portProblems({ PORT: String(await freePort()), LAMBDA_PORT: String(port) })).toEqual([
        `Port ${port} (LAMBDA_PORT) is in use, so the Lambda invoke endpoint cannot listen there: stop what runs on it, or choose another, e.g. LAMBDA_PORT=${port + 1}`,
      ]);
    } finally {
      busy.close();
    }
    expect(await ports.portProblems({ PORT: String(await freePort()), LAMBDA_PORT: String(await freePort()) })).toEqual(
      [],
    );
  });
});

describe('the event `invoke local` takes (local-workflow/invoke-event.cjs)', () => {
  const samples = 'events/ has createTodo.json, deleteTodo.json, getTodo.json, listTodos.json, updateTodo.json';

  it('is a sample event, or one like it', () => {
    expect(invokeEvent.invokeEventProblems(PROJECT_ROOT, { function: 'getTodo', path: 'events/getTodo.json' })).toEqual(
      [],
    );
  });

  it.each([
    [{}, `invoke local needs an API Gateway event: start from its sample, --path events/getTodo.json (${samples})`],
    [
      { data: '{' },
      expect.stringMatching(
        /^invoke local: --data is not a JSON event \(.+\): start from its sample, --path events\/getTodo\.json/,
      ),
    ],
    [
      { path: 'package.json' },
      `invoke local: package.json is not an API Gateway HTTP API event (version "2.0", requestContext.http.method and .path): start from its sample, --path events/getTodo.json (${samples})`,
    ],
  ])('is not %j, which gets one line naming the function’s sample', (options, line) => {
    expect(invokeEvent.invokeEventProblems(PROJECT_ROOT, { function: 'getTodo', ...options })).toEqual([line]);
  });
});

describe('what `npm start` prints about its routes (local-workflow/startup-banner.cjs)', () => {
  it('lists each HTTP API route at the server’s address, as serverless.yml writes it or as an object', () => {
    const routes = banner.httpApiRoutes([
      [{ httpApi: 'GET /todos' }],
      [{ httpApi: { method: 'delete', path: '/todos/{id}' } }, {}],
    ]);
    expect(banner.routeLines(4000, routes)).toEqual([
      'Routes:',
      '   GET    http://localhost:4000/todos',
      '   DELETE http://localhost:4000/todos/{id}',
    ]);
  });
});

describe('the temporary directory while a command packages (local-workflow/work-folders.cjs)', () => {
  // What os.tmpdir() reads. (Under jest, os.tmpdir() itself reads the real process's environment,
  // not the test's copy: test/system/package.test.ts shows the effect on a real package.)
  const VARIABLES = ['TMPDIR', 'TMP', 'TEMP'] as const;

  it('is the folder given, until it is put back as it was, unset variables unset again', () => {
    const saved = VARIABLES.map((name) => process.env[name]);
    const parent = mkdtempSync(join(tmpdir(), 'todo-unit-'));
    const folder = join(parent, 'zip-staging');
    process.env.TMPDIR = '/somewhere';
    delete process.env.TMP;
    try {
      const restore = workFolders.useTempFolder(folder);
      expect(VARIABLES.map((name) => process.env[name])).toEqual([folder, folder, folder]);
      expect(existsSync(folder)).toBe(true);
      restore();
      expect(process.env.TMPDIR).toBe('/somewhere');
      expect('TMP' in process.env).toBe(false);
    } finally {
      VARIABLES.forEach((name, i) => {
        const value = saved[i];
        if (value === undefined) Reflect.deleteProperty(process.env, name);
        else process.env[name] = value;
      });
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
