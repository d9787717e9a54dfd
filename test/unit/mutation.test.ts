import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  MutantDoesNotApply,
  exitCode,
  mutated,
  notApplying,
  runMutants,
  scoreLine,
  type Mutant,
  type Result,
} from '../../scripts/mutation';

/**
 * The mechanism of `npm run mutate` (scripts/mutation.ts) on a tiny tree of its own: a mutant is
 * put in alone, the tests see it, the file is put back, a mutant whose text is gone stops the run
 * before any test, and the score decides the exit status. The tests here are a function that reads
 * the tree; the command's own (jest on the simulator) are an hour's run, never started here.
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
          source.includes('used >= room') ? { caught: true, by: 'room.test.ts › within(1, 3)' } : { caught: false },
        );
      },
      (line) => seen.push(line),
    );
    expect(seen).toEqual([
      mutated(SOURCE, FLIPPED),
      expect.stringMatching(/^caught {4}flipped \(\d+ s\) by room\.test\.ts › within\(1, 3\)$/),
      mutated(SOURCE, STRICT),
      expect.stringMatching(/^SURVIVED {2}strict \(\d+ s\): lib\/room\.ts: the strict defect$/),
    ]);
    expect(results.map(({ mutant: { id }, verdict }) => ({ id, caught: verdict.caught }))).toEqual([
      { id: 'flipped', caught: true },
      { id: 'strict', caught: false },
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
    const tests = (): Promise<{ caught: false }> => {
      runs++;
      return Promise.resolve({ caught: false });
    };
    await expect(
      runMutants([tree], [FLIPPED, mutant('gone', 'used < room', '')], tests, () => undefined),
    ).rejects.toThrow(new MutantDoesNotApply('gone: its text is no longer in lib/room.ts'));
    expect(runs).toBe(0);
  });

  it('scores the run, and fails it below 90 % caught', () => {
    const results = (caught: number, survived: number): Result[] => [
      ...Array.from({ length: caught }, () => ({
        mutant: FLIPPED,
        verdict: { caught: true as const, by: 'a test' },
        seconds: 1,
      })),
      ...Array.from({ length: survived }, () => ({ mutant: STRICT, verdict: { caught: false as const }, seconds: 1 })),
    ];
    expect(scoreLine(results(9, 1))).toBe('score: 9 of 10 mutants caught, 90.0 % (at least 90 % required)');
    expect(exitCode(results(9, 1))).toBe(0);
    expect(scoreLine(results(35, 5))).toBe('score: 35 of 40 mutants caught, 87.5 % (at least 90 % required)');
    expect(exitCode(results(35, 5))).toBe(1);
    expect(exitCode([])).toBe(1);
  });
});
