import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { START_WITHIN_MS, killGroup, startOffline, type OfflineServer } from '../../harness/offline';
import { scratchCopy, withScratchCopy, type ScratchCopy } from '../../harness/scratch';
import { eventually } from '../../harness/wait';
import { createTodo, type Todo } from '../../lib/todos';
import { ApiClient, type ApiResponse } from '../support/client';

/** A rebuild of five bundles takes well under a second idle (npm run bench -- reload); this allows for a busy machine. */
const REBUILD_WITHIN_MS = 30_000;
/**
 * tsc's check of a saved edit, in watch mode: a few seconds, on the served folders only
 * (serverless/plugins/local-workflow/typecheck.cjs). This allows for a busy machine.
 */
const TYPECHECK_WITHIN_MS = 30_000;
/**
 * From `npm run dev`'s launch to its typecheck's first result: 17-22 s measured with the load
 * average at 15 on 2 cores, where checking the whole project took 33-79 s. Generous for a busy
 * machine, below what the whole project took.
 */
const FIRST_TYPECHECK_WITHIN_MS = 45_000;
/** A planted type error outside the served folders: `npm test` reports it, `npm run dev` does not. */
const UNSERVED_FILE = 'scripts/planted-type-error.ts';

/**
 * `npm run dev` in a scratch copy of the project: it serves every saved edit without a restart
 * and keeps its data, says so plainly when an edit does not build, and typechecks as you go;
 * `npm start` beside it does none of that.
 */
describe('npm run dev', () => {
  let scratch: ScratchCopy;
  let dev: OfflineServer;
  let start: OfflineServer;
  let api: ApiClient;
  let devLaunchedAt: number;
  beforeAll(async () => {
    scratch = scratchCopy();
    writeFileSync(join(scratch.dir, UNSERVED_FILE), 'export const notANumber: number = "text";\n');
    devLaunchedAt = Date.now();
    [dev, start] = await Promise.all([
      startOffline({ script: 'dev', cwd: scratch.dir }),
      startOffline({ script: 'start', cwd: scratch.dir }),
    ]);
    api = new ApiClient(dev.url);
  }, START_WITHIN_MS);
  afterAll(async () => {
    await Promise.all([dev.stop(), start.stop()]);
    scratch.remove();
  });

  /** Files a test changed, put back after it, so that no test sees another's edits. */
  const originals = new Map<string, string>();
  function edit(file: string, change: (source: string) => string): void {
    const path = join(scratch.dir, file);
    const source = readFileSync(path, 'utf8');
    if (!originals.has(path)) originals.set(path, source);
    writeFileSync(path, change(source));
  }
  function restore(): void {
    for (const [path, source] of originals) writeFileSync(path, source);
    originals.clear();
  }
  afterEach(restore);

  /** POSTs `title`: the record it made, as the domain makes it (createTodo). */
  const created = async (title: string): Promise<Todo> => {
    const response = await api.post('/todos', { title });
    expect(response.status).toBe(201);
    const todo = createTodo({ title }, (response.json() as Todo).id);
    expect(response.json()).toEqual(todo);
    return todo;
  };

  it(
    'serves an edit to lib/ on the next requests, with the records made before it still there',
    async () => {
      const plain = new ApiClient(start.url);
      const made = await created('made before the edit');
      expect((await plain.get('/todos/99999')).json()).toEqual({ error: 'Todo not found' });

      edit('lib/errors.ts', (source) => source.replace("'Todo not found'", "'Todo not found (edited)'"));
      await eventually(async () => JSON.stringify((await api.get('/todos/99999')).json()).includes('(edited)'), {
        within: REBUILD_WITHIN_MS,
        what: 'npm run dev serving the edit',
      });
      expect((await api.get(`/todos/${made.id}`)).json()).toEqual(made);
      expect((await api.post('/todos', { title: 'after' })).json()).toMatchObject({ id: made.id + 1 });
      // The plain server, in the same folder, still runs the code it started with: it watches nothing.
      expect((await plain.get('/todos/99999')).json()).toEqual({ error: 'Todo not found' });
      expect(start.output()).not.toContain('Reloaded');
      expect(dev.output()).toContain('Reloaded');
    },
    2 * REBUILD_WITHIN_MS,
  );

  it(
    'while an edit does not build, every route answers a JSON 500 naming the error in one line; fixing it brings the code back, data kept',
    async () => {
      const made = await created('made before the broken edit');
      const printedBefore = dev.output().length;
      edit('lib/input.ts', (source) => `${source}\nexport const broken = ;\n`);

      // Requests that change nothing when the code that builds answers them, one per route.
      const answers = (): Promise<ApiResponse[]> =>
        Promise.all([
          api.get('/todos'),
          api.get(`/todos/${made.id}`),
          api.post('/todos', { title: 5 }),
          api.put('/todos/99999', { completed: true }),
          api.delete('/todos/99999'),
        ]);
      const failing = await eventually(
        async () => {
          const all = await answers();
          return all.every((response) => response.status === 500) && all;
        },
        { within: REBUILD_WITHIN_MS, what: 'every route answering 500 for the broken build' },
      );
      for (const response of failing) {
        expect(response.contentType).toBe('application/json; charset=utf-8');
        expect(response.json()).toEqual({
          error: expect.stringMatching(/^Build failed: lib\/input\.ts:\d+:\d+: [^\n]+$/),
        });
        expect(response.text).not.toContain(scratch.dir);
        expect(response.text).not.toMatch(/\bat .*:\d+:\d+/);
      }
      const printed = dev.output().slice(printedBefore);
      expect(printed.match(/Build failed: lib\/input\.ts/g)).toHaveLength(1);

      restore();
      await eventually(async () => (await api.get(`/todos/${made.id}`)).status === 200, {
        within: REBUILD_WITHIN_MS,
        what: 'the fixed code served again',
      });
      expect((await api.get(`/todos/${made.id}`)).json()).toEqual(made);
    },
    3 * REBUILD_WITHIN_MS,
  );

  it(
    'gives its first typecheck result soon after launch, checking what it serves (functions/, lib/) and not the scripts',
    async () => {
      await eventually(() => /typecheck: Found \d+ errors?/.test(dev.output()), {
        within: FIRST_TYPECHECK_WITHIN_MS - (Date.now() - devLaunchedAt),
        what: `npm run dev's first typecheck result, within ${FIRST_TYPECHECK_WITHIN_MS} ms of its launch`,
      });
      expect(dev.output()).not.toContain(UNSERVED_FILE);
    },
    FIRST_TYPECHECK_WITHIN_MS,
  );

  it(
    'prints the type errors of a saved edit, which esbuild alone would build and serve',
    async () => {
      edit('lib/http.ts', (source) =>
        source.replace(
          "const JSON_TYPE = 'application/json; charset=utf-8';",
          "const JSON_TYPE: number = 'application/json; charset=utf-8';",
        ),
      );
      await eventually(() => /typecheck: lib\/http\.ts\(\d+,\d+\): error TS2322/.test(dev.output()), {
        within: TYPECHECK_WITHIN_MS,
        what: 'the type error printed by npm run dev',
      });
    },
    TYPECHECK_WITHIN_MS + 10_000,
  );
});

/** The processes of a process group (pid and command line), as ps lists them; none once it has gone. */
function groupMembers(pgid: number): string[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '-g', String(pgid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim() !== '');
  } catch {
    // ps exits 1 when it lists nothing.
    return [];
  }
}

/** serverless-offline stops its servers in well under a second; this allows for a busy machine. */
const CTRL_C_WITHIN_MS = 15_000;

/**
 * Ctrl-C in a terminal sends SIGINT to the whole foreground process group; a tool that runs
 * `npm run dev` may send it to npm's pid alone. Either way nothing it started is left running:
 * not serverless, nor the typechecker, nor esbuild's service.
 */
describe('npm run dev stopped with SIGINT', () => {
  it.each([
    [
      'the whole process group, as a terminal’s Ctrl-C',
      (pid: number) => {
        killGroup(pid, 'SIGINT');
      },
    ],
    [
      'npm’s pid alone',
      (pid: number) => {
        process.kill(pid, 'SIGINT');
      },
    ],
  ])(
    'sent to %s, leaves no process of it running',
    async (_to, interrupt) => {
      await withScratchCopy(async (dir) => {
        const dev = await startOffline({ script: 'dev', cwd: dir });
        try {
          await eventually(() => dev.output().includes('typecheck: Found'), {
            within: FIRST_TYPECHECK_WITHIN_MS,
            what: 'the typecheck running',
          });
          // startOffline runs npm in a group of its own, whose id is npm's pid.
          const running = groupMembers(dev.pid).join('\n');
          expect(running).toContain('serverless offline');
          expect(running).toMatch(/typescript\/bin\/tsc/);
          expect(running).toMatch(/esbuild --service/);
          interrupt(dev.pid);
          // On a failure, the assertion after the wait names what was left.
          await eventually(() => groupMembers(dev.pid).length === 0, {
            within: CTRL_C_WITHIN_MS,
            what: 'every process of npm run dev gone after SIGINT',
          }).catch(() => undefined);
          expect(groupMembers(dev.pid)).toEqual([]);
        } finally {
          await dev.stop();
        }
      });
    },
    START_WITHIN_MS + FIRST_TYPECHECK_WITHIN_MS + CTRL_C_WITHIN_MS,
  );
});
