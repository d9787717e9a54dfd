import { availableParallelism } from 'node:os';
import {
  CommandLineError,
  noPositionals,
  numberOption,
  oneOf,
  parseCommandLine,
  runTool,
} from '../../scripts/command-line';
import { parseScript, scriptText, searchAll } from './explore';
import type { Step } from './network';
import { SCENARIOS } from './scenarios';
import { run } from './world';

/**
 * `npm run simulate`: the deterministic simulator of the DynamoDB store (docs/testing.md, "The
 * simulator"). By default, every scenario's exhaustive search to depth 3, a read's faults and a
 * connection's resets to 2 (the test's), then 1,000 random seeds each (ten times the test's), as
 * many scenarios at once as the machine has cores: a few minutes on the project's 2-core machine,
 * within its budget of 15 even when other jobs load it. Each depth more is many times the scripts: 4 and 5 by flag. It
 * stops at the first failure, with the command that replays it, exit 1. `--scenario NAME` for
 * one; `--depth N`; `--read-depth N`; `--seeds N`; `--jobs N`; `--script S --seed N` (or
 * `--rate R --seed N`, a workload's) replays one run and prints its trace.
 */

const TOOL = 'npm run simulate';

const USAGE = `usage: ${TOOL} -- [--scenario NAME] [--depth N] [--read-depth N] [--seeds N] [--jobs N] [--script FAULTS | --rate R] [--seed N]
scenarios: ${Object.keys(SCENARIOS).join('; ')}`;

const OPTIONS = {
  scenario: { type: 'string' },
  depth: { type: 'string', default: '3' },
  // A read's faults and a reset's in scripts of up to this many faults (at most --depth): the test's 2.
  'read-depth': { type: 'string', default: '2' },
  seeds: { type: 'string', default: '1000' },
  script: { type: 'string' },
  rate: { type: 'string' },
  seed: { type: 'string', default: '1' },
  // Scenarios searched at once, each in a worker thread: they share nothing.
  jobs: { type: 'string', default: String(availableParallelism()) },
} as const;

/** --depth, --seeds and --seed: a count of steps or runs, or a seed. */
const WHOLE = { min: 0, whole: true } as const;

async function main(): Promise<number> {
  const parsed = parseCommandLine(process.argv.slice(2), OPTIONS, TOOL);
  if (parsed === 'help') {
    console.log(USAGE);
    return 0;
  }
  const { values } = parsed;
  noPositionals(parsed.positionals, TOOL);
  const names =
    values.scenario === undefined
      ? Object.keys(SCENARIOS)
      : [oneOf(values.scenario, Object.keys(SCENARIOS), 'scenario', TOOL)];
  const depth = numberOption(values.depth, 'depth', WHOLE, TOOL);
  const readDepth = numberOption(values['read-depth'], 'read-depth', WHOLE, TOOL);
  const seeds = numberOption(values.seeds, 'seeds', WHOLE, TOOL);
  const seed = numberOption(values.seed, 'seed', WHOLE, TOOL);
  if (values.rate !== undefined && values.script !== undefined) {
    throw new CommandLineError(
      `--script and --rate each choose the faults of a replay: give one or the other (${TOOL} -- --help)`,
    );
  }
  // A fault's chance at each copy of a write: a probability.
  if (values.rate !== undefined)
    return replay(
      names[0] ?? '',
      { rate: numberOption(values.rate, 'rate', { min: 0, max: 1, whole: false }, TOOL) },
      seed,
    );
  if (values.script !== undefined) return replay(names[0] ?? '', faultScript(values.script), seed);
  const jobs = numberOption(values.jobs, 'jobs', { min: 1, whole: true }, TOOL);
  const failure = await searchAll(names, { depth, readDepth, seeds, jobs }, (line) => {
    console.log(line);
  });
  return failure ? 1 : 0;
}

/** `--script`'s faults; a fault the simulator does not know is the command line's mistake. */
function faultScript(text: string): readonly Step[] {
  try {
    return parseScript(text);
  } catch (error) {
    throw new CommandLineError(
      `--script: ${error instanceof Error ? error.message : String(error)} (${TOOL} -- --help)`,
    );
  }
}

async function replay(name: string, faults: readonly Step[] | { rate: number }, seed: number): Promise<number> {
  const scenario = SCENARIOS[name];
  if (scenario === undefined) return 2;
  const result = await run(scenario, faults, seed);
  console.log(
    `${name}, ${'rate' in faults ? `faults at ${faults.rate}` : `script ${scriptText(faults)}`}, seed ${seed}:`,
  );
  for (const line of result.trace) console.log(`  ${line}`);
  console.log(result.violations.length === 0 ? 'ok' : `FAILED: ${result.violations.join('; ')}`);
  return result.violations.length === 0 ? 0 : 1;
}

runTool(main);
