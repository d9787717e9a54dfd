import { ALPHABET, type Step } from './network';
import { SCENARIOS, WORKLOADS } from './scenarios';
import { run, seeded, type RunResult } from './world';

/**
 * The two searches of the simulator. Exhaustive: for one scenario, every script of up to `depth`
 * faults, shortest first, each fault on the next copy of a write, a held copy landing at each
 * place among the copies after it; a script is extended only when its run sent a copy past its
 * last fault (a longer one would meet nothing more). So the first failure found is a shortest one.
 * Random: many seeds, each a script drawn from the seed.
 */

/** A script as text, for a trace and for the command that replays it: `held+1,throttle,500 after`. */
export function scriptText(script: readonly Step[]): string {
  return script
    .map(({ fault, landsAfter }) =>
      fault === 'held' ? `held+${landsAfter === Infinity ? 'end' : String(landsAfter)}` : fault,
    )
    .join(',');
}

export function parseScript(text: string): Step[] {
  if (text.trim() === '') return [];
  return text.split(',').map((part) => {
    const [fault, landing] = part.trim().split('+');
    const step = ALPHABET.find(
      (candidate) =>
        candidate.fault === fault &&
        (landing === undefined || String(candidate.landsAfter === Infinity ? 'end' : candidate.landsAfter) === landing),
    );
    if (step === undefined)
      throw new Error(`no fault "${part}" (known: ${ALPHABET.map((s) => scriptText([s])).join(', ')})`);
    return step;
  });
}

export interface Failure {
  readonly scenario: string;
  /** The script its copies met, or the rate its faults were drawn at. */
  readonly script: readonly Step[] | { readonly rate: number };
  readonly seed: number;
  readonly result: RunResult;
}

export interface Explored {
  readonly runs: number;
  readonly failure?: Failure;
}

/**
 * Every script of up to `depth` faults for `scenario` (a workload's, of one), shortest first; stops
 * at the first failure.
 */
export async function exhaustive(scenario: string, depth: number, seed = 1): Promise<Explored> {
  const run1 = SCENARIOS[scenario];
  if (run1 === undefined) throw new Error(`no scenario "${scenario}"`);
  if (WORKLOADS.includes(scenario)) depth = Math.min(depth, 1);
  let frontier: Step[][] = [[]];
  let runs = 0;
  for (let length = 0; length <= depth && frontier.length > 0; length++) {
    const next: Step[][] = [];
    for (const script of frontier) {
      const result = await run(run1, script, seed);
      runs++;
      if (result.violations.length > 0) return { runs, failure: { scenario, script, seed, result } };
      if (result.writesSent > script.length) next.push(...ALPHABET.map((step) => [...script, step]));
    }
    frontier = next;
  }
  return { runs };
}

/**
 * The share of a workload's copies of writes that meet a fault, each drawn from the alphabet: far
 * above what DynamoDB gives on a good day, so that a few hundred seeds meet every kind many times.
 */
export const WORKLOAD_FAULT_RATE = 0.1;

/**
 * `count` runs of `scenario` from consecutive seeds: for a request, a script of `depth` faults drawn
 * from its seed; for a workload, faults drawn at WORKLOAD_FAULT_RATE on every copy.
 */
export async function randomRuns(scenario: string, firstSeed: number, count: number, depth: number): Promise<Explored> {
  const run1 = SCENARIOS[scenario];
  if (run1 === undefined) throw new Error(`no scenario "${scenario}"`);
  for (let seed = firstSeed; seed < firstSeed + count; seed++) {
    const script = WORKLOADS.includes(scenario) ? { rate: WORKLOAD_FAULT_RATE } : scriptFrom(seed, depth);
    const result = await run(run1, script, seed);
    if (result.violations.length > 0)
      return { runs: seed - firstSeed + 1, failure: { scenario, script, seed, result } };
  }
  return { runs: count };
}

/** A script of `depth` faults drawn from `seed`, one for each of the first copies of writes. */
export function scriptFrom(seed: number, depth: number): Step[] {
  const random = seeded(seed * 7919);
  return Array.from({ length: depth }, () => ALPHABET[Math.floor(random() * ALPHABET.length)] ?? { fault: 'lost' });
}

/** A failure as a report: what broke, the command that replays it, and the trace of every copy. */
export function report({ scenario, script, seed, result }: Failure): string {
  return [
    `${scenario}: ${result.violations.join('; ')}`,
    `replay: npm run simulate -- --scenario '${scenario}' ${
      'rate' in script ? `--rate ${script.rate}` : `--script '${scriptText(script)}'`
    } --seed ${seed}`,
    ...result.trace.map((line) => `  ${line}`),
  ].join('\n');
}
