import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  MutantDoesNotApply,
  RUN_WITHIN_MS,
  SLOWER_AT_MOST,
  boundAfter,
  byTimeout,
  exitCode,
  inTurn,
  mutated,
  notApplying,
  resultLine,
  runMutants,
  scoreLine,
  verdictOf,
  type Mutant,
  type Result,
  type Verdict,
} from '../../scripts/mutation';

/**
 * The mechanism of `npm run mutate` (scripts/mutation.ts) on a tiny tree of its own: a mutant is
 * put in alone, the tests see it, the file is put back, a mutant whose text is gone stops the run
 * before any test, a run that timed out is not a catch, and the score decides the exit status. The
 * tests here are a function that reads the tree; the command's own (jest on the simulator and on
 * DynamoDB Local) are hours of running, never started here.
 */

const SOURCE = 'export function within(used: number, room: number): boolean {\n  return used <= room;\n}\n';

function mutant(id: string, find: string, replace: string): Mutant {
  return { id, file: 'lib/room.ts', find, replace, why: `the ${id} defect` };
}

const FLIPPED = mutant('flipped', 'used <= room', 'used >= room');
const STRICT = mutant('strict', 'used <= room', 'used < room');

describe('npm run mutate’s mechanism', () => {
  let tree: string;
  const file = (): string => join(tree, 'lib/room.ts');

  beforeEach(() => {
    tree = mkdtempSync(join(tmpdir(), 'todo-mutation-'));
    mkdirSync(join(tree, 'lib'));
    writeFileSync(file(), SOURCE);
  });
  afterEach(() => {
    rmSync(tree, { recursive: true, force: true });
  });

  it('replaces a mutant’s text where it is, once', () => {
    expect(mutated(SOURCE, FLIPPED)).toBe(SOURCE.replace('used <= room', 'used >= room'));
  });

  it('refuses a mutant whose text is not in its file, or is there twice', () => {
    expect(() => mutated(SOURCE, mutant('gone', 'used < room', 'used > room'))).toThrow(
      new MutantDoesNotApply('gone: its text is no longer in lib/room.ts'),
    );
    expect(() => mutated(SOURCE, mutant('twice', 'room', 'space'))).toThrow(
      new MutantDoesNotApply('twice: its text is in lib/room.ts more than once'),
    );
    expect(notApplying(tree, [FLIPPED, mutant('gone', 'used < room', '')])).toEqual([
      'gone: its text is no longer in lib/room.ts',
    ]);
  });

  it('runs the tests on each mutant alone, says which caught it, and puts the file back', async () => {
    const seen: string[] = [];
    // A test that knows `within(3, 3)` is true: it catches the flip, and misses `<`'s boundary.
    const results = await runMutants(
      [tree],
      [FLIPPED, STRICT],
      (root) => {
        const source = readFileSync(join(root, 'lib/room.ts'), 'utf8');
        seen.push(source);
        return Promise.resolve(
          source.includes('used >= room')
            ? { outcome: 'caught', by: 'room.test.ts › within(1, 3)' }
            : { outcome: 'survived' },
        );
      },
      (line) => seen.push(line),
    );
    expect(seen).toEqual([
      mutated(SOURCE, FLIPPED),
      expect.stringMatching(/^caught {5}flipped \(\d+ s\) by room\.test\.ts › within\(1, 3\)$/),
      mutated(SOURCE, STRICT),
      expect.stringMatching(/^SURVIVED {3}strict \(\d+ s\): lib\/room\.ts: the strict defect$/),
    ]);
    expect(results.map(({ mutant: { id }, verdict }) => ({ id, outcome: verdict.outcome }))).toEqual([
      { id: 'flipped', outcome: 'caught' },
      { id: 'strict', outcome: 'survived' },
    ]);
    expect(readFileSync(file(), 'utf8')).toBe(SOURCE);
  });

  it('puts the file back when the tests themselves fail to run', async () => {
    await expect(
      runMutants(
        [tree],
        [FLIPPED],
        () => Promise.reject(new Error('jest crashed')),
        () => undefined,
      ),
    ).rejects.toThrow('jest crashed');
    expect(readFileSync(file(), 'utf8')).toBe(SOURCE);
  });

  it('stops before any test when a mutant no longer applies', async () => {
    let runs = 0;
    const tests = (): Promise<Verdict> => {
      runs++;
      return Promise.resolve({ outcome: 'survived' });
    };
    await expect(
      runMutants([tree], [FLIPPED, mutant('gone', 'used < room', '')], tests, () => undefined),
    ).rejects.toThrow(new MutantDoesNotApply('gone: its text is no longer in lib/room.ts'));
    expect(runs).toBe(0);
  });

  it('scores the run, and fails it below 90 % caught, a mutant that timed out counted as not caught', () => {
    const results = (caught: number, survived: number, timedOut = 0): Result[] => [
      ...Array.from({ length: caught }, () => ({ mutant: FLIPPED, verdict: CAUGHT, seconds: 1 })),
      ...Array.from({ length: survived }, () => ({ mutant: STRICT, verdict: SURVIVED, seconds: 1 })),
      ...Array.from({ length: timedOut }, () => ({ mutant: STRICT, verdict: TIMED_OUT, seconds: 600 })),
    ];
    expect(scoreLine(results(9, 1))).toBe(
      'score: 9 of 10 mutants caught, 90.0 % (at least 90 % required); 1 survived, 0 timed out',
    );
    expect(exitCode(results(9, 1))).toBe(0);
    expect(scoreLine(results(35, 5))).toBe(
      'score: 35 of 40 mutants caught, 87.5 % (at least 90 % required); 5 survived, 0 timed out',
    );
    expect(exitCode(results(35, 5))).toBe(1);
    expect(scoreLine(results(9, 0, 1))).toBe(
      'score: 9 of 10 mutants caught, 90.0 % (at least 90 % required); 0 survived, 1 timed out',
    );
    expect(exitCode(results(17, 0, 3))).toBe(1);
    expect(exitCode([])).toBe(1);
  });
});

const CAUGHT: Verdict = { outcome: 'caught', by: 'room.test.ts › within(1, 3): expect(received).toBe(expected)' };
const SURVIVED: Verdict = { outcome: 'survived' };
const TIMED_OUT: Verdict = { outcome: 'timed out', what: 'no end within 600 s (stopped)' };

/** jest-circus's first line for a test that met its timeout, as scripts/mutate-reporter.cjs prints it. */
const JEST_TIMEOUT = 'thrown: "Exceeded timeout of 120000 ms for a test.';

describe('npm run mutate’s verdict on a run of the tests', () => {
  it('tells a test that met its timeout from one that failed', () => {
    expect(byTimeout(`test/unit/simulation.test.ts › the simulator › POST queued: ${JEST_TIMEOUT}`)).toBe(true);
    expect(byTimeout('test/unit/x.test.ts › a hook: thrown: "Exceeded timeout of 5000 ms for a hook.')).toBe(true);
    expect(byTimeout('test/unit/x.test.ts › within(1, 3): expect(received).toBe(expected) // Object.is equality')).toBe(
      false,
    );
  });

  it('is caught by a test that failed, even after another met its timeout', () => {
    const failed = 'test/unit/x.test.ts › within(1, 3): expect(received).toBe(expected)';
    expect(verdictOf({ failed, code: null, lastError: '' })).toEqual({ outcome: 'caught', by: failed });
    expect(
      verdictOf({ failed, timedOut: `test/unit/y.test.ts › slow: ${JEST_TIMEOUT}`, code: null, lastError: '' }),
    ).toEqual({
      outcome: 'caught',
      by: failed,
    });
  });

  it('timed out, not caught, when the run met its bound or its only failures met their timeouts', () => {
    expect(verdictOf({ stoppedAtMs: 600_000, code: null, lastError: '' })).toEqual({
      outcome: 'timed out',
      what: 'no end within 600 s (stopped)',
    });
    const timedOut = `test/unit/simulation.test.ts › POST queued: ${JEST_TIMEOUT}`;
    expect(verdictOf({ timedOut, code: 1, lastError: '' })).toEqual({ outcome: 'timed out', what: timedOut });
  });

  it('survived when every test passed; caught, saying why, when jest failed with no test failing', () => {
    expect(verdictOf({ code: 0, lastError: '' })).toEqual({ outcome: 'survived' });
    expect(verdictOf({ code: 1, lastError: 'Error: DynamoDB Local on port 4567 exited with 1' })).toEqual({
      outcome: 'caught',
      by: 'jest exited with status 1 and no failing test: Error: DynamoDB Local on port 4567 exited with 1',
    });
  });

  it('runs the projects in turn until one catches the mutant; else timed out if one did; else survived', async () => {
    const ran: string[] = [];
    const run = (name: string, verdict: Verdict) => () => {
      ran.push(name);
      return Promise.resolve(verdict);
    };
    expect(await inTurn([run('simulation', CAUGHT), run('dynamodb', SURVIVED)])).toEqual(CAUGHT);
    expect(ran).toEqual(['simulation']);
    expect(await inTurn([run('simulation', TIMED_OUT), run('dynamodb', CAUGHT)])).toEqual(CAUGHT);
    expect(await inTurn([run('simulation', TIMED_OUT), run('dynamodb', SURVIVED)])).toEqual(TIMED_OUT);
    expect(await inTurn([run('simulation', SURVIVED), run('dynamodb', TIMED_OUT)])).toEqual(TIMED_OUT);
    expect(await inTurn([run('simulation', SURVIVED), run('dynamodb', SURVIVED)])).toEqual(SURVIVED);
  });

  it('stops a run on a mutant at a few times the same run with no mutant, and never sooner than RUN_WITHIN_MS', () => {
    // The simulator's and unit tests at a load of 4, then at a load of 20.
    expect(boundAfter(286_000)).toBe(SLOWER_AT_MOST * 286_000);
    expect(boundAfter(1_760_000)).toBe(SLOWER_AT_MOST * 1_760_000);
    // The dynamodb project at a load of 4: 104 s.
    expect(boundAfter(104_000)).toBe(RUN_WITHIN_MS);
  });

  it('reports a mutant that timed out apart from the caught and the survivors', () => {
    expect(resultLine({ mutant: STRICT, verdict: TIMED_OUT, seconds: 600 })).toBe(
      'TIMED OUT  strict (600 s), not a catch: no end within 600 s (stopped); lib/room.ts: the strict defect',
    );
  });
});
