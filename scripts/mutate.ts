import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DYNAMODB_ONLY, SIMULATION } from '../jest.config';
import { PROJECT_ROOT } from '../harness/project';
import { noPositionals, numberOption, oneOf, parseCommandLine, runTool } from './command-line';
import { MUTANTS } from './mutants';
import {
  MutantDoesNotApply,
  exitCode,
  notApplying,
  runMutants,
  scoreLine,
  type Mutant,
  type Verdict,
} from './mutation';
import { CAUGHT } from './mutate-reporter.cjs';

/**
 * `npm run mutate`: how sharp the store's tests are (docs/testing.md, "How sharp the tests are").
 * Each defect of scripts/mutants.ts is put, alone, into a copy of the tree at HEAD (never this
 * checkout's files: others edit them), and the tests that need no Java run on it: the simulator's
 * search (the `simulation` project) and the unit files that import lib/dynamodb/ or lib/aws/. The
 * first failing test names the mutant caught, and jest is stopped there. Below 90 % caught, exit 1.
 * A full run is about an hour of the 2-core machine: not part of `npm test` nor of CI.
 */

const TOOL = 'npm run mutate';

const HELP = `Usage: ${TOOL} [-- --only <mutant> ...] [--jobs <n>] [--list] [--except <test> ...]

Puts each hand-made defect of scripts/mutants.ts, one at a time, into a copy of the tree at HEAD
(under ${tmpdir()}, node_modules linked), runs the simulator's tests and the store's unit tests
that need no Java on it, and says which test caught it, or that it survived. First, the same
tests on the copy unchanged: they must pass. Exits 1 below 90 % caught, or when a mutant's text
is no longer in its file (the code changed: write the mutant again).

  --only <mutant>   that mutant alone (repeat for several); the whole list by default
  --jobs <n>        mutants tested at once, each in its own copy (default 1: each run of the
                    simulator's tests keeps both cores of the project's machine busy)
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
 * How long one jest run may take before it counts as caught (a defect that hangs the store hangs
 * the tests): the simulator's tests take about 95 s of CPU, 152 s wall at a load of 10 on the
 * 2-core machine; four times that.
 */
const RUN_WITHIN_MS = 600_000;

/** The unit test files a mutant can fail: those that import the store's or AWS's code and need no Java. */
function testFiles(tree: string): string[] {
  const dir = join(tree, 'test/unit');
  const unit = readdirSync(dir)
    .filter((file) => file.endsWith('.test.ts'))
    .filter((file) => ![...DYNAMODB_ONLY, ...SIMULATION].includes(file.replace('.test.ts', '')))
    .filter((file) => /from '\.\.\/\.\.\/lib\/(?:dynamodb|aws)\//.test(readFileSync(join(dir, file), 'utf8')));
  return [...SIMULATION.map((name) => `test/unit/${name}.test.ts`), ...unit.map((file) => `test/unit/${file}`)];
}

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
 * jest on `tree`: the simulation and unit projects' files that `testFiles` names, stopped at the
 * first failing test (scripts/mutate-reporter.cjs prints it), or at RUN_WITHIN_MS. Its own cache
 * (`cache`), so that this checkout's is not written from another tree's files.
 */
function runJest(tree: string, cache: string, except: readonly string[]): Promise<Verdict> {
  const env: NodeJS.ProcessEnv = { ...process.env, DISABLE_V8_COMPILE_CACHE: '1', FORCE_COLOR: '0' };
  // As `npm run test:simulation` runs: the simulator's worker threads keep tsx's cache.
  delete env.TSX_DISABLE_CACHE;
  const child = spawn(
    process.execPath,
    [
      join(tree, 'node_modules/jest/bin/jest.js'),
      '--ci',
      '--bail',
      '--selectProjects',
      'simulation',
      'unit',
      '--cacheDirectory',
      cache,
      '--reporters',
      // This checkout's: the tree is HEAD's, which may not have this command yet.
      join(__dirname, 'mutate-reporter.cjs'),
      // jest runs the tests whose full names match: here, those that contain none of `except`.
      ...(except.length === 0 ? [] : ['--testNamePattern', `^(?!.*(?:${except.map(escaped).join('|')}))`]),
      '--runTestsByPath',
      ...testFiles(tree),
    ],
    { cwd: tree, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  running.add(child);
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    let verdict: Verdict | undefined;
    const timer = setTimeout(() => {
      verdict ??= { caught: true, by: `no end within ${RUN_WITHIN_MS / 1000} s (stopped)` };
      stop(child);
    }, RUN_WITHIN_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((text) => text.startsWith(CAUGHT));
      if (line === undefined || verdict !== undefined) return;
      verdict = { caught: true, by: line.slice(CAUGHT.length) };
      stop(child);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      if (verdict !== undefined) resolve(verdict);
      else if (code === 0) resolve({ caught: false });
      else {
        // jest failed with no test failing (its config, a global setup): say what it printed.
        const last = stderr.trim().split('\n').at(-1) ?? '';
        resolve({ caught: true, by: `jest exited with status ${code ?? 'none'} and no failing test: ${last}` });
      }
    });
  });
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
    console.log(
      `${mutants.length} mutants on a copy of ${head}, ${trees.length} at a time; tests: ${testFiles(first).join(', ')}`,
    );
    const started = performance.now();
    if (except.length > 0)
      console.log(`tests left out: those whose names contain ${except.map((text) => `"${text}"`).join(' or ')}`);
    const baseline = await runJest(first, cache, except);
    if (baseline.caught) {
      console.error(`The tests fail on the tree with no mutant: ${baseline.by}`);
      return 1;
    }
    console.log(`no mutant: the tests pass (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    const results = await runMutants(
      trees,
      mutants,
      (tree) => runJest(tree, cache, except),
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
