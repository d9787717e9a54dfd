import { describe, expect, it } from '@jest/globals';
import { parseScript } from '../../harness/simulation/explore';
import { CLOCK_BOUND, type ContainerClock } from '../../harness/simulation/clocks';
import { SCENARIOS } from '../../harness/simulation/scenarios';
import { run, withOptions, type Container, type Scenario, type World } from '../../harness/simulation/world';
import { recordsOf } from '../support/records';

/**
 * The simulator's containers each read a clock of their own (harness/simulation/clocks.ts), and
 * its copies take the AWS profile's times when a scenario asks (world.ts, WorldOptions): the
 * store stays exactly once with clocks at the edges of the bound it relies on, and a clock far
 * past it is caught. Each run is in simulated time, a few dozen runs a test: work, with the
 * project's timeout, which only a hang meets (test/support/bounds.ts).
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** Clocks as far apart as the bound lets them be: every other container ahead, the others behind, drifting apart. */
const AT_THE_EDGES: readonly ContainerClock[] = Array.from({ length: 8 }, (_, i) =>
  i % 2 === 0
    ? { skewMs: CLOCK_BOUND.skewMs, drift: CLOCK_BOUND.drift }
    : { skewMs: -CLOCK_BOUND.skewMs, drift: -CLOCK_BOUND.drift },
);

function scenario(name: string): Scenario {
  const found = SCENARIOS[name];
  if (found === undefined) throw new Error(`no scenario "${name}"`);
  return found;
}

/** What each container reads now, less the world's time: a request's deadline (lib/http.ts) on its clock, less the world's. */
function offsets(world: World, containers: readonly Container[]): number[] {
  const deadline = world.options().deadline ?? 0;
  return containers.map((container) => (world.options(undefined, {}, container).deadline ?? 0) - deadline);
}

/** Three containers' offsets from the world's time, at their start and 100 s of simulated time later. */
async function offsetsOver100s(seed: number): Promise<number[][]> {
  const seen: number[][] = [];
  const reading: Scenario = async (world) => {
    const containers = [world.container(), world.container(), world.container()];
    seen.push(offsets(world, containers));
    await world.wait(100_000);
    seen.push(offsets(world, containers));
    return () => [];
  };
  expect((await run(reading, [], seed)).violations).toEqual([]);
  return seen;
}

describe('a clock per container', () => {
  it('gives each container a clock off the world’s by a skew and a drift within the bound, drawn from the seed', async () => {
    const [atStart = [], later = []] = await offsetsOver100s(3);
    expect(new Set(atStart).size).toBe(3);
    for (const [i, offset] of atStart.entries()) {
      expect(Math.abs(offset)).toBeLessThanOrEqual(CLOCK_BOUND.skewMs + 1);
      // 100 s later each has drifted by at most 0.1 % of it, and not all by nothing.
      expect(Math.abs((later[i] ?? 0) - offset)).toBeLessThanOrEqual(100_000 * CLOCK_BOUND.drift + 1);
    }
    expect(later).not.toEqual(atStart);
    expect(await offsetsOver100s(3)).toEqual([atStart, later]);
    expect((await offsetsOver100s(4))[0]).not.toEqual(atStart);
  });

  it.each(['queue: four containers, four POSTs each, keyed', 'POST queued behind a stalled head, keyed'])(
    'keeps %s exactly once with the clocks at the edges of the bound: with no fault, and with the first copy of a write held, lost or applied and answered 500',
    async (name) => {
      const atTheEdges = withOptions({ clocks: AT_THE_EDGES }, scenario(name));
      for (const script of ['', 'held+0', 'held+end', 'lost', '500 after']) {
        const { violations } = await run(atTheEdges, parseScript(script), 1);
        expect({ script, violations }).toEqual({ script, violations: [] });
      }
    },
  );

  it('is caught with clocks 30 s apart: a queued POST’s intent is dropped as stale while it waits, and it answers 503 with no fault', async () => {
    const name = 'queue: four containers, four POSTs each';
    const apart = [
      { skewMs: 15_000, drift: 0 },
      { skewMs: -15_000, drift: 0 },
    ];
    const result = await run(withOptions({ clocks: apart }, scenario(name)), [], 1);
    expect(result.violations).toContainEqual(expect.stringMatching(/answered StoreUnavailable$/));
  });

  /** A keyed POST answered by one container, then sent again with its key to another. */
  const sentAgainElsewhere: Scenario = async (world) => {
    const [first, second] = [world.container(), world.container()];
    await recordsOf(first);
    await recordsOf(second);
    const key = '"sent again elsewhere"';
    await world.answer(first.create({ title: 'keyed' }, world.options(key, {}, first)));
    const again = await world.answer(second.create({ title: 'keyed' }, world.options(key, {}, second)));
    return () => {
      const stored = world.records().filter(({ title }) => title === 'keyed').length;
      return [
        ...(stored === 1 ? [] : [`the keyed POST stored ${stored} times`]),
        ...('ok' in again && again.ok.replayed ? [] : [`sent again, it answered ${JSON.stringify(again)}`]),
      ];
    };
  };

  it('replays a key sent again to a container at the other edge of the bound, and is caught with one a day ahead (the key’s lifetime)', async () => {
    const edges = withOptions({ clocks: AT_THE_EDGES }, sentAgainElsewhere);
    expect((await run(edges, [], 1)).violations).toEqual([]);
    const dayAhead = withOptions(
      {
        clocks: [
          { skewMs: 0, drift: 0 },
          { skewMs: DAY_MS + 1_000, drift: 0 },
        ],
      },
      sentAgainElsewhere,
    );
    const { violations } = await run(dayAhead, [], 1);
    expect(violations).toContain('the keyed POST stored 2 times');
    expect(violations).toContainEqual(expect.stringMatching(/^sent again, it answered .*"replayed":false/));
  });
});

/**
 * The time between each answer and the next copy sent, in ms, in a run whose requests go one at
 * a time: the way back of one copy and the way out of the next (the trace's lines are the
 * network's: a copy's 4 ms there are between its `sent` and its `answered`).
 */
function between(trace: readonly string[]): number[] {
  const lines = trace.map((line) => /^\s*(\d+) ms {2}.*: (sent|answered)/.exec(line)).filter((match) => match !== null);
  return lines.flatMap((line, i) => {
    const next = lines[i + 1];
    return line[2] === 'answered' && next?.[2] === 'sent' ? [Number(next[1]) - Number(line[1])] : [];
  });
}

describe('latencies from the AWS profile in the exhaustive simulator', () => {
  it('takes each way of a copy half a time drawn from the profile when a scenario asks, seeded: at least half the fastest PutItem’s 5.47 ms; nothing beyond the network’s otherwise', async () => {
    const posted = scenario('POST alone');
    const fixed = await run(posted, [], 1);
    expect(new Set(between(fixed.trace))).toEqual(new Set([0]));
    const aws = withOptions({ latency: 'aws' }, posted);
    const { trace } = await run(aws, [], 1);
    const gaps = between(trace);
    expect(gaps.length).toBeGreaterThan(3);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(2 * Math.round(5.47 / 2));
    expect(new Set(gaps).size).toBeGreaterThan(1);
    expect((await run(aws, [], 1)).trace).toEqual(trace);
    expect((await run(aws, [], 2)).trace).not.toEqual(trace);
  });
});
