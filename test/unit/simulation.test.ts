import { availableParallelism } from 'node:os';
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  SEARCHED,
  SearchHung,
  SearchPool,
  exhaustive,
  failureOf,
  parseScript,
  report,
  scriptText,
  searchAll,
  searchScenario,
  type Searched,
  type Task,
} from '../../harness/simulation/explore';
import { ALPHABET, type Step } from '../../harness/simulation/network';
import { DEPLOYS, SCENARIOS } from '../../harness/simulation/scenarios';
import { run, type Answered, type RunResult, type Scenario } from '../../harness/simulation/world';
import { listOf } from '../../harness/simulation/clients';
import { ONLY_A_HANG_MS } from '../support/bounds';

/**
 * The deterministic simulator (harness/simulation/, docs/testing.md "The simulator"): the DynamoDB
 * store's own code, on a simulated network and DynamoDB as AWS runs it, under a fake clock and a
 * seeded random source. Every run is a function of its scenario, fault script and seed: a failure
 * prints the command that replays it, and its trace.
 */

/** The exhaustive search's depth in `npm test`; `npm run simulate -- --depth 4` and more by hand. */
const DEPTH = 3;
/**
 * A read's faults in scripts of up to two faults: to three, a queued POST's search (its polls
 * give a read's five faults a place after every step) ran twice the scripts (4,195 for 2,053).
 */
const READ_DEPTH = 2;
/** Random scripts of five faults, a hundred seeds a scenario. */
const SEEDS = 100;
const RANDOM_DEPTH = 5;
/**
 * Scenarios searched at once, each in a worker thread (SearchPool): the machine's cores. The
 * searches share nothing, and a worker runs the simulator under tsx, two to three times faster
 * than in jest's sandbox.
 */
const JOBS = Math.max(1, availableParallelism());
/**
 * A deploy's runs are a workload's (about 50 requests, 33 to 64 copies of writes) at 20 to 60 ms
 * of CPU each: their search is a workload's (to one fault, 14 runs) with 30 random seeds.
 */
const DEPLOY_SEEDS = 30;
/*
 * No test here states a bound of its own: each is work, bounded by its scripts and seeds (DEPTH,
 * READ_DEPTH, SEEDS, DEPLOY_SEEDS), and gets the project's timeout, which only a hang meets
 * (test/support/bounds.ts). A search's worker that hangs is ended at the same bound (`searched`).
 */

/**
 * The sequence issue 31 found by reading: the first copy held in the network and landing after
 * three throttled copies, then a copy cancelled for a conflict. On the store before the outcome
 * contract it stored an unkeyed POST twice (ids 3 and 4, answered with 4).
 */
const LATE_COPY_AFTER_THROTTLES = 'held+3,throttle,throttle,throttle,conflict';

describe('the simulator', () => {
  it.each(['POST alone', 'POST queued behind a stalled head', 'PUT with If-Match', 'DELETE', 'seed'])(
    '%s: a copy that lands after three throttles and a conflict is applied once, and answered for what was stored',
    async (scenario) => {
      const result = await run(SCENARIOS[scenario] ?? fail(scenario), parseScript(LATE_COPY_AFTER_THROTTLES), 1);
      expect(result.violations).toEqual([]);
      // The late copy did land: the script met every copy it names.
      expect(result.trace.some((line) => line.includes('lands late'))).toBe(true);
    },
  );

  it('replays a run exactly from its scenario, script and seed', async () => {
    const scenario = SCENARIOS['POST queued behind a stalled head'] ?? fail('queued');
    const script = parseScript('lost,held+1,500 after');
    const first = await run(scenario, script, 7);
    const again = await run(scenario, script, 7);
    expect(again.trace).toEqual(first.trace);
  });

  it('finds a defect, and reports the command that replays it with its trace', async () => {
    const broken = () => Promise.resolve(() => ['a violation']);
    const result = await run(broken, [], 1);
    const text = report({ scenario: 'POST alone', script: parseScript('held+end,lost'), seed: 3, result });
    expect(text).toContain("replay: npm run simulate -- --scenario 'POST alone' --script 'held+end,lost' --seed 3");
  });

  it('stops at the first failure: no scenario after it is searched, and its replay line is printed', async () => {
    let searchedAfter = 0;
    const scenarios: Record<string, Scenario> = {
      'POST alone': SCENARIOS['POST alone'] ?? fail('POST alone'),
      'always fails': () => Promise.resolve(() => ['an injected violation']),
      'after the failure': (world) => {
        searchedAfter++;
        return (SCENARIOS['POST alone'] ?? fail('POST alone'))(world);
      },
    };
    const lines: string[] = [];
    const failure = await searchAll(
      Object.keys(scenarios),
      { depth: 1, readDepth: 1, seeds: 2, jobs: 1, scenarios },
      (line) => {
        lines.push(line);
      },
    );
    expect(failure?.scenario).toBe('always fails');
    const printed = lines.join('\n');
    expect(printed).toContain("replay: npm run simulate -- --scenario 'always fails' --script '' --seed 1");
    expect(printed).toContain(`always fails: ${1 + SEARCHED.length} scripts to depth 1: 1 run`);
    // Every request kind is printed, those no fault met too.
    expect(printed).toContain(
      'faulted copies: GetItem 0, Query 0, PutItem 0, UpdateItem 0, DeleteItem 0, TransactWriteItems ',
    );
    expect(searchedAfter).toBe(0);
    expect(printed).not.toContain('after the failure');
  });

  it("counts the copies that met a fault by request kind, and a transaction's by the roles of its actions", async () => {
    // A POST's transaction: the counter's move and the record's put; the queued POST's intent is a PutItem.
    const posted = await run(SCENARIOS['POST alone'] ?? fail('POST alone'), parseScript('throttle,throttle'), 1);
    expect(posted.faulted.byKind).toEqual({
      GetItem: 0,
      Query: 0,
      PutItem: 0,
      UpdateItem: 0,
      DeleteItem: 0,
      TransactWriteItems: 2,
    });
    expect(posted.faulted.byRole).toEqual({ counter: 2, record: 2, claim: 0, intent: 0, outcome: 0, other: 0 });
    const keyed = await run(SCENARIOS['POST alone, keyed'] ?? fail('POST alone, keyed'), parseScript('conflict'), 1);
    expect(keyed.faulted.byRole).toMatchObject({ counter: 1, record: 1, claim: 1 });
    const queued = SCENARIOS['POST queued behind a stalled head'] ?? fail('queued');
    const intent = await run(queued, parseScript('throttling error,held+0'), 1);
    expect(intent.copies.filter((copy) => !/^(GetItem|Query)/.test(copy)).slice(0, 2)).toEqual([
      'TransactWriteItems counter,record',
      'PutItem',
    ]);
    expect(intent.faulted.byKind.PutItem).toBe(1);
    // A read's faults are counted as a write's are: by request kind.
    const read = await run(SCENARIOS['PUT, keyed'] ?? fail('PUT, keyed'), parseScript('read 500,read timeout'), 1);
    expect(read.faulted.byKind).toMatchObject({ GetItem: 2, TransactWriteItems: 0 });
  });

  it.each([
    ['read timeout', 'no answer: the client sends it again once its 2 s are up', 'sent (read timeout)'],
    ['read throttle', 'ProvisionedThroughputExceededException', 'answered 400 ProvisionedThroughputExceededException'],
    ['read throttling error', 'ThrottlingException', 'answered 400 ThrottlingException'],
    ['read 500', 'a 500', 'answered 500 InternalServerError'],
  ])("a PUT's read of its record meets %s: %s, and is sent again", async (fault, _what, answered) => {
    const result = await run(SCENARIOS.PUT ?? fail('PUT'), parseScript(fault), 1);
    expect(result.violations).toEqual([]);
    const reads = result.trace.filter((line) => line.includes('read GetItem TODO/1: '));
    expect(reads.find((line) => line.includes(`(${fault})`))).toBeDefined();
    expect(reads.find((line) => line.includes(answered))).toBeDefined();
    // Sent again, and answered.
    expect(reads.filter((line) => line.endsWith(': answered 200 ok')).length).toBeGreaterThan(0);
    expect(result.faulted.byKind).toMatchObject({ GetItem: 1, Query: 0, TransactWriteItems: 0 });
  });

  it("a list's Query page cut short after its first record: the list reads on from its LastEvaluatedKey, and answers both", async () => {
    const result = await run(SCENARIOS.seed ?? fail('seed'), parseScript('page cut'), 1);
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('read Query: sent (page cut)'))).toBe(true);
    // The next page, from the cut page's last key: the seed's record 1.
    expect(result.trace.some((line) => line.includes('read Query TODO/1: sent'))).toBe(true);
    expect(result.faulted.byKind.Query).toBe(1);
  });

  it('a copy held, landing as its twin (the same ClientRequestToken) arrives: the twin meets it in progress, TransactionInProgressException from DynamoDB itself', async () => {
    const result = await run(SCENARIOS['POST alone'] ?? fail('POST alone'), parseScript('in progress'), 1);
    expect(result.violations).toEqual([]);
    const landing = result.trace.findIndex((line) =>
      line.includes('copy 1 lands late, as copy 2 is sent: in progress'),
    );
    expect(landing).toBeGreaterThan(0);
    expect(result.trace.slice(landing)).toEqual(
      expect.arrayContaining([
        // Record 4: the container wrote record 3 before (a container alone; warmContainer, clients.ts).
        expect.stringContaining('copy 2 TransactWriteItems COUNTER/0 TODO/4: sent'),
        expect.stringContaining('copy 1 applied late: 200 ok'),
        expect.stringContaining(
          'copy 2 TransactWriteItems COUNTER/0 TODO/4: answered 400 TransactionInProgressException',
        ),
      ]),
    );
  });

  it('a conflict on the claim (the fault names its action) makes a keyed PUT contended: held to its deadline after, it is a KeyInFlight (409), where a conflict at the first action is a 503', async () => {
    // A keyed PUT of record 1 whose answer the test reads; its copies meet the script.
    const answers: Answered<unknown>[] = [];
    const keyedPut: Scenario = async (world) => {
      const container = world.container();
      await listOf(container);
      world.startFaults();
      answers.push(await world.answer(container.update(1, { title: 'contended' }, world.options('"a key"'))));
      return () => [];
    };
    const heldToTheDeadline = ',held+end'.repeat(5);
    const contended = await run(keyedPut, parseScript(`conflict at claim${heldToTheDeadline}`), 1);
    expect(contended.trace).toEqual(
      expect.arrayContaining([
        expect.stringContaining('TransactionCanceledException [None, None, TransactionConflict]'),
      ]),
    );
    await run(keyedPut, parseScript(`conflict${heldToTheDeadline}`), 1);
    expect(answers).toEqual([{ failed: 'KeyInFlight' }, { failed: 'StoreUnavailable' }]);
  });

  it.each(['POST alone, keyed', 'PUT, keyed', 'DELETE, keyed'])(
    '%s: a throttling error at any role, and a conflict at any role but the claim, runs as at the first action (the exhaustive search leaves them out)',
    async (scenario) => {
      const scenarioOf = SCENARIOS[scenario] ?? fail(scenario);
      const leftOut = ALPHABET.filter((step) => !SEARCHED.includes(step));
      expect(leftOut.map((step) => scriptText([step]))).toContain('conflict at record');
      const atFirst = new Map<string, RunResult>();
      for (const step of leftOut) {
        const plain = ALPHABET.find(({ fault, at }) => fault === step.fault && at === undefined) ?? step;
        const theirs = atFirst.get(plain.fault) ?? (await run(scenarioOf, [plain], 1));
        atFirst.set(plain.fault, theirs);
        const mine = await run(scenarioOf, [step], 1);
        expect({ step: scriptText([step]), trace: mine.trace.map(anyAction) }).toEqual({
          step: scriptText([step]),
          trace: theirs.trace.map(anyAction),
        });
        expect(mine.violations).toEqual(theirs.violations);
      }
      // The fault did name another action: the claim, last in each of these transactions.
      const atClaim = await run(scenarioOf, parseScript('throttling error at claim'), 1);
      expect(atClaim.trace.join('\n')).toMatch(/TransactionCanceledException \[None, None, ThrottlingError\]/);
    },
  );

  it('a workload at its rate meets faults on its reads too', async () => {
    const workload = SCENARIOS['workload: four containers, shared records'] ?? fail('workload');
    const result = await run(workload, { rate: 0.1 }, 1);
    expect(result.faulted.byKind.GetItem + result.faulted.byKind.Query).toBeGreaterThan(0);
  });

  it.each(['POST alone', 'POST queued behind a stalled head', 'PUT, keyed'])(
    '%s: every script pruned to two faults runs as the one that stands for it, copy for copy',
    async (scenario) => {
      const pruned: { script: readonly Step[]; sameAs: readonly Step[] }[] = [];
      const searched = await exhaustive(scenario, 2, {
        onPruned: (script, sameAs) => pruned.push({ script, sameAs }),
      });
      const { unconsumed, sameAnswer, landsAtEnd } = searched.pruned;
      expect(searched.runs + unconsumed + sameAnswer + landsAtEnd).toBe(1 + SEARCHED.length + SEARCHED.length ** 2);
      expect(landsAtEnd).toBeGreaterThan(0);
      const scenarioOf = SCENARIOS[scenario] ?? fail(scenario);
      // A script that stands for many is run once.
      const runs = new Map<string, Promise<RunResult>>();
      function runOf(script: readonly Step[]): Promise<RunResult> {
        const text = scriptText(script);
        const known = runs.get(text) ?? run(scenarioOf, script, 1);
        runs.set(text, known);
        return known;
      }
      for (const { script, sameAs } of pruned) {
        const [mine, theirs] = await Promise.all([runOf(script), runOf(sameAs)]);
        expect({ script: scriptText(script), trace: mine.trace.map(asMerged) }).toEqual({
          script: scriptText(script),
          trace: theirs.trace.map(asMerged),
        });
        expect(mine.violations).toEqual(theirs.violations);
      }
      // A throttling error at a role, and a read's two throttles, are merged everywhere (sameAnswer).
      expect(sameAnswer).toBeGreaterThan(0);
    },
  );

  it('searches a scenario in a worker thread as in this one', async () => {
    const task: Task = { scenario: 'PUT', depth: 1, readDepth: 1, seeds: 3, randomDepth: RANDOM_DEPTH };
    const pool = new SearchPool(1);
    try {
      const there = await pool.search(task);
      const here = await searchScenario(task);
      expect({ ...there, seconds: 0 }).toEqual({ ...here, seconds: 0 });
    } finally {
      await pool.close();
    }
  });

  it('ends a search still running past its bound, with its worker thread, and gives the next search a worker', async () => {
    // A search that never ends: random runs from seed 1, for ever.
    const endless: Task = { scenario: 'PUT', depth: 0, readDepth: 0, seeds: Infinity, randomDepth: 1 };
    const pool = new SearchPool(1);
    try {
      await expect(pool.search(endless, { hungAfterMs: 1 })).rejects.toThrow(
        new SearchHung('the search of "PUT" was still running after 1 ms: its worker thread was ended'),
      );
      // The pool's one place is free again: the next search runs, to its end.
      const next = await pool.search({ ...endless, seeds: 1 });
      expect(next.random?.runs).toBe(1);
    } finally {
      await pool.close();
    }
  });

  // Every search of the file, run JOBS at a time: each test starts its own search and the next
  // ones, then waits for its own (the searches are started in the tests' order).
  const searchOrder = [...Object.keys(SCENARIOS).filter((scenario) => !(scenario in DEPLOYS)), ...Object.keys(DEPLOYS)];
  const pool = new SearchPool(JOBS);
  const searches = new Map<string, Promise<Searched>>();
  function searched(scenario: string): Promise<Searched> {
    const at = searchOrder.indexOf(scenario);
    for (const name of searchOrder.slice(at, at + JOBS)) {
      if (searches.has(name)) continue;
      const seeds = name in DEPLOYS ? DEPLOY_SEEDS : SEEDS;
      const started = pool.search(
        { scenario: name, depth: DEPTH, readDepth: READ_DEPTH, seeds, randomDepth: RANDOM_DEPTH },
        { hungAfterMs: ONLY_A_HANG_MS },
      );
      // A search started ahead is awaited by its own test; one whose test is skipped (-t) is not.
      started.catch(() => undefined);
      searches.set(name, started);
    }
    return searches.get(scenario) ?? Promise.reject(new Error(`no search of ${scenario}`));
  }
  afterAll(() => pool.close());

  it.each(Object.keys(SCENARIOS).filter((scenario) => !(scenario in DEPLOYS)))(
    `%s: every script of up to ${DEPTH} faults (a workload's, of one), and ${SEEDS} random runs (scripts of five; a workload's faults at a rate)`,
    async (scenario) => {
      const found = await searched(scenario);
      const failure = failureOf(found);
      if (failure) throw new Error(report(failure));
      expect(found.exhaustive.runs).toBeGreaterThan(1);
    },
  );

  it.each(Object.keys(DEPLOYS))(
    `%s (issue 38, a deploy is a fault too): every script of one fault, and ${DEPLOY_SEEDS} random runs with faults at a rate: no stored field lost, the list's size a recount, every record's history linearizable on every field, keyed requests sent again to the other version replayed`,
    async (scenario) => {
      const found = await searched(scenario);
      const failure = failureOf(found);
      if (failure) throw new Error(report(failure));
      expect(found.exhaustive.runs).toBeGreaterThan(1);
    },
  );
});

/**
 * A trace line with the names a merged fault differs by made its kept one's (explore.ts,
 * `sameAnswer` and `heldToTheEnd`): the fault the copy met (a role its copy has no action in too),
 * and the throttle's name in its answer.
 */
function asMerged(line: string): string {
  return line
    .replace(/ at (counter|record|claim|intent|outcome)\)/, ')')
    .replace('(in progress)', '(held)')
    .replace('(throttling error)', '(throttle)')
    .replace('(read throttling error)', '(read throttle)')
    .replace('ThrottlingException', 'ProvisionedThroughputExceededException');
}

/** A trace line with a fault's role, and where in a cancellation its one reason stands, left out. */
function anyAction(line: string): string {
  return line
    .replace(/ at (counter|record|claim|intent|outcome)\)/, ')')
    .replace(/\[([A-Za-z, ]+)\]$/, (_list, codes: string) => {
      const named = codes.split(', ').filter((code) => code !== 'None');
      return `[${named.join(', ')}]`;
    });
}

function fail(name: string): never {
  throw new Error(`no scenario ${name}`);
}
