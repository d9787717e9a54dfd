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

/**
 * What the tests said of a tree: caught (the first test that failed other than by a timeout, and
 * its first line), survived (every test passed), or timed out (the run met its own bound, or its
 * only failures were tests that met theirs). A timeout is not a catch: a machine that other jobs
 * keep busy meets a bound as a defect that hangs does (under load, a 120 s bound once failed a
 * search with no mutant in it), so a mutant that timed out counts against the score, as a
 * survivor does, and is reported apart.
 */
export type Verdict =
  | { readonly outcome: 'caught'; readonly by: string }
  | { readonly outcome: 'survived' }
  | { readonly outcome: 'timed out'; readonly what: string };

/** How one run of the tests ended, as scripts/mutate.ts watched it. */
export interface RunEnd {
  /** The first test that failed other than by its timeout: its file, name and first line (scripts/mutate-reporter.cjs). */
  readonly failed?: string;
  /** The first test that failed by its timeout. */
  readonly timedOut?: string;
  /** The run's own bound, in ms, when the run was stopped there. */
  readonly stoppedAtMs?: number;
  /** Its exit status; null when it was stopped by a signal. */
  readonly code: number | null;
  /** The last line it wrote to stderr: why it failed when no test did. */
  readonly lastError: string;
}

/** jest's message for a test or hook that met its timeout (jest-circus): "Exceeded timeout of 120000 ms for a test." */
const JEST_TIMEOUT = /Exceeded timeout of \d+ ms for a (?:test|hook)/;

/** Whether a failing test's line (scripts/mutate-reporter.cjs) says it failed by meeting its timeout. */
export function byTimeout(failure: string): boolean {
  return JEST_TIMEOUT.test(failure);
}

/** The verdict of one run of the tests, from how it ended. */
export function verdictOf({ failed, timedOut, stoppedAtMs, code, lastError }: RunEnd): Verdict {
  if (failed !== undefined) return { outcome: 'caught', by: failed };
  if (stoppedAtMs !== undefined)
    return { outcome: 'timed out', what: `no end within ${stoppedAtMs / 1000} s (stopped)` };
  if (timedOut !== undefined) return { outcome: 'timed out', what: timedOut };
  if (code === 0) return { outcome: 'survived' };
  // jest failed with no test failing (its config, a global setup): say what it printed.
  return { outcome: 'caught', by: `jest exited with status ${code ?? 'none'} and no failing test: ${lastError}` };
}

/**
 * The least a run of the tests on a mutant may take before it is stopped, timed out: a defect
 * that hangs the store hangs the tests.
 */
export const RUN_WITHIN_MS = 600_000;
/**
 * How many times its run with no mutant, on the same machine at the start of the command, a run
 * on a mutant may take before it is stopped: a bound fixed in seconds is a race with the
 * machine's load (the simulator's tests took 286 s at a load of 4 and half an hour at a load of
 * 20), and a mutant's run does the same work as the unmutated one unless its defect hangs or
 * loops.
 */
export const SLOWER_AT_MOST = 4;

/** The bound of a run on a mutant, from how long the same run took with no mutant. */
export function boundAfter(baselineMs: number): number {
  return Math.max(RUN_WITHIN_MS, Math.ceil(SLOWER_AT_MOST * baselineMs));
}

/**
 * The verdict of several runs of the tests on one tree (scripts/mutate.ts runs a jest project or
 * two in each), run one after another until one catches the mutant: caught; else timed out if a
 * run timed out (the first such); else survived.
 */
export async function inTurn(runs: readonly (() => Promise<Verdict>)[]): Promise<Verdict> {
  let timedOut: Verdict | undefined;
  for (const run of runs) {
    const verdict = await run();
    if (verdict.outcome === 'caught') return verdict;
    if (verdict.outcome === 'timed out') timedOut ??= verdict;
  }
  return timedOut ?? { outcome: 'survived' };
}

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
  switch (verdict.outcome) {
    case 'caught':
      return `caught     ${mutant.id} (${took}) by ${verdict.by}`;
    case 'timed out':
      return `TIMED OUT  ${mutant.id} (${took}), not a catch: ${verdict.what}; ${mutant.file}: ${mutant.why}`;
    case 'survived':
      return `SURVIVED   ${mutant.id} (${took}): ${mutant.file}: ${mutant.why}`;
  }
}

function count(results: readonly Result[], outcome: Verdict['outcome']): number {
  return results.filter(({ verdict }) => verdict.outcome === outcome).length;
}

/** The score: how many of the results were caught, of how many, against what it must reach; and how the others ended. */
export function scoreLine(results: readonly Result[]): string {
  const caught = count(results, 'caught');
  const percent = results.length === 0 ? 0 : (100 * caught) / results.length;
  return (
    `score: ${caught} of ${results.length} mutants caught, ${percent.toFixed(1)} % (at least ${100 * REQUIRED_SCORE} % required); ` +
    `${count(results, 'survived')} survived, ${count(results, 'timed out')} timed out`
  );
}

/** 0 when the run caught at least REQUIRED_SCORE of its mutants (one that timed out is not caught), else 1. */
export function exitCode(results: readonly Result[]): number {
  return results.length > 0 && count(results, 'caught') >= REQUIRED_SCORE * results.length ? 0 : 1;
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
