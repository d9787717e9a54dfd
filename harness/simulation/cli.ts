import { parseArgs } from 'node:util';
import { exhaustive, parseScript, randomRuns, report, scriptText } from './explore';
import type { Step } from './network';
import { SCENARIOS } from './scenarios';
import { run } from './world';

/**
 * `npm run simulate`: the deterministic simulator of the DynamoDB store (docs/testing.md, "The
 * simulator"). By default, every scenario's exhaustive search to depth 5, then 1,000 random seeds
 * each. `--scenario NAME` for one; `--depth N`; `--seeds N`; `--script S --seed N` (or `--rate R --seed N`, a workload's) replays one
 * run and prints its trace.
 */

const USAGE = `usage: npm run simulate -- [--scenario NAME] [--depth N] [--seeds N] [--script FAULTS | --rate R] [--seed N]
scenarios: ${Object.keys(SCENARIOS).join('; ')}`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string' },
      depth: { type: 'string', default: '5' },
      seeds: { type: 'string', default: '1000' },
      script: { type: 'string' },
      rate: { type: 'string' },
      seed: { type: 'string', default: '1' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const names = values.scenario === undefined ? Object.keys(SCENARIOS) : [values.scenario];
  for (const name of names) {
    if (SCENARIOS[name] === undefined) {
      console.error(`no scenario "${name}"\n${USAGE}`);
      return 2;
    }
  }
  if (values.rate !== undefined) return replay(names[0] ?? '', { rate: Number(values.rate) }, Number(values.seed));
  if (values.script !== undefined) return replay(names[0] ?? '', parseScript(values.script), Number(values.seed));
  let failed = false;
  for (const name of names) {
    const started = performance.now();
    const searched = await exhaustive(name, Number(values.depth));
    const sampled = searched.failure
      ? undefined
      : await randomRuns(name, 1, Number(values.seeds), Number(values.depth));
    const runs = searched.runs + (sampled?.runs ?? 0);
    const seconds = (performance.now() - started) / 1000;
    const failure = searched.failure ?? sampled?.failure;
    console.log(
      `${name}: ${searched.runs} exhaustive runs to depth ${values.depth}, ${sampled?.runs ?? 0} random; ` +
        `${Math.round(runs / seconds)} runs/s; ${failure ? 'FAILED' : 'ok'}`,
    );
    if (failure) {
      console.log(report(failure));
      failed = true;
    }
  }
  return failed ? 1 : 0;
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

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
