import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
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
import { suggestedPort } from '../support/ports';

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
      const apiPort = await freePort();
      const problems = await ports.portProblems({ PORT: String(apiPort), LAMBDA_PORT: String(port) });
      const suggested = suggestedPort(problems[0] ?? '', 'LAMBDA_PORT', port, apiPort);
      expect(problems).toEqual([
        `Port ${port} (LAMBDA_PORT) is in use, so the Lambda invoke endpoint cannot listen there: stop what runs on it, or choose another, e.g. LAMBDA_PORT=${suggested}`,
      ]);
    } finally {
      busy.close();
    }
    expect(await ports.portProblems({ PORT: String(await freePort()), LAMBDA_PORT: String(await freePort()) })).toEqual(
      [],
    );
  });

  /** Listens on `count` consecutive ports of loopback, the first one the OS's choice. */
  async function busyRun(count: number): Promise<{ first: number; close(): void }> {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const first = await freePort();
      const servers: Server[] = [];
      try {
        for (let port = first; port < first + count; port += 1) {
          const server = createServer();
          await new Promise<void>((resolve, reject) => {
            server.once('error', reject);
            server.listen(port, 'localhost', resolve);
          });
          servers.push(server);
        }
        return {
          first,
          close: () => {
            servers.forEach((server) => server.close());
          },
        };
      } catch {
        servers.forEach((server) => server.close());
      }
    }
    throw new Error(`no ${count} consecutive free ports in 50 tries`);
  }

  /** Whether `port` can be listened on now, as the server listens. */
  async function canListen(port: number): Promise<boolean> {
    const server = createServer();
    return new Promise((resolve) => {
      server.once('error', () => {
        resolve(false);
      });
      server.listen({ port, host: 'localhost', exclusive: true }, () =>
        server.close(() => {
          resolve(true);
        }),
      );
    });
  }

  it('names, for PORT and LAMBDA_PORT both in use, two ports that are free and neither of them', async () => {
    // PORT=p+1 and LAMBDA_PORT=p busy, p+2 too: the next port after each is taken or in use.
    const busy = await busyRun(3);
    const [p, q] = [busy.first, busy.first + 1];
    let problems: string[];
    try {
      problems = await ports.portProblems({ PORT: String(q), LAMBDA_PORT: String(p) });
    } finally {
      busy.close();
    }
    expect(problems).toEqual([
      expect.stringMatching(new RegExp(`^Port ${q} \\(PORT\\) is in use, .*, e\\.g\\. PORT=\\d+$`)),
      expect.stringMatching(new RegExp(`^Port ${p} \\(LAMBDA_PORT\\) is in use, .*, e\\.g\\. LAMBDA_PORT=\\d+$`)),
    ]);
    const named = problems.map((problem) => Number(/=(\d+)$/.exec(problem)?.[1]));
    expect(new Set([...named, p, q, p + 2]).size).toBe(5);
    // Free while the three were busy, and still, now that they are closed.
    for (const port of named) expect(await canListen(port)).toBe(true);
  });

  it('names, for a LAMBDA_PORT equal to PORT, a port that is free', async () => {
    const busy = await busyRun(2);
    const port = busy.first;
    try {
      const [problem = ''] = await ports.portProblems({ PORT: String(port), LAMBDA_PORT: String(port) });
      const named = Number(/LAMBDA_PORT=(\d+)$/.exec(problem)?.[1]);
      expect([port, port + 1]).not.toContain(named);
      expect(await canListen(named)).toBe(true);
    } finally {
      busy.close();
    }
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
