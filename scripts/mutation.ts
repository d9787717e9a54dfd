import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * How `npm run mutate` measures the tests' teeth (docs/testing.md, "How sharp the tests are"): a
 * list of hand-made defects (scripts/mutants.ts), each put into a copy of the tree alone, the tests
 * run on it, and the copy put back. A mutant the tests fail on is caught; one they pass is a
 * survivor. The tests are given as a function, so that this mechanism is tested on a tiny fixture
 * (test/unit/mutation.test.ts) and the command (scripts/mutate.ts) runs jest with it.
 */

/** One realistic defect: in `file`, the text `find` (there exactly once) becomes `replace`. */
export interface Mutant {
  readonly id: string;
  /** Relative to the tree's root. */
  readonly file: string;
  readonly find: string;
  readonly replace: string;
  /** What the defect would do, were it shipped. */
  readonly why: string;
}

/** A mutant whose text is not in its file exactly once: the code changed, and the mutant is to be written again. */
export class MutantDoesNotApply extends Error {
  override readonly name = 'MutantDoesNotApply';
}

/** `source` with the mutant's text replaced. Throws MutantDoesNotApply unless the text is there exactly once. */
export function mutated(source: string, mutant: Mutant): string {
  const at = source.indexOf(mutant.find);
  // Missing, it would measure nothing; twice, the defect put in might not be the one described.
  if (at < 0) throw new MutantDoesNotApply(`${mutant.id}: its text is no longer in ${mutant.file}`);
  if (source.includes(mutant.find, at + 1))
    throw new MutantDoesNotApply(`${mutant.id}: its text is in ${mutant.file} more than once`);
  return source.slice(0, at) + mutant.replace + source.slice(at + mutant.find.length);
}

/** Why each of `mutants` does not apply to the tree at `root`: none when all do. */
export function notApplying(root: string, mutants: readonly Mutant[]): string[] {
  return mutants.flatMap((mutant) => {
    try {
      mutated(readFileSync(join(root, mutant.file), 'utf8'), mutant);
      return [];
    } catch (error) {
      return [error instanceof Error ? error.message : String(error)];
    }
  });
}

/** What the tests said of a tree: a failure (the first test that failed, and its first line), or all passed. */
export type Verdict = { readonly caught: true; readonly by: string } | { readonly caught: false };

/** Runs the tests on the tree at `root`. */
export type RunTests = (root: string) => Promise<Verdict>;

export interface Result {
  readonly mutant: Mutant;
  readonly verdict: Verdict;
  readonly seconds: number;
}

/** The share of mutants a run must catch, or it fails (issue 41). */
export const REQUIRED_SCORE = 0.9;

/** One line per mutant, as it ends. */
export function resultLine({ mutant, verdict, seconds }: Result): string {
  const took = `${seconds.toFixed(0)} s`;
  return verdict.caught
    ? `caught    ${mutant.id} (${took}) by ${verdict.by}`
    : `SURVIVED  ${mutant.id} (${took}): ${mutant.file}: ${mutant.why}`;
}

/** The score: how many of the results were caught, of how many, and against what it must reach. */
export function scoreLine(results: readonly Result[]): string {
  const caught = results.filter(({ verdict }) => verdict.caught).length;
  const percent = results.length === 0 ? 0 : (100 * caught) / results.length;
  return `score: ${caught} of ${results.length} mutants caught, ${percent.toFixed(1)} % (at least ${100 * REQUIRED_SCORE} % required)`;
}

/** 0 when the run caught at least REQUIRED_SCORE of its mutants, else 1. */
export function exitCode(results: readonly Result[]): number {
  const caught = results.filter(({ verdict }) => verdict.caught).length;
  return results.length > 0 && caught >= REQUIRED_SCORE * results.length ? 0 : 1;
}

/**
 * Each mutant put into one of `trees` (copies of the project; one mutant at a time in each, as
 * many at once as there are trees), the tests run there, and the file put back as it was, whatever
 * the tests did. `print` hears each result as it ends; the results come back in `mutants`' order.
 * Throws MutantDoesNotApply, before any test runs, when a mutant's text is not in its file once.
 */
export async function runMutants(
  trees: readonly string[],
  mutants: readonly Mutant[],
  runTests: RunTests,
  print: (line: string) => void,
): Promise<Result[]> {
  const [first] = trees;
  if (first === undefined) throw new Error('no tree to mutate');
  const problems = notApplying(first, mutants);
  if (problems.length > 0) throw new MutantDoesNotApply(problems.join('\n'));
  const results = new Map<Mutant, Result>();
  // One iterator for every tree: each takes the next mutant the others have not.
  const queue = mutants.values();
  async function work(tree: string): Promise<void> {
    for (const mutant of queue) {
      const path = join(tree, mutant.file);
      const original = readFileSync(path, 'utf8');
      const started = performance.now();
      writeFileSync(path, mutated(original, mutant));
      try {
        const verdict = await runTests(tree);
        const result = { mutant, verdict, seconds: (performance.now() - started) / 1000 };
        results.set(mutant, result);
        print(resultLine(result));
      } finally {
        writeFileSync(path, original);
      }
    }
  }
  await Promise.all(trees.map(work));
  return mutants.flatMap((mutant) => results.get(mutant) ?? []);
}
