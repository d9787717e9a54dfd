import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCommand, runServerless } from '../../harness/cli';
import { START_WITHIN_MS, startOffline, type OfflineServer } from '../../harness/offline';
import { PROJECT_ROOT } from '../../harness/project';
import { FUNCTION_NAMES, ROUTES, type FunctionName } from '../support/routes';
import { scratchCopy, withScratchCopy, type ScratchCopy } from '../../harness/scratch';
import { ApiClient } from '../support/client';
import { expectCreated, expectJson } from '../support/expectations';
import { newTodo, parseJsonObject, todoPatch } from '../../lib/input';
import { FIRST_NEW_ID, SEED_TODOS, applyPatch, createTodo } from '../../lib/todos';

/** One command of the framework: loading it and bundling take about 2 s idle; this allows for a busy machine. */
const COMMAND_WITHIN_MS = 60_000;

/** The body of events/<name>.json, the sample event of a function, as a JSON object. */
function sampleBody(name: FunctionName) {
  const { body } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'events', `${name}.json`), 'utf8')) as { body?: string };
  return parseJsonObject(body);
}

/** Record 1, which the samples of getTodo and updateTodo name, as a fresh store holds it. */
const [RECORD_1] = SEED_TODOS;
if (RECORD_1 === undefined) throw new Error('no record 1 in SEED_TODOS');

/** What each sample event asks, and what the service answers it on a fresh store, from the domain's rules. */
const ANSWERS: Record<FunctionName, { statusCode: number; body: unknown }> = {
  listTodos: { statusCode: 200, body: SEED_TODOS },
  getTodo: { statusCode: 200, body: RECORD_1 },
  createTodo: { statusCode: 201, body: createTodo(newTodo(sampleBody('createTodo')), FIRST_NEW_ID) },
  updateTodo: { statusCode: 200, body: applyPatch(RECORD_1, todoPatch(sampleBody('updateTodo'))) },
  deleteTodo: { statusCode: 200, body: 'Deleted' },
};

function eventFile(name: FunctionName): string {
  return join('events', `${name}.json`);
}

/** The Lambda answer `serverless invoke local` prints last, after the request's log line. */
function invokeAnswer(stdout: string): { statusCode: number; body: unknown } {
  const answer = JSON.parse(stdout.slice(stdout.lastIndexOf('\n{\n') + 1)) as { statusCode: number; body: string };
  return {
    statusCode: answer.statusCode,
    body: answer.body.startsWith('Deleted') ? answer.body : JSON.parse(answer.body),
  };
}

describe('sample events (events/<function>.json)', () => {
  it.each(FUNCTION_NAMES)('%s.json is an HTTP API (payload 2.0) request for its route', (name) => {
    const event = JSON.parse(readFileSync(join(PROJECT_ROOT, eventFile(name)), 'utf8')) as Record<string, unknown>;
    const { method, withId } = ROUTES[name];
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: `${method} ${withId ? '/todos/{id}' : '/todos'}`,
      requestContext: { http: { method } },
      isBase64Encoded: false,
    });
    expect(event.pathParameters !== undefined).toBe(withId);
  });

  it.each(FUNCTION_NAMES)(
    '`npx serverless invoke local -f %s --path events/….json` answers it',
    async (name) => {
      const result = await runServerless(['invoke', 'local', '-f', name, '--path', eventFile(name)]);
      expect(result.code).toBe(0);
      expect(invokeAnswer(result.stdout)).toEqual(ANSWERS[name]);
    },
    COMMAND_WITHIN_MS,
  );
});

describe('a function name that serverless.yml does not declare', () => {
  const functions = 'Functions: listTodos, getTodo, createTodo, updateTodo, deleteTodo';
  it.each([
    // getTodos is one edit from getTodo, three from listTodos: the closest is the one suggested.
    [['invoke', 'local', '-f', 'getTodos', '--path', eventFile('listTodos')], 'getTodos', 'getTodo'],
    [['invoke', 'local', '-f', 'listTodo'], 'listTodo', 'listTodos'],
    // The AWS invoke stops the same way, before it looks for credentials.
    [['invoke', '-f', 'createTodos', '--path', eventFile('createTodo')], 'createTodos', 'createTodo'],
  ])(
    '`serverless %j` stops with one line naming the closest function',
    async (args, given, closest) => {
      const result = await runServerless(args);
      expect(result.code).toBe(1);
      expect(result.stdout.split('\n').filter((line) => line !== '')).toEqual([
        'Error:',
        `No function "${given}" in serverless.yml: did you mean "${closest}"? ${functions}`,
      ]);
    },
    COMMAND_WITHIN_MS,
  );
});

describe('commands beside a running `npm start`', () => {
  // In a scratch copy: `serverless package` empties the service's .serverless/, and this
  // checkout's is its user's.
  let scratch: ScratchCopy;
  let server: OfflineServer;
  let api: ApiClient;
  beforeAll(async () => {
    scratch = scratchCopy();
    server = await startOffline({ script: 'start', cwd: scratch.dir });
    api = new ApiClient(server.url);
  }, START_WITHIN_MS);
  afterAll(async () => {
    await server.stop();
    scratch.remove();
  });

  async function expectEveryRouteAnswers(): Promise<void> {
    const created = await api.post('/todos', { title: 'beside' });
    const { id } = created.json() as { id: number };
    const record = createTodo({ title: 'beside' }, id);
    expectCreated(created, record);
    expect((await api.get('/todos')).json()).toContainEqual(record);
    expectJson(await api.get(`/todos/${id}`), 200, record);
    expectJson(await api.put(`/todos/${id}`, { completed: true }), 200, applyPatch(record, { completed: true }));
    expect((await api.delete(`/todos/${id}`)).text).toBe('Deleted');
  }

  it(
    '`npm run package` with the same PORT leaves every route answering',
    async () => {
      await expectEveryRouteAnswers();
      const out = mkdtempSync(join(tmpdir(), 'todo-package-'));
      try {
        const packaged = await runCommand('npm', ['run', '--silent', 'package', '--', '--package', out], {
          cwd: scratch.dir,
          env: { PORT: String(server.port) },
        });
        expect(packaged.code).toBe(0);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
      await expectEveryRouteAnswers();
    },
    COMMAND_WITHIN_MS,
  );

  it(
    '`serverless invoke local` with the same PORT leaves every route answering',
    async () => {
      const invoked = await runServerless(['invoke', 'local', '-f', 'getTodo', '--path', eventFile('getTodo')], {
        cwd: scratch.dir,
        env: { PORT: String(server.port) },
      });
      expect(invoked.code).toBe(0);
      await expectEveryRouteAnswers();
    },
    COMMAND_WITHIN_MS,
  );

  it('prints the Lambda invoke endpoint it listens on, which answers the sample events by their full names', async () => {
    const printed = /Lambda invoke endpoint: (http:\/\/localhost:\d+)\/2015-03-31\/functions\/<name>\/invocations/.exec(
      server.output(),
    );
    expect(printed).not.toBeNull();
    const endpoint = printed?.[1] ?? '';
    const event = readFileSync(join(PROJECT_ROOT, eventFile('getTodo')), 'utf8');
    const response = await fetch(`${endpoint}/2015-03-31/functions/todo-api-dev-getTodo/invocations`, {
      method: 'POST',
      body: event,
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { statusCode: number; body: string };
    expect({ statusCode: answer.statusCode, body: JSON.parse(answer.body) as unknown }).toEqual(ANSWERS.getTodo);
  });
});

/** The printed lines of a server's start, up to and with "Server ready". */
function startupLines(output: string): string[] {
  const lines = output.split('\n');
  return lines.slice(0, lines.findIndex((line) => line.includes('Server ready:')) + 1);
}

/**
 * What one printed address answers, asked as its line says: with the method printed before it
 * (GET when none), and, for the Lambda invoke endpoint, once per function named on the line, with
 * that function's sample event.
 */
async function askAsPrinted(line: string, url: string): Promise<{ url: string; answer: string }[]> {
  if (url.includes('<name>')) {
    const names = /one of ([\w-]+(?:, [\w-]+)*)/.exec(line)?.[1]?.split(', ') ?? [];
    expect(names).toHaveLength(FUNCTION_NAMES.length);
    return Promise.all(
      names.map(async (name) => {
        const fn = FUNCTION_NAMES.find((known) => name.endsWith(`-${known}`));
        if (fn === undefined) throw new Error(`${name} is not one of the functions`);
        const response = await fetch(url.replace('<name>', name), {
          method: 'POST',
          body: readFileSync(join(PROJECT_ROOT, eventFile(fn)), 'utf8'),
        });
        const { statusCode } = (await response.json()) as { statusCode: unknown };
        const works = response.status === 200 && statusCode === ANSWERS[fn].statusCode;
        return { url: url.replace('<name>', name), answer: works ? 'the function’s answer' : `${response.status}` };
      }),
    );
  }
  const method = new RegExp(`\\b(GET|POST|PUT|DELETE)[\\s|]*${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).exec(
    line,
  )?.[1];
  const response = await fetch(url, { method: method ?? 'GET' });
  const body = await response.text();
  if (new URL(url).pathname === '/') return [{ url, answer: 'a server' }];
  const routeNotFound = response.status === 404 && body.includes('route not found');
  return [{ url, answer: routeNotFound ? `404 ${body}` : 'a route' }];
}

describe('what `npm start` prints at start', () => {
  let server: OfflineServer;
  beforeAll(async () => {
    server = await startOffline({ script: 'start' });
  }, START_WITHIN_MS);
  afterAll(() => server.stop());

  it('is addresses that each answer as printed: routes at PORT, the functions at LAMBDA_PORT', async () => {
    const asked = [];
    for (const line of startupLines(server.output())) {
      for (const [url] of line.matchAll(/https?:\/\/[^\s,)]+/g)) asked.push(...(await askAsPrinted(line, url)));
    }
    const answers = new Set(asked.map(({ answer }) => answer));
    expect(asked.filter(({ answer }) => !['a server', 'a route', 'the function’s answer'].includes(answer))).toEqual(
      [],
    );
    expect([...answers].sort()).toEqual(['a route', 'a server', 'the function’s answer']);
    // Each route once, at the server's address.
    expect(asked.filter(({ answer }) => answer === 'a route').map(({ url }) => url)).toEqual([
      `${server.url}/todos`,
      `${server.url}/todos/{id}`,
      `${server.url}/todos`,
      `${server.url}/todos/{id}`,
      `${server.url}/todos/{id}`,
    ]);
  });
});

describe('work folders', () => {
  it(
    'are one per process and go with it: none is left after a command, and those of processes gone are removed',
    async () => {
      await withScratchCopy(async (dir) => {
        const root = join(dir, '.esbuild');
        // What a killed server and the older one-folder-per-PORT layout leave behind.
        for (const stale of ['offline-999999999', '3000']) mkdirSync(join(root, stale), { recursive: true });
        const invoked = await runServerless(['invoke', 'local', '-f', 'listTodos', '--path', eventFile('listTodos')], {
          cwd: dir,
        });
        expect(invoked.code).toBe(0);
        expect(existsSync(root) ? readdirSync(root) : []).toEqual([]);
      });
    },
    COMMAND_WITHIN_MS,
  );
});

describe('stack traces', () => {
  it(
    'point at the .ts file and line of a failure, in the log of a local command',
    async () => {
      await withScratchCopy(async (dir) => {
        const file = join(dir, 'lib/input.ts');
        const source = readFileSync(file, 'utf8');
        // The line that opens parseTodoId's body, written as a declaration or as a const arrow.
        const marker = /^export (?:function|const) parseTodoId\b.*\{$/m.exec(source)?.[0];
        if (marker === undefined) throw new Error('lib/input.ts has no parseTodoId with a block body');
        writeFileSync(file, source.replace(marker, `${marker}\n  if (raw === '1') throw new Error('planted');`));
        const line = source.split('\n').findIndex((text) => text === marker) + 2;
        const invoked = await runServerless(['invoke', 'local', '-f', 'getTodo', '--path', eventFile('getTodo')], {
          cwd: dir,
          env: { LOG_LEVEL: 'info' },
        });
        const logged = invoked.stdout.split('\n').find((text) => text.includes('"level":"error"')) ?? '';
        const { error } = JSON.parse(logged) as { error: { stack: string } };
        expect(error.stack).toContain(`lib/input.ts:${line}:`);
      });
    },
    COMMAND_WITHIN_MS,
  );
});
