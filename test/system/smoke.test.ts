import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { context } from '../support/event';
import { startGateway, type Cors, type Gateway } from '../../harness/gateway';
import { freePort } from '../../harness/project';
import { FUNCTION_NAMES, handlersOn, routeKey, type FunctionName } from '../support/routes';
import type { HttpResponse } from '../../lib/http';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';
import { MAX_TITLE_LENGTH } from '../../lib/todos';
import { eventually } from '../../harness/wait';
import { CHECKS } from '../../smoke/checks';
import { HELP } from '../../smoke/cli';
import { Contract } from '../../smoke/contract';
import { runSmoke } from '../../smoke/run';
import { CLEANUP_WITHIN_MS, REQUEST_WITHIN_MS, Stage } from '../../smoke/stage';
import { startStageProxy, type StageProxy } from '../support/stage-proxy';
import {
  expectInterruptedWithAPostInFlight,
  linesOf,
  runSmokeCommand,
  SMOKE_WITHIN_MS,
  startSmoke,
} from '../support/smoke-command';

/**
 * `npm run smoke` against a stage made in this process: the five real handlers on the memory
 * store behind the fleet's gateway (harness/gateway.ts), with the CORS of serverless.yml. A
 * stage is broken by changing what one handler answers, as a change to its code would: the
 * smoke must then fail, naming what broke. (test/e2e/smoke.test.ts and test/fleet/smoke.test.ts
 * run it against npm start, the DynamoDB store and the packaged fleet.)
 */

/** serverless.yml's provider.httpApi.cors, as the packaged template's CorsConfiguration has it. */
const CORS: Cors = {
  AllowOrigins: ['*'],
  AllowHeaders: ['Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match'],
  AllowMethods: ['GET', 'POST', 'PUT', 'DELETE'],
  ExposeHeaders: ['Location', 'Idempotent-Replayed', 'ETag', 'Retry-After'],
  MaxAge: 86400,
};

type Change = (response: HttpResponse) => HttpResponse;

const noop = (): void => undefined;

let stages: { close(): Promise<void> }[] = [];

/** The service's handlers behind a gateway, with `changes` made to what some of them answer. */
async function startStage(changes: Partial<Record<FunctionName, Change>> = {}, cors = CORS): Promise<Gateway> {
  const handlers: Record<FunctionName, APIGatewayProxyHandlerV2> = handlersOn(memoryStore);
  const gateway = await startGateway(
    FUNCTION_NAMES.map((name) => ({
      routeKey: routeKey(name),
      invoke: async (event) => {
        const response = (await handlers[name](event, context(), noop)) as HttpResponse;
        return { ok: true, result: changes[name]?.(response) ?? response, durationMs: 0 };
      },
    })),
    cors,
  );
  stages.push(gateway);
  return gateway;
}

async function listed(): Promise<unknown> {
  return (await memoryStore.readList(Date.now() + 1_000)).todos;
}

beforeEach(() => {
  resetMemoryStore();
});
afterEach(async () => {
  await Promise.all(stages.map((stage) => stage.close()));
  stages = [];
});

/** Every request from the third POST on is held: the stage stops answering mid-run. */
function hangsAtThirdPost(): (method: string) => boolean {
  let posts = 0;
  return (method) => (method === 'POST' && ++posts === 3) || posts >= 3;
}

/** Every documented status that no client can cause without harming the stage (a full list, a throttled stage, a failure). */
const NOT_PROVOKABLE = [
  ...['GET /todos', 'POST /todos', 'GET /todos/{id}', 'PUT /todos/{id}', 'DELETE /todos/{id}'].flatMap((operation) =>
    [429, 500, 503].map((status) => `${operation} ${status}`),
  ),
  ...['POST /todos', 'PUT /todos/{id}', 'DELETE /todos/{id}'].map((operation) => `${operation} 409`),
].sort();

describe('npm run smoke -- <base-url>', () => {
  it(
    'passes against the service: one line per check, a summary, exit 0, every status a client can cause provoked; the store is left as it was',
    async () => {
      const stage = await startStage();
      const before = await listed();
      const result = await runSmokeCommand(stage.url);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const lines = linesOf(result.stdout);
      expect(lines.slice(0, CHECKS.length)).toEqual(
        CHECKS.map((check) => expect.stringMatching(`^pass  ${literal(check.name)} \\(\\d+ ms\\)$`)),
      );
      expect(lines.slice(CHECKS.length)).toEqual([
        'Not provoked, as no client can cause them without harming the stage: 409 on POST /todos, PUT /todos/{id}, DELETE /todos/{id}; 429, 500, 503 on every operation',
        expect.stringMatching(/^Cleanup: deleted the \d+ records this run created$/),
        expect.stringMatching(
          `^${CHECKS.length} passed, 0 failed, of ${CHECKS.length} checks against ${literal(stage.url)} in [\\d.]+ s$`,
        ),
      ]);
      expect(result.report).toMatchObject({ url: stage.url, result: 'passed', notRun: [], records: { left: [] } });
      expect([...(result.report?.notProvoked ?? [])].sort()).toEqual(NOT_PROVOKABLE);
      expect(result.report?.checks.map((check) => check.result)).toEqual(CHECKS.map(() => 'passed'));
      expect(result.report?.records.deleted).toBe(result.report?.records.created);
      expect(await listed()).toEqual(before);
    },
    SMOKE_WITHIN_MS,
  );

  it(
    'passes on a stage in use, without records 1 and 2, and touches none of its records',
    async () => {
      const stage = await startStage();
      await memoryStore.remove(1);
      await memoryStore.remove(2);
      const theirs = await memoryStore.create({ title: 'a user’s record' });
      const result = await runSmokeCommand(stage.url);
      expect(result.status).toBe(0);
      expect(await listed()).toEqual([theirs.value]);
    },
    SMOKE_WITHIN_MS,
  );

  const withoutHeader =
    (name: string): Change =>
    (response) => ({
      ...response,
      headers: Object.fromEntries(Object.entries(response.headers ?? {}).filter(([header]) => header !== name)),
    });

  it.each<[string, Partial<Record<FunctionName, Change>>, Cors, string, RegExp]>([
    [
      'DELETE answers its "Deleted" as JSON',
      {
        deleteTodo: (response) =>
          response.statusCode === 200
            ? { ...response, headers: { 'content-type': 'application/json' }, body: '"Deleted"' }
            : response,
      },
      CORS,
      'DELETE /todos/{id} → 200: text/plain "Deleted", and the record is gone',
      /DELETE \/todos\/\d+ → 200: media type "application\/json" not documented \(expected text\/plain\)/,
    ],
    [
      'POST leaves out Location',
      { createTodo: withoutHeader('location') },
      CORS,
      'POST /todos → 201: the new Todo, completed = false, other fields ignored, and its Location',
      /POST \/todos → 201: header Location is missing \(openapi.yaml requires it\)/,
    ],
    [
      'the 400 for a title past the cap does not name the limit',
      {
        createTodo: (response) =>
          response.statusCode === 400 && (response.body ?? '').includes(String(MAX_TITLE_LENGTH))
            ? { ...response, body: JSON.stringify({ error: 'title too long' }) }
            : response,
      },
      CORS,
      `POST and PUT → 400: a title past ${MAX_TITLE_LENGTH} characters, naming the limit; 201 at it`,
      /the 400 does not name the limit/,
    ],
    [
      'GET /todos leaves out Vary',
      { listTodos: withoutHeader('vary') },
      CORS,
      'GET /todos → 200: every Todo in list order, new records at the end',
      /GET \/todos → 200: header Vary is missing/,
    ],
    [
      'a PUT sent again is not said to be a replay',
      { updateTodo: withoutHeader('idempotent-replayed') },
      CORS,
      'PUT /todos/{id} sent again with its Idempotency-Key → 200, Idempotent-Replayed: true',
      /the PUT sent again: Idempotent-Replayed: expected "true", got null/,
    ],
    [
      'GET /todos/{id} answers completed as a string',
      {
        getTodo: (response) =>
          response.statusCode === 200
            ? { ...response, body: (response.body ?? '').replace(/"completed":(true|false)/, '"completed":"$1"') }
            : response,
      },
      CORS,
      'GET /todos/{id} → 200: the Todo',
      /GET \/todos\/\d+ → 200: body breaks the schema: data\/completed must be boolean/,
    ],
    [
      'CORS exposes no headers',
      {},
      { ...CORS, ExposeHeaders: [] },
      'CORS: a POST from https://smoke-check.example is readable there, Location, Idempotent-Replayed, ETag and Retry-After exposed',
      /Access-Control-Expose-Headers \(\) leaves out location/,
    ],
    [
      'CORS does not expose Retry-After',
      {},
      { ...CORS, ExposeHeaders: ['Location', 'Idempotent-Replayed', 'ETag'] },
      'CORS: a POST from https://smoke-check.example is readable there, Location, Idempotent-Replayed, ETag and Retry-After exposed',
      /Access-Control-Expose-Headers \(location,idempotent-replayed,etag\) leaves out retry-after/,
    ],
    [
      'PUT ignores If-None-Match',
      {
        updateTodo: (response) =>
          response.statusCode === 412 && (response.body ?? '').includes('If-None-Match')
            ? { ...response, statusCode: 200 }
            : response,
      },
      CORS,
      'PUT /todos/{id} → 412: If-None-Match: * on a record that exists, or naming its ETag; nothing changes',
      /PUT \/todos\/\d+ → 200/,
    ],
  ])(
    'fails when %s: a FAIL line names the check and what broke, exit 1, and its records are deleted',
    async (_breakage, changes, cors, check, what) => {
      const stage = await startStage(changes, cors);
      const before = await listed();
      const result = await runSmokeCommand(stage.url);
      expect(result.status).toBe(1);
      const lines = linesOf(result.stdout);
      const failed = lines.findIndex((line) => line.startsWith(`FAIL  ${check} (`));
      expect(failed).toBeGreaterThanOrEqual(0);
      expect(lines[failed + 1]).toMatch(what);
      expect(lines.at(-1)).toMatch(/^\d+ passed, [1-9]\d* failed, of \d+ checks against /);
      expect(result.report?.result).toBe('failed');
      expect(result.report?.checks.find((result) => result.name === check)).toMatchObject({
        result: 'failed',
        error: expect.stringMatching(what),
      });
      expect(result.report?.records.left).toEqual([]);
      expect(await listed()).toEqual(before);
    },
    SMOKE_WITHIN_MS,
  );

  describe('when the stage gives no answer', () => {
    let proxy: StageProxy | undefined;
    afterEach(async () => {
      await proxy?.close();
      proxy = undefined;
    });

    it(
      'deletes a record whose POST it never heard back from, found by its title, and says in one line that the answer was lost',
      async () => {
        const stage = await startStage();
        const before = await listed();
        let posts = 0;
        proxy = await startStageProxy(stage.url, { loseAnswer: (method) => method === 'POST' && ++posts === 3 });
        const result = await runSmokeCommand(proxy.url);
        expect(result.status).toBe(1);
        expect(linesOf(result.stderr)).toEqual([
          expect.stringMatching(`^No answer from ${literal(proxy.url)}: the connection closed before the answer`),
        ]);
        expect(result.report).toMatchObject({ result: 'unreachable', records: { left: [] } });
        expect(result.report?.records.created).toBe(3);
        expect(await listed()).toEqual(before);
      },
      SMOKE_WITHIN_MS,
    );

    it(
      'says in one line that nothing answers at the URL, with no stack',
      async () => {
        const url = `http://127.0.0.1:${await freePort()}`;
        const result = await runSmokeCommand(url);
        expect(result).toMatchObject({
          status: 1,
          stdout: '',
          stderr: `No answer from ${url}: connection refused (ECONNREFUSED)\n`,
        });
        expect(result.report).toMatchObject({
          result: 'unreachable',
          checks: [],
          notRun: CHECKS.map((check) => check.name),
        });
      },
      SMOKE_WITHIN_MS,
    );

    /** npm and tsx start in about 2 s idle; this leaves room for a busy machine. */
    const STARTS_WITHIN_MS = 20_000;

    it(
      'says in one line that a stage that takes the connection never answers, after one request’s wait, having created nothing',
      async () => {
        proxy = await startStageProxy((await startStage()).url, { hold: () => true });
        const started = Date.now();
        const result = await runSmokeCommand(proxy.url);
        expect(Date.now() - started).toBeLessThan(REQUEST_WITHIN_MS + STARTS_WITHIN_MS);
        expect(result).toMatchObject({
          status: 1,
          stdout: '',
          stderr: `No answer from ${proxy.url}: no answer within ${REQUEST_WITHIN_MS / 1000} s\n`,
        });
        expect(result.report).toMatchObject({ result: 'unreachable', checks: [], records: { created: 0 } });
      },
      SMOKE_WITHIN_MS,
    );

    it(
      'says in one line that a stage stopped answering mid-run, with the records it could not delete, within its bounds',
      async () => {
        const stage = await startStage();
        proxy = await startStageProxy(stage.url, { hold: hangsAtThirdPost() });
        const started = Date.now();
        const result = await runSmokeCommand(proxy.url);
        expect(Date.now() - started).toBeLessThan(REQUEST_WITHIN_MS + CLEANUP_WITHIN_MS + STARTS_WITHIN_MS);
        expect(result.status).toBe(1);
        const left = result.report?.records.left ?? [];
        expect(left).toHaveLength(2);
        expect(result.stderr).toBe(
          `No answer from ${proxy.url}: no answer within ${REQUEST_WITHIN_MS / 1000} s; ` +
            `2 records this run created are left on the stage: ids ${left.join(', ')}; ` +
            `1 POST got no answer and may still make a record, titled "${result.report?.records.titled ?? ''}…"\n`,
        );
        expect(result.report).toMatchObject({ result: 'unreachable', records: { unanswered: 1 } });
        expect(await memoryStore.get(left[0] ?? 0, Date.now() + 1_000)).toBeDefined();
      },
      SMOKE_WITHIN_MS,
    );

    it(
      'says in one line that the TLS handshake failed, with no stack',
      async () => {
        const stage = await startStage();
        const url = stage.url.replace('http:', 'https:');
        const result = await runSmokeCommand(url);
        expect(result).toMatchObject({
          status: 1,
          stdout: '',
          stderr: `No answer from ${url}: TLS error: wrong version number (ERR_SSL_WRONG_VERSION_NUMBER); does it serve plain http://?\n`,
        });
      },
      SMOKE_WITHIN_MS,
    );
  });

  describe('its bounds, run in this process with short ones', () => {
    let proxy: StageProxy | undefined;
    afterEach(async () => {
      await proxy?.close();
      proxy = undefined;
    });

    /** Far under REQUEST_WITHIN_MS, which would end each request otherwise. */
    const bounds = { checksWithinMs: 2_000, cleanupWithinMs: 1_000 };

    /** runSmoke against a stage that stops answering at its third POST, and what it printed. */
    async function runOnHangingStage(whenHeld: (stage: Stage) => void = () => undefined) {
      proxy = await startStageProxy((await startStage()).url, { hold: hangsAtThirdPost() });
      const stage = new Stage(proxy.url, new Contract(), 'abcd1234', bounds);
      const problems: string[] = [];
      const running = runSmoke(stage, new Contract(), CHECKS, { line: noop, problem: (text) => problems.push(text) });
      await proxy.holding;
      whenHeld(stage);
      const started = Date.now();
      const report = await running;
      return { report, problems, ms: Date.now() - started };
    }

    it(
      'ends the checks at their bound, however long one answer may take, and says so in one line',
      async () => {
        const { report, problems, ms } = await runOnHangingStage();
        expect(ms).toBeLessThan(REQUEST_WITHIN_MS);
        expect(report).toMatchObject({ result: 'unreachable', unreachable: 'the checks did not end within 2 s' });
        expect(problems).toEqual([
          `No answer from ${proxy?.url ?? ''}: the checks did not end within 2 s; ` +
            `2 records this run created are left on the stage: ids ${report.records.left.join(', ')}; ` +
            '1 POST got no answer and may still make a record, titled "smoke abcd1234 …"',
        ]);
      },
      SMOKE_WITHIN_MS,
    );

    it(
      'ends the cleanup after an interruption at its bound, and says in one line what it left',
      async () => {
        const { report, problems, ms } = await runOnHangingStage((stage) => {
          stage.interrupt();
        });
        expect(ms).toBeLessThan(REQUEST_WITHIN_MS);
        expect(report).toMatchObject({ result: 'interrupted', records: { created: 2, deleted: 0, unanswered: 1 } });
        expect(problems).toEqual([
          `Cleanup: no answer from ${proxy?.url ?? ''}: the cleanup did not end within 1 s; ` +
            `2 records this run created are left on the stage: ids ${report.records.left.join(', ')}; ` +
            '1 POST got no answer and may still make a record, titled "smoke abcd1234 …"',
        ]);
      },
      SMOKE_WITHIN_MS,
    );
  });

  describe('interrupted with Ctrl-C', () => {
    let proxy: StageProxy | undefined;
    afterEach(async () => {
      await proxy?.close();
      proxy = undefined;
    });

    /** A signal's handler runs within milliseconds of it; this leaves room for a busy machine. */
    const SIGNAL_WITHIN_MS = 10_000;
    /**
     * How long the run may take to end once told to stop at once: it gives up its request then,
     * and the stage's requests wait up to REQUEST_WITHIN_MS or CLEANUP_WITHIN_MS, well past this.
     */
    const EXITS_WITHIN_MS = 5_000;

    it(
      'on a stage that never answers, gives up the request in flight at once and exits 130',
      async () => {
        proxy = await startStageProxy((await startStage()).url, { hold: () => true });
        const run = startSmoke([proxy.url]);
        await proxy.holding;
        run.interrupt();
        await eventually(() => !run.running(), { within: EXITS_WITHIN_MS, what: 'npm run smoke ending at Ctrl-C' });
        const result = await run.finished;
        expect(result.status).toBe(130);
        expect(linesOf(result.stderr)).toEqual(['Interrupted: deleting the records this run created, then stopping']);
        expect(result.report).toMatchObject({ result: 'interrupted', records: { created: 0, left: [] } });
      },
      SMOKE_WITHIN_MS,
    );

    it(
      'while a POST is in flight: gives it up, deletes the records it knows, says the one that may still come, exits 130',
      async () => {
        const stage = await startStage();
        const interrupted = await expectInterruptedWithAPostInFlight(stage.url, listed, {
          exitsWithin: EXITS_WITHIN_MS,
          recordWithin: SIGNAL_WITHIN_MS,
        });
        proxy = interrupted.proxy;
      },
      SMOKE_WITHIN_MS,
    );

    it(
      'twice, while the cleanup waits on a stage that stopped answering: stops at once and names the records it leaves',
      async () => {
        const stage = await startStage();
        proxy = await startStageProxy(stage.url, { hold: hangsAtThirdPost() });
        const run = startSmoke([proxy.url]);
        await proxy.holding;
        // One press, which npm passes on a second time: the run must take it as one.
        run.interrupt();
        await eventually(() => run.stderr().includes('Ctrl-C again'), {
          within: SIGNAL_WITHIN_MS,
          what: 'npm run smoke saying that Ctrl-C again stops it',
        });
        run.interrupt();
        await eventually(() => !run.running(), {
          within: EXITS_WITHIN_MS,
          what: 'npm run smoke ending at the second Ctrl-C',
        });
        const result = await run.finished;
        expect(result.status).toBe(130);
        const left = result.report?.records.left ?? [];
        expect(left).toHaveLength(2);
        expect(linesOf(result.stderr)).toEqual([
          'Interrupted: deleting the records this run created, then stopping',
          'Still deleting them: Ctrl-C again to stop now and leave them on the stage',
          `Stopped without the cleanup: 2 records this run created are left on the stage: ids ${left.join(', ')}; ` +
            `1 POST got no answer and may still make a record, titled "${result.report?.records.titled ?? ''}…"`,
        ]);
        expect(result.report).toMatchObject({ result: 'interrupted', records: { created: 2, deleted: 0 } });
        for (const id of left) expect(await memoryStore.get(id, Date.now() + 1_000)).toBeDefined();
      },
      SMOKE_WITHIN_MS,
    );
  });

  it.each(['/todos', '/todos/', '/todos/1'])(
    'stops with one line and exit 2 for a base URL that ends in %s, the API’s own path, saying to drop it',
    async (path) => {
      const stage = await startStage();
      const result = await runSmokeCommand(stage.url + path);
      const given = stage.url + path.replace(/\/$/, '');
      expect(result).toMatchObject({
        status: 2,
        stdout: '',
        stderr: `${given} ends in the API's own path, ${given.slice(stage.url.length)}: the API is at ${stage.url}, so drop it: npm run smoke -- ${stage.url}\n`,
      });
      expect(await memoryStore.get(3, Date.now() + 1_000)).toBeUndefined();
    },
    SMOKE_WITHIN_MS,
  );

  it.each(['--help', '-h'])(
    'prints its usage for %s, and exits 0',
    async (flag) => {
      const result = await runSmokeCommand(flag);
      expect(result).toMatchObject({ status: 0, stdout: HELP, stderr: '' });
    },
    SMOKE_WITHIN_MS,
  );

  it.each([
    [[], /^Usage: npm run smoke -- <base-url> \[--json <file>\]/],
    [
      ['http://localhost:3000', '--jsno', 'report.json'],
      /^Unknown option "--jsno" for npm run smoke: did you mean "--json"\? Options: --json \(npm run smoke -- --help\)$/,
    ],
    [['localhost:3000'], /^Not an http:\/\/ or https:\/\/ URL: "localhost:3000"/],
    [['not a url'], /^Not a URL: "not a url"/],
    [['http://localhost:3000?x=1'], /^A base URL has no query or fragment/],
  ])(
    'stops with one line and exit 2 for the command line %j',
    async (args, line) => {
      const result = await runSmokeCommand(...args);
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      expect(linesOf(result.stderr)[0]).toMatch(line);
    },
    SMOKE_WITHIN_MS,
  );
});

/** `text` as a regular expression that matches it literally. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
