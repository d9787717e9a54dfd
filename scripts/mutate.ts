import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DYNAMODB_ONLY, SIMULATION } from '../jest.config';
import { PROJECT_ROOT } from '../harness/project';
import { ONLY_A_HANG_MS } from '../test/support/bounds';
import { noPositionals, numberOption, oneOf, parseCommandLine, runTool } from './command-line';
import { MUTANTS } from './mutants';
import {
  MutantDoesNotApply,
  RUN_WITHIN_MS,
  boundAfter,
  byTimeout,
  exitCode,
  inTurn,
  notApplying,
  runMutants,
  scoreLine,
  verdictOf,
  type Mutant,
  type RunEnd,
  type Verdict,
} from './mutation';
import { FAILED } from './mutate-reporter.cjs';

/**
 * `npm run mutate`: how sharp the store's tests are (docs/testing.md, "How sharp the tests are").
 * Each defect of scripts/mutants.ts is put, alone, into a copy of the tree at HEAD (never this
 * checkout's files: others edit them), and the store's tests run on it (RUNS): the simulator's
 * search (the `simulation` project) and the unit files that import lib/dynamodb/ or lib/aws/, then
 * the `dynamodb` project, the unit tests on a DynamoDB Local of that run's own. The first test
 * that fails names the mutant caught, and jest is stopped there; a run that meets its bound, or
 * whose only failures met theirs, timed out, which is not a catch. Below 90 % caught, exit 1. A
 * full run is hours of the 2-core machine: not part of `npm test` nor of CI.
 */

const TOOL = 'npm run mutate';

const HELP = `Usage: ${TOOL} [-- --only <mutant> ...] [--jobs <n>] [--list] [--except <test> ...]

Puts each hand-made defect of scripts/mutants.ts, one at a time, into a copy of the tree at HEAD
(under ${tmpdir()}, node_modules linked), runs the store's tests on it and says which test caught
it, that it survived, or that it timed out. The tests, in turn until one fails: the simulator's
and the unit files that import lib/dynamodb/ or lib/aws/ (the simulation and unit projects), then
the dynamodb project on a DynamoDB Local of its own (Java 17). First, the same tests on the copy
unchanged: they must pass. A run on a mutant still going at four times what it took then (and at
least 600 s), or whose only failing tests met their timeouts, timed out: not a catch, counted
against the score. Exits 1 below 90 % caught, or when a mutant's text is no longer in its file
(the code changed: write the mutant again).

  --only <mutant>   that mutant alone (repeat for several); the whole list by default
  --jobs <n>        mutants tested at once, each in its own copy with its own DynamoDB Local
                    (default 1: each run of the simulator's tests keeps both cores of the
                    project's machine busy)
  --list            print the mutants, their files and why each is a defect, and stop
  --except <test>   leave out the tests whose full names contain this text (repeat for several):
                    for a test that fails on HEAD itself, a defect already found; the run names it
  -h, --help        print this text
`;

const OPTIONS = {
  only: { type: 'string', multiple: true },
  jobs: { type: 'string', default: '1' },
  list: { type: 'boolean', default: false },
  except: { type: 'string', multiple: true },
} as const;

/**
 * The simulation and unit projects' files a mutant can fail: the simulator's search, and the unit
 * files that import the store's or AWS's code and need no Java.
 */
function testFiles(tree: string): string[] {
  const dir = join(tree, 'test/unit');
  const unit = readdirSync(dir)
    .filter((file) => file.endsWith('.test.ts'))
    .filter((file) => ![...DYNAMODB_ONLY, ...SIMULATION].includes(file.replace('.test.ts', '')))
    .filter((file) => /from '\.\.\/\.\.\/lib\/(?:dynamodb|aws)\//.test(readFileSync(join(dir, file), 'utf8')));
  return [...SIMULATION.map((name) => `test/unit/${name}.test.ts`), ...unit.map((file) => `test/unit/${file}`)];
}

/** One run of jest on a tree: projects, and the files of theirs it runs (all when absent). */
interface Run {
  readonly name: string;
  readonly projects: readonly string[];
  readonly files?: (tree: string) => string[];
}

/**
 * The store's tests, in the order they are run on a mutant: the first that fails stops the rest.
 * The simulator's tests first, with the unit files that need no Java; then the dynamodb project:
 * the files of every store (EVERY_STORE) and DynamoDB's own (DYNAMODB_ONLY) on DynamoDB Local,
 * which its global setup starts for that run alone (in memory, on a free port) and stops with it.
 * Each run's bound on a mutant comes from its run with no mutant (`boundAfter`).
 */
const RUNS: readonly Run[] = [
  { name: 'simulation and unit', projects: ['simulation', 'unit'], files: testFiles },
  { name: 'dynamodb', projects: ['dynamodb'] },
];

/** The jest runs in flight, by their process groups: stopped with the command. */
const running = new Set<ChildProcess>();

function stop(child: ChildProcess): void {
  if (child.pid !== undefined && child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

/**
 * jest on `tree`: one of RUNS, stopped at the first test that fails other than by its timeout
 * (scripts/mutate-reporter.cjs prints each as it fails), or at `withinMs`. Its own cache
 * (`cache`), so that this checkout's is not written from another tree's files.
 */
function runJest(tree: string, cache: string, except: readonly string[], run: Run, withinMs: number): Promise<Verdict> {
  const env: NodeJS.ProcessEnv = { ...process.env, DISABLE_V8_COMPILE_CACHE: '1', FORCE_COLOR: '0' };
  // As `npm run test:simulation` runs: the simulator's worker threads keep tsx's cache.
  delete env.TSX_DISABLE_CACHE;
  const child = spawn(
    process.execPath,
    [
      join(tree, 'node_modules/jest/bin/jest.js'),
      // No --bail: a file whose only failures met their timeouts is no catch, and the next file may be.
      '--ci',
      '--cacheDirectory',
      cache,
      '--reporters',
      // This checkout's: the tree is HEAD's, which may not have this command yet.
      join(__dirname, 'mutate-reporter.cjs'),
      // jest runs the tests whose full names match: here, those that contain none of `except`.
      ...(except.length === 0 ? [] : ['--testNamePattern', `^(?!.*(?:${except.map(escaped).join('|')}))`]),
      '--selectProjects',
      ...run.projects,
      ...(run.files === undefined ? [] : ['--runTestsByPath', ...run.files(tree)]),
    ],
    { cwd: tree, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  running.add(child);
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const end: { -readonly [K in keyof RunEnd]?: RunEnd[K] } = {};
    const timer = setTimeout(() => {
      end.stoppedAtMs = withinMs;
      stop(child);
    }, withinMs);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const lines = stdout.split('\n');
      stdout = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith(FAILED) || end.failed !== undefined) continue;
        const failure = line.slice(FAILED.length);
        if (byTimeout(failure)) {
          // Not a catch: the run goes on, and another test may yet fail.
          end.timedOut ??= failure;
          continue;
        }
        end.failed = failure;
        stop(child);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      resolve(verdictOf({ ...end, code, lastError: stderr.trim().split('\n').at(-1) ?? '' }));
    });
  });
}

/** Every run of RUNS on `tree`, in turn until one catches the mutant, each within its bound. */
function runTests(
  tree: string,
  cache: string,
  except: readonly string[],
  bounds: ReadonlyMap<Run, number>,
): Promise<Verdict> {
  return inTurn(RUNS.map((run) => () => runJest(tree, cache, except, run, bounds.get(run) ?? RUN_WITHIN_MS)));
}

/** `text` as a regular expression that matches it alone. */
function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A copy of the tree at HEAD, with this checkout's node_modules linked: what the mutants are put into. */
function copyOfHead(into: string): string {
  mkdirSync(into);
  const archive = execFileSync('git', ['archive', 'HEAD'], { cwd: PROJECT_ROOT, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', into], { input: archive });
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(into, 'node_modules'));
  return into;
}

function describeMutants(mutants: readonly Mutant[]): string {
  return mutants.map(({ id, file, why }) => `${id}\n  ${file}: ${why}\n`).join('');
}

async function main(): Promise<number> {
  const parsed = parseCommandLine(process.argv.slice(2), OPTIONS, TOOL);
  if (parsed === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const { values } = parsed;
  noPositionals(parsed.positionals, TOOL);
  const ids = MUTANTS.map(({ id }) => id);
  const only = (values.only ?? []).map((id) => oneOf(id, ids, 'mutant', TOOL));
  const jobs = numberOption(values.jobs, 'jobs', { min: 1, whole: true }, TOOL);
  const except = values.except ?? [];
  const mutants = only.length === 0 ? MUTANTS : MUTANTS.filter(({ id }) => only.includes(id));
  if (values.list) {
    process.stdout.write(describeMutants(mutants));
    return 0;
  }

  const work = mkdtempSync(join(tmpdir(), 'todo-mutate-'));
  function cleanUp(): void {
    running.forEach(stop);
    rmSync(work, { recursive: true, force: true });
  }
  function interrupted(): void {
    cleanUp();
    process.exit(130);
  }
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: PROJECT_ROOT }).toString().trim();
    const trees = Array.from({ length: Math.min(jobs, mutants.length) }, (_, i) => copyOfHead(join(work, `tree-${i}`)));
    const [first] = trees;
    if (first === undefined) return 1;
    // Before the tests' first run: a mutant the code no longer has would otherwise show only after it.
    const problems = notApplying(first, mutants);
    if (problems.length > 0) throw new MutantDoesNotApply(problems.join('\n'));
    const cache = join(work, 'jest-cache');
    console.log(`${mutants.length} mutants on a copy of ${head}, ${trees.length} at a time; tests, in turn:`);
    for (const run of RUNS)
      console.log(
        `  ${run.name}: ${run.files === undefined ? 'every file of the project' : run.files(first).join(', ')}`,
      );
    const started = performance.now();
    if (except.length > 0)
      console.log(`tests left out: those whose names contain ${except.map((text) => `"${text}"`).join(' or ')}`);
    const bounds = new Map<Run, number>();
    for (const run of RUNS) {
      const runStarted = performance.now();
      // Work of a length not known yet: only a hang stops it (test/support/bounds.ts).
      const baseline = await runJest(first, cache, except, run, ONLY_A_HANG_MS);
      if (baseline.outcome === 'caught') {
        console.error(`The tests fail on the tree with no mutant (${run.name}): ${baseline.by}`);
        return 1;
      }
      if (baseline.outcome === 'timed out') {
        console.error(`The tests timed out on the tree with no mutant (${run.name}): ${baseline.what}`);
        return 1;
      }
      const tookMs = performance.now() - runStarted;
      bounds.set(run, boundAfter(tookMs));
      console.log(
        `no mutant: ${run.name} pass (${(tookMs / 1000).toFixed(0)} s; ` +
          `on a mutant, stopped at ${(boundAfter(tookMs) / 1000).toFixed(0)} s)`,
      );
    }
    const results = await runMutants(
      trees,
      mutants,
      (tree) => runTests(tree, cache, except, bounds),
      (line) => {
        console.log(line);
      },
    );
    console.log(scoreLine(results));
    console.log(`took ${((performance.now() - started) / 1000).toFixed(0)} s`);
    return exitCode(results);
  } catch (error) {
    if (!(error instanceof MutantDoesNotApply)) throw error;
    console.error(
      `Mutants that no longer apply (the code changed; write them again in scripts/mutants.ts):\n${error.message}`,
    );
    return 1;
  } finally {
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
    cleanUp();
  }
}

runTool(main);
