import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCommand, runServerless } from '../../harness/cli';
import { START_WITHIN_MS, startOffline, type OfflineServer } from '../../harness/offline';
import { freePort } from '../../harness/project';
import { withScratchCopy } from '../../harness/scratch';
import ports from '../../serverless/plugins/local-workflow/ports.cjs';
import { ApiClient } from '../support/client';
import { USER_PORTS, holdPorts, suggestedPort, type HeldPorts } from '../support/ports';
import { noCredentials } from '../support/no-credentials';

/** One command of the framework: loading it takes about 1.5 s idle; this allows for a busy machine. */
const COMMAND_WITHIN_MS = 60_000;

/**
 * Every test here runs beside a user's `npm start` on PORT's default, 3000, and a DynamoDB Local
 * on 8000, as `npm test` must (issue 40: the busy-LAMBDA_PORT test left PORT to its default, and
 * met "Port 3000 (PORT) is in use" beside the user's server). The ports are held for the whole
 * file, so a test that reads a default port fails here, whoever else runs on the machine.
 */
let usersServers: HeldPorts;
beforeAll(async () => {
  usersServers = await holdPorts(USER_PORTS);
});
afterAll(() => usersServers.release());

describe('beside a user’s servers on ports 3000 and 8000', () => {
  it('finds both ports in use for every test of this file', async () => {
    const problems = await ports.portProblems({ PORT: '3000', LAMBDA_PORT: '8000' });
    expect(problems).toEqual([
      expect.stringMatching(/^Port 3000 \(PORT\) is in use, /),
      expect.stringMatching(/^Port 8000 \(LAMBDA_PORT\) is in use, /),
    ]);
  });
});

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

/**
 * The two lines the framework prints on stderr under every error it reports: its version, and
 * where its docs are.
 */
const FRAMEWORK_FOOTER = [/^Environment: .* osls \d/, /^Docs: /];

/**
 * What a mistaken command printed, and how it ended. The plugin stops a command as the framework
 * expects a user's error to be raised (a ServerlessError), and the framework prints it as `Error:`
 * and the message on stdout, with its footer on stderr: `message` is what follows `Error:`, and
 * `other` is whatever else was printed, which should be nothing.
 */
async function mistake(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) {
  const result = await runServerless(args, { env, ...(cwd === undefined ? {} : { cwd }) });
  const lines = (text: string) => text.split('\n').filter((line) => line !== '');
  const [title, ...message] = lines(result.stdout);
  const other = lines(result.stderr).filter((line) => !FRAMEWORK_FOOTER.some((footer) => footer.test(line)));
  return { code: result.code, title, message, other };
}

/** A command stopped, with one line saying why, and nothing else printed. */
function stoppedWith(line: unknown) {
  return { code: 1, title: 'Error:', message: [line], other: [] };
}

/** `serverless offline` stopped by a port: its one line alone on stderr, without the framework's `Error:` or footer. */
function stoppedByPort(line: unknown) {
  return { code: 1, title: undefined, message: [], other: [line] };
}

/**
 * `npm start`, `npm run dev`, `npm run package` and `npm run deploy` answer their command line as the
 * project's scripts do (serverless/plugins/local-workflow/command-line.cjs): `--help` prints the project's
 * usage and does nothing else, even beside the user's server on 3000, where a start would stop; an option
 * the command does not take is one line naming the closest it takes, and exit 2, with nothing built. Each
 * runs in a scratch copy, as a user runs it: through npm.
 */
describe('the command lines of npm start, dev, package and deploy', () => {
  /** What every command leaves when it has built or packaged something. */
  const built = (dir: string) => ({
    esbuild: existsSync(join(dir, '.esbuild')),
    serverless: existsSync(join(dir, '.serverless')),
  });

  it.each([
    ['start', '--help', /^Usage: npm start \[-- <option> \.\.\.\]\n\nServes the API with serverless offline/],
    ['start', '-h', /^Usage: npm start \[-- <option> \.\.\.\]\n\nServes the API with serverless offline/],
    ['dev', '--help', /^Usage: npm run dev \[-- <option> \.\.\.\]\n\nServes the API as npm start does, and .* reload/s],
  ])(
    '`npm run %s -- %s` prints the project’s usage, with PORT, LAMBDA_PORT and every option, and starts nothing',
    async (script, flag, usage) => {
      await withScratchCopy(async (dir) => {
        // --silent: npm's own lines (the script it runs) stay out of the answer.
        const result = await runCommand('npm', ['run', '--silent', script, '--', flag], { cwd: dir });
        expect(result).toEqual({ code: 0, stdout: expect.stringMatching(usage), stderr: '' });
        for (const name of [
          'PORT=<port>',
          'LAMBDA_PORT=<port>',
          'LOG_LEVEL=<level>',
          '--param=store=',
          '--param=sourcemaps=',
          '--param=mode=',
          // serverless-offline's options, and the framework's.
          '--httpPort',
          '--noTimeout, -t',
          '--stage, -s',
        ]) {
          expect(result.stdout).toContain(name);
        }
        // serverless-offline's default for the invoke endpoint, not this project's.
        expect(result.stdout).not.toContain('3002');
        expect(built(dir)).toEqual({ esbuild: false, serverless: false });
      });
    },
    COMMAND_WITHIN_MS,
  );

  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'todo-home-'));
  });
  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
  });

  it.each([
    [
      'start',
      ['--prot', '4000'],
      'Unknown option "--prot" for npm start: did you mean "PORT=4000 npm start"? (npm start -- --help)',
    ],
    [
      'dev',
      ['--prot', '4000'],
      'Unknown option "--prot" for npm run dev: did you mean "PORT=4000 npm run dev"? (npm run dev -- --help)',
    ],
    [
      'start',
      ['--lambda-port', '4001'],
      'Unknown option "--lambda-port" for npm start: did you mean "LAMBDA_PORT=4001 npm start"? (npm start -- --help)',
    ],
    [
      'start',
      ['--htpPort', '4000'],
      'Unknown option "--htpPort" for npm start: did you mean "--httpPort"? (npm start -- --help)',
    ],
    [
      'package',
      ['--stgae', 'prod'],
      'Unknown option "--stgae" for npm run package: did you mean "--stage"? (npm run package -- --help)',
    ],
    [
      'deploy',
      ['--stgae', 'prod'],
      'Unknown option "--stgae" for npm run deploy: did you mean "--stage"? (npm run deploy -- --help)',
    ],
    [
      'deploy',
      ['--stage', 'prod', '--regoin', 'eu-west-1'],
      'Unknown option "--regoin" for npm run deploy: did you mean "--region"? (npm run deploy -- --help)',
    ],
  ])(
    '`npm run %s -- %j` stops with one line naming the closest option, and exit 2, with nothing built or deployed',
    async (script, args, line) => {
      await withScratchCopy(async (dir) => {
        const result = await runCommand('npm', ['run', '--silent', script, '--', ...args], {
          cwd: dir,
          env: noCredentials(home),
        });
        expect(result).toEqual({ code: 2, stdout: '', stderr: `${line}\n` });
        expect(built(dir)).toEqual({ esbuild: false, serverless: false });
      });
    },
    COMMAND_WITHIN_MS,
  );
});

describe('configuration that is wrong', () => {
  it.each([
    [['--param=store=mysql'], {}, '--param=store must be memory or dynamodb, not "mysql"'],
    [['--param=sourcemaps=yes'], {}, '--param=sourcemaps must be on or off, not "yes"'],
    [['--param=tracing=yes'], {}, '--param=tracing must be on or off, not "yes"'],
    [['--param=mode=foo'], {}, '--param=mode must be start or dev, not "foo"'],
    [['--param=throttleRate=abc'], {}, '--param=throttleRate must be a number from 1 to 10000, not "abc"'],
    [['--param=stroe=memory'], {}, expect.stringMatching(/^Unknown stage parameter "stroe" .*did you mean "store"\?/)],
    [[], { LOG_LEVEL: 'verbose' }, 'LOG_LEVEL must be one of debug, info, warn, error, silent, not "verbose"'],
  ])(
    'stops `serverless package %j` with one line saying what is allowed, before building anything',
    async (args, env, message) => {
      const result = await mistake(['package', '--package', '/nonexistent/never-written', ...args], env);
      expect(result).toEqual(stoppedWith(message));
    },
    COMMAND_WITHIN_MS,
  );
});

describe('a local server that cannot start', () => {
  it.each([
    [{ PORT: 'abc' }, 'PORT must be a whole number from 1 to 65535, not "abc"'],
    [{ LAMBDA_PORT: 'abc' }, 'LAMBDA_PORT must be a whole number from 1 to 65535, not "abc"'],
  ])(
    'stops `serverless offline` with %j in one line, leaving nothing behind',
    async (env, message) => {
      await withScratchCopy(async (dir) => {
        expect(await mistake(['offline'], env, dir)).toEqual(stoppedWith(message));
        expect(existsSync(join(dir, '.esbuild'))).toBe(false);
      });
    },
    COMMAND_WITHIN_MS,
  );

  it.each(['PORT', 'LAMBDA_PORT'])(
    'stops `serverless offline` on a busy %s in one line, before printing any route, leaving nothing behind',
    async (variable) => {
      const busy = createServer();
      await new Promise<void>((resolve) => busy.listen(0, 'localhost', resolve));
      const port = (busy.address() as AddressInfo).port;
      // The other port is a free one: left to its default, PORT would be 3000, the user's server's,
      // and its own line would come before the one this test is about.
      const otherPorts = variable === 'PORT' ? {} : { PORT: String(await freePort()) };
      try {
        await withScratchCopy(async (dir) => {
          const result = await mistake(['offline'], { ...otherPorts, [variable]: String(port) }, dir);
          expect(result).toEqual(
            stoppedByPort(
              expect.stringMatching(new RegExp(`^Port ${port} \\(${variable}\\) is in use, .* ${variable}=\\d+$`)),
            ),
          );
          expect(existsSync(join(dir, '.esbuild'))).toBe(false);
        });
      } finally {
        busy.close();
      }
    },
    COMMAND_WITHIN_MS,
  );
});

describe('a LAMBDA_PORT that is PORT', () => {
  it.each([
    ['PORT', async () => String(await freePort()), 'PORT'],
    ['PORT’s default, 3000', () => Promise.resolve(''), "PORT's default"],
  ])(
    'stops `serverless offline` when LAMBDA_PORT is %s, in one line, before anything starts',
    async (_kind, portOf, setting) => {
      const port = await portOf();
      const lambdaPort = port === '' ? '3000' : port;
      await withScratchCopy(async (dir) => {
        const result = await mistake(['offline'], { PORT: port, LAMBDA_PORT: lambdaPort }, dir);
        const suggested = suggestedPort(JSON.stringify(result), 'LAMBDA_PORT', Number(lambdaPort));
        expect(result).toEqual(
          stoppedByPort(
            `Port ${lambdaPort} is both ${setting} and LAMBDA_PORT, but the API and the Lambda invoke endpoint ` +
              `need one each: choose another, e.g. LAMBDA_PORT=${suggested}`,
          ),
        );
        expect(existsSync(join(dir, '.esbuild'))).toBe(false);
      });
    },
    COMMAND_WITHIN_MS,
  );
});

describe('`serverless invoke local` without an API Gateway event', () => {
  const samples = 'events/ has createTodo.json, deleteTodo.json, getTodo.json, listTodos.json, updateTodo.json';
  it.each([
    [[], `invoke local needs an API Gateway event: start from its sample, --path events/getTodo.json (${samples})`],
    [
      ['--data', '{"hello":"world"}'],
      `invoke local: --data is not an API Gateway HTTP API event (version "2.0", requestContext.http.method and .path): start from its sample, --path events/getTodo.json (${samples})`,
    ],
    [
      ['--path', 'package.json'],
      `invoke local: package.json is not an API Gateway HTTP API event (version "2.0", requestContext.http.method and .path): start from its sample, --path events/getTodo.json (${samples})`,
    ],
  ])(
    'stops with one line naming the sample events: %j',
    async (args, message) => {
      expect(await mistake(['invoke', 'local', '-f', 'getTodo', ...args])).toEqual(stoppedWith(message));
    },
    COMMAND_WITHIN_MS,
  );
});
