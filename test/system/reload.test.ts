import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { START_WITHIN_MS, startOffline, type OfflineServer } from '../../harness/offline';
import { scratchCopy, type ScratchCopy } from '../../harness/scratch';
import { eventually } from '../../harness/wait';
import { createTodo } from '../../lib/todos';
import { ApiClient } from '../support/client';

/**
 * `npm run dev` serves every saved change on the very next request, however the editor saves:
 * in place, by a temporary file renamed over the old one (vim, sed -i, JetBrains' safe write),
 * by a delete and a create, with a new file, or by a branch switch that rewrites many files at
 * once. Fifty saves of each kind, each checked by the request that follows it, with no wait
 * between them; the records made before them all are still there after.
 */

const SAVES = 50;
/** Each save costs a rebuild of five bundles (well under a second idle; npm run bench -- reload), waited for by its request. */
const SAVES_WITHIN_MS = SAVES * 5_000;
const ERRORS = 'lib/errors.ts';
const MESSAGE = "'Todo not found'";

/** One save of `lib/errors.ts` whose "Todo not found" reads `mark`; as a kind of editor makes it. */
type Save = (dir: string, mark: string) => void;

function withMark(source: string, mark: string): string {
  if (!source.includes(MESSAGE)) throw new Error(`${ERRORS} no longer says ${MESSAGE}`);
  return source.replace(MESSAGE, `'Todo not found ${mark}'`);
}

describe('npm run dev, saved fifty times each way', () => {
  let scratch: ScratchCopy;
  let dev: OfflineServer;
  let api: ApiClient;
  let original: string;
  let kept: number;
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], {
      cwd: scratch.dir,
      stdio: 'ignore',
    });
  beforeAll(async () => {
    scratch = scratchCopy();
    original = readFileSync(join(scratch.dir, ERRORS), 'utf8');
    // A repository, for the branch switches: two branches that differ in every file of lib/.
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-q', '-m', 'start');
    for (const branch of ['a', 'b']) {
      git('checkout', '-q', '-b', branch, 'main');
      for (const file of execFileSync('git', ['ls-files', 'lib'], { cwd: scratch.dir, encoding: 'utf8' }).split('\n')) {
        if (file === '') continue;
        const path = join(scratch.dir, file);
        const source = readFileSync(path, 'utf8');
        writeFileSync(path, file === ERRORS ? withMark(source, `on ${branch}`) : `${source}// branch ${branch}\n`);
      }
      git('commit', '-q', '-am', branch);
    }
    git('checkout', '-q', 'main');
    dev = await startOffline({ script: 'dev', cwd: scratch.dir });
    api = new ApiClient(dev.url);
    const created = await api.post('/todos', { title: 'made before every save' });
    kept = (created.json() as { id: number }).id;
  }, START_WITHIN_MS);
  afterAll(async () => {
    await dev.stop();
    scratch.remove();
  });

  const path = (file: string) => join(scratch.dir, file);
  const saves: [string, Save][] = [
    [
      'in place',
      (dir, mark) => {
        writeFileSync(join(dir, ERRORS), withMark(original, mark));
      },
    ],
    [
      'by a temporary file renamed over it',
      (dir, mark) => {
        const temporary = join(dir, 'lib/.errors.ts.swp');
        writeFileSync(temporary, withMark(original, mark));
        renameSync(temporary, join(dir, ERRORS));
      },
    ],
    [
      'by a delete, then a create',
      (dir, mark) => {
        unlinkSync(join(dir, ERRORS));
        writeFileSync(join(dir, ERRORS), withMark(original, mark));
      },
    ],
    [
      'with a new file that it imports, written after it',
      (dir, mark) => {
        const name = `mark-${mark.replace(/\W/g, '-')}`;
        writeFileSync(
          join(dir, ERRORS),
          `import { MARK } from './${name}';\n${original.replace(MESSAGE, '`Todo not found ${MARK}`')}`,
        );
        // The new file appears whole (written aside, then renamed), as an editor creates one: read
        // half-written, before the build that reads it whole, it would be rebuilt again, and named
        // by two lines. A file saved in place is the first case's.
        const temporary = join(dir, `lib/.${name}.ts.swp`);
        writeFileSync(temporary, `export const MARK = ${JSON.stringify(mark)};\n`);
        renameSync(temporary, join(dir, `lib/${name}.ts`));
      },
    ],
  ];

  async function expectServed(mark: string): Promise<void> {
    const answer = await api.get('/todos/99999');
    expect({ status: answer.status, body: answer.json() }).toEqual({
      status: 404,
      body: { error: `Todo not found ${mark}` },
    });
  }

  const reloads = () => dev.output().match(/^.*Reloaded \(.*$/gm) ?? [];

  let settles = 0;
  /**
   * How many Reloaded lines there are once every save so far has printed its own: a request's
   * answer can come before its save's line, which travels on another channel. A new file that
   * nothing imports, built by the request that follows it: its line comes after every other.
   */
  async function settled(): Promise<number> {
    const name = `lib/settle-${++settles}.ts`;
    writeFileSync(path(name), 'export {};\n');
    await api.get('/todos/99999');
    const at = () => reloads().findIndex((line) => line.includes(`Reloaded (${name}):`));
    await eventually(() => at() >= 0, { within: 30_000, what: `the Reloaded line of ${name}` });
    return at();
  }

  /**
   * The Reloaded lines from `before` to `end` (settled()'s indexes), but the probes': a probe's new
   * file can be built twice on a busy machine (created, then written: two events), and its second
   * line come after its first. It is the probe's, not a save's.
   */
  const reloadsBetween = (before: number, end: number) =>
    reloads()
      .slice(before, end)
      .filter((line) => !/Reloaded \(lib\/settle-\d+\.ts\)/.test(line));

  it.each(saves)(
    'serves each save %s on the next request, printing one line a reload',
    async (kind, save) => {
      const before = (await settled()) + 1;
      for (let i = 0; i < SAVES; i++) {
        const mark = `(${saves.findIndex(([name]) => name === kind)}.${i})`;
        save(scratch.dir, mark);
        await expectServed(mark);
      }
      // One line a reload, naming the files saved.
      const end = await settled();
      const lines = reloadsBetween(before, end);
      // A save in two steps can be seen between them: that build fails (no line), or succeeds when
      // esbuild reads the second step too (a line for the first, another for the second).
      expect(lines.length).toBeGreaterThanOrEqual(SAVES);
      expect(lines.length).toBeLessThanOrEqual(2 * SAVES);
      for (const line of lines) {
        expect(line).toMatch(
          /^\S* ?Reloaded \((lib\/errors\.ts|lib\/errors\.ts, lib\/mark-[\w-]+\.ts|lib\/mark-[\w-]+\.ts)\): the next request runs the rebuilt code\.$/,
        );
      }
      // Each new file is named by exactly one reload.
      const named = lines.flatMap((line) => line.match(/lib\/mark-[\w-]+\.ts/g) ?? []);
      expect(new Set(named).size).toBe(named.length);
      if (kind.startsWith('with a new file')) expect(named).toHaveLength(SAVES);
      else expect(named).toEqual([]);
      expect((await api.get(`/todos/${kept}`)).json()).toEqual(createTodo({ title: 'made before every save' }, kept));
    },
    SAVES_WITHIN_MS,
  );

  it(
    'does not rebuild for an editor’s swap, backup or temporary file',
    async () => {
      writeFileSync(path(ERRORS), withMark(original, '(before the swap files)'));
      await expectServed('(before the swap files)');
      const before = (await settled()) + 1;
      writeFileSync(path('lib/.errors.ts.swp'), 'not TypeScript');
      writeFileSync(path('lib/errors.ts~'), 'not TypeScript');
      writeFileSync(path('lib/4913'), '');
      writeFileSync(path('lib/errors.ts___jb_tmp___'), 'not TypeScript');
      await expectServed('(before the swap files)');
      const mark = '(after the swap files)';
      writeFileSync(path(ERRORS), withMark(original, mark));
      await expectServed(mark);
      const end = await settled();
      expect(reloadsBetween(before, end)).toEqual([
        expect.stringMatching(/Reloaded \(lib\/errors\.ts\): the next request runs the rebuilt code\.$/),
      ]);
    },
    SAVES_WITHIN_MS,
  );

  it(
    'serves each branch switch on the next request, though it rewrites every file of lib/',
    async () => {
      // From a clean checkout: the other saves leave changes that a switch would refuse to overwrite.
      git('checkout', '-qf', 'main');
      git('clean', '-fdq', 'lib');
      for (let i = 0; i < SAVES; i++) {
        const branch = i % 2 === 0 ? 'a' : 'b';
        git('checkout', '-q', branch);
        expect(readFileSync(path(ERRORS), 'utf8')).toContain(`on ${branch}`);
        await expectServed(`on ${branch}`);
      }
      expect((await api.get(`/todos/${kept}`)).json()).toMatchObject({ id: kept });
    },
    SAVES_WITHIN_MS,
  );
});
