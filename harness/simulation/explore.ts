import { Worker, parentPort } from 'node:worker_threads';
import {
  ALPHABET,
  REQUEST_KINDS,
  ROLE_KINDS,
  SINGLE_WRITES,
  addFaultedCopies,
  noFaultedCopies,
  type Fault,
  type FaultedCopies,
  type Step,
} from './network';
import { SCENARIOS, WORKLOADS } from './scenarios';
import { run, seeded, type RunResult, type Scenario } from './world';

/**
 * The two searches of the simulator. Exhaustive: for one scenario, every script of up to `depth`
 * faults, shortest first, each fault on the next copy of a write, a held copy landing at each
 * place among the copies after it, less the scripts a run already made proves the same (see
 * `exhaustive`). So the first failure found is a shortest one. Random: many seeds, each a script
 * drawn from the seed.
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

/** The scripts of an exhaustive search that were not run, by the rule that proves each runs as one that was. */
export interface Pruned {
  /** Extensions of a script whose run sent no copy past its last fault: their added faults meet nothing. */
  readonly unconsumed: number;
  /** A fault whose answer to that copy is the same as an earlier fault's, and every extension of it. */
  readonly sameAnswer: number;
  /** A held copy whose landing place lies past the run's last copy: it lands at the end, as held+end does. */
  readonly landsAtEnd: number;
}

export interface Explored {
  readonly runs: number;
  /** Zero for random runs: only the exhaustive search prunes. */
  readonly pruned: Pruned;
  /** The copies that met a fault over the runs made. */
  readonly faulted: FaultedCopies;
  readonly failure?: Failure;
}

export const NOTHING_PRUNED: Pruned = { unconsumed: 0, sameAnswer: 0, landsAtEnd: 0 };

/**
 * The order a script is extended in: held+end before the held copies that land at a place, so
 * that a script with held+end at some copy is run (or proven) before those that differ from it
 * only in where that copy lands (`landsAtEnd`). Otherwise ALPHABET's order.
 */
const EXTENSIONS: readonly Step[] = [
  ...ALPHABET.filter(({ fault, landsAfter }) => fault === 'held' && landsAfter === Infinity),
  ...ALPHABET.filter(({ fault, landsAfter }) => !(fault === 'held' && landsAfter === Infinity)),
];
const HELD_TO_THE_END = EXTENSIONS[0] ?? { fault: 'held', landsAfter: Infinity };

/**
 * On a single write (PutItem, UpdateItem, DeleteItem), the fault each of these faults runs as:
 * - `in progress` is answered TransactionConflictException, byte for byte `conflict`'s answer
 *   (network.ts, `refusal`): a transaction's token can be in progress, a single write's cannot.
 * - `throttling error` is answered ThrottlingException where `throttle` is answered
 *   ProvisionedThroughputExceededException, both status 400, and lib/dynamodb/client.ts treats
 *   the two alike: both are THROTTLES (retried until the deadline, with the same backoff and the
 *   same draw of the random source), `copyFate` makes each `not applied`, neither carries
 *   cancellation reasons, and the error itself is dropped (a throttle is never thrown: only the
 *   deadline's abort ends its retries). Only the trace's names differ.
 * On a TransactWriteItems they differ (TransactionInProgressException is `busy`, a cancellation's
 * ThrottlingError is read by role, and a conflict is `contended`): no merge there.
 * test/unit/simulation.test.ts runs merged scripts beside their kept ones and compares the traces.
 */
export const SAME_ON_A_SINGLE_WRITE: ReadonlyMap<Fault, Fault> = new Map<Fault, Fault>([
  ['in progress', 'conflict'],
  ['throttling error', 'throttle'],
]);

/** What a search keeps of a script's run (or of the run it is proven the same as): enough to extend it. */
interface Ran {
  readonly writesSent: number;
  /** The operation of the copy after the script's last fault: what the script's extensions' next fault meets. */
  readonly next: string | undefined;
}

/** A script not run, and the one whose run proves what it does (for the tests that compare the two). */
export type OnPruned = (script: readonly Step[], sameAs: readonly Step[]) => void;

/** The number of scripts in a search of `levels` more faults below one script, that one included: 1 + 13 + … + 13^levels. */
function scriptsBelow(levels: number): number {
  let count = 0;
  for (let level = 0; level <= levels; level++) count += EXTENSIONS.length ** level;
  return count;
}

/**
 * Every script of up to `depth` faults for `scenario` (a workload's, of one), shortest first; stops
 * at the first failure. A script is not run when a run already made proves it runs the same, copy
 * for copy (each rule's why is at its Pruned field, SAME_ON_A_SINGLE_WRITE and `heldToTheEnd`): so
 * the search checks every behaviour the scripts up to `depth` have, and its first failure is
 * still a shortest one. `runs` plus the pruned make 1 + 13 + … + 13^depth.
 */
export async function exhaustive(
  scenario: string,
  depth: number,
  {
    seed = 1,
    scenarios = SCENARIOS,
    onPruned,
  }: { seed?: number; scenarios?: Readonly<Record<string, Scenario>>; onPruned?: OnPruned } = {},
): Promise<Explored> {
  const run1 = scenarios[scenario];
  if (run1 === undefined) throw new Error(`no scenario "${scenario}"`);
  if (WORKLOADS.includes(scenario)) depth = Math.min(depth, 1);
  const faulted = noFaultedCopies();
  const pruned = { ...NOTHING_PRUNED };
  let frontier: Step[][] = [[]];
  let runs = 0;
  for (let length = 0; length <= depth && frontier.length > 0; length++) {
    // This length's scripts, as they ran or were proven to: a held copy's later places look up held+end's here.
    const ranAt = new Map<string, Ran>();
    const next: Step[][] = [];
    for (const script of frontier) {
      const same = heldToTheEnd(script, ranAt);
      let ran: Ran;
      if (same !== undefined) {
        pruned.landsAtEnd++;
        onPruned?.(script, same.script);
        ran = same.ran;
      } else {
        const result = await run(run1, script, seed);
        runs++;
        addFaultedCopies(faulted, result.faulted);
        if (result.violations.length > 0) return { runs, pruned, faulted, failure: { scenario, script, seed, result } };
        ran = { writesSent: result.writesSent, next: result.copies[script.length] };
      }
      ranAt.set(textOf(script), ran);
      if (length === depth) continue;
      if (ran.writesSent <= script.length) {
        pruned.unconsumed += scriptsBelow(depth - length) - 1;
        continue;
      }
      const single = ran.next !== undefined && SINGLE_WRITES.includes(ran.next);
      for (const step of EXTENSIONS) {
        const kept = single ? SAME_ON_A_SINGLE_WRITE.get(step.fault) : undefined;
        if (kept === undefined) {
          next.push([...script, step]);
          continue;
        }
        pruned.sameAnswer += scriptsBelow(depth - length - 1);
        onPruned?.([...script, step], [...script, { fault: kept }]);
      }
    }
    frontier = next;
  }
  return { runs, pruned, faulted };
}

/**
 * The script `script` runs as, when a held copy of it lands where held+end's would: S, with
 * held+k at copy c, runs exactly as S' with held+end there until copy c+1+k is sent, since the
 * network looks at a held copy's place only when each copy is sent (network.ts, `#landHeld`). If
 * S' sent fewer copies, S never reaches that copy either: both land it at the end of the run, in
 * the same order among the copies held, and their runs (traces included) are the same. S' is of
 * the same length and comes first (EXTENSIONS); one proven the same in its turn stands for its own.
 */
function heldToTheEnd(
  script: readonly Step[],
  ranAt: ReadonlyMap<string, Ran>,
): { script: readonly Step[]; ran: Ran } | undefined {
  for (const [index, step] of script.entries()) {
    if (step.fault !== 'held' || step.landsAfter === undefined || step.landsAfter === Infinity) continue;
    const sameAs = script.map((other, at) => (at === index ? HELD_TO_THE_END : other));
    const ran = ranAt.get(textOf(sameAs));
    const copy = index + 1;
    if (ran !== undefined && ran.writesSent < copy + 1 + step.landsAfter) return { script: sameAs, ran };
  }
  return undefined;
}

/** A script as a key: its steps' places in EXTENSIONS. */
function textOf(script: readonly Step[]): string {
  return script.map((step) => EXTENSIONS.indexOf(step)).join(',');
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
export async function randomRuns(
  scenario: string,
  firstSeed: number,
  count: number,
  depth: number,
  scenarios: Readonly<Record<string, Scenario>> = SCENARIOS,
): Promise<Explored> {
  const run1 = scenarios[scenario];
  if (run1 === undefined) throw new Error(`no scenario "${scenario}"`);
  const faulted = noFaultedCopies();
  for (let seed = firstSeed; seed < firstSeed + count; seed++) {
    const script = WORKLOADS.includes(scenario) ? { rate: WORKLOAD_FAULT_RATE } : scriptFrom(seed, depth);
    const result = await run(run1, script, seed);
    addFaultedCopies(faulted, result.faulted);
    if (result.violations.length > 0)
      return {
        runs: seed - firstSeed + 1,
        pruned: NOTHING_PRUNED,
        faulted,
        failure: { scenario, script, seed, result },
      };
  }
  return { runs: count, pruned: NOTHING_PRUNED, faulted };
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

/** One scenario's search: every script to `depth`, then `seeds` random runs (scripts of `randomDepth` faults). */
export interface Task {
  readonly scenario: string;
  readonly depth: number;
  readonly seeds: number;
  readonly randomDepth: number;
}

/** What a scenario's search found, and its wall time (a worker thread cannot measure its own CPU time on Node 20). */
export interface Searched {
  readonly task: Task;
  readonly exhaustive: Explored;
  /** Undefined when the exhaustive search failed: its failure is the one to replay. */
  readonly random: Explored | undefined;
  readonly seconds: number;
}

export function failureOf({ exhaustive: searched, random }: Searched): Failure | undefined {
  return searched.failure ?? random?.failure;
}

/** One scenario's search, in this thread. */
export async function searchScenario(
  task: Task,
  scenarios: Readonly<Record<string, Scenario>> = SCENARIOS,
): Promise<Searched> {
  const started = performance.now();
  const searched = await exhaustive(task.scenario, task.depth, { scenarios });
  const random = searched.failure
    ? undefined
    : await randomRuns(task.scenario, 1, task.seeds, task.randomDepth, scenarios);
  return { task, exhaustive: searched, random, seconds: (performance.now() - started) / 1000 };
}

/**
 * What a worker thread runs: this file, loaded by tsx (its CommonJS hook, as `npm run simulate`
 * loads it), and not by whatever loaded the caller (jest's ts-jest, whose module sandbox runs the
 * simulator two to three times slower). The worker takes no execArgv of its parent's: tsx's hook
 * twice over would compile every file twice. TSX_DISABLE_CACHE as `npm run simulate` has it: no
 * cache left in the system's temporary directory.
 */
function workerSource(): string {
  return [
    `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register();`,
    `require(${JSON.stringify(__filename)}).serveSearches();`,
  ].join('\n');
}

/** Raised for the tasks a pool still had when it closed: a search stopped at another's failure. */
export class PoolClosed extends Error {
  override readonly name = 'PoolClosed';
}

interface Pending {
  readonly task: Task;
  readonly resolve: (searched: Searched) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Scenarios searched side by side, each in a worker thread of its own, up to `jobs` at once: the
 * searches share nothing (each run builds its own world from its scenario, script and seed), so
 * they only add up. Tasks start in the order given. Workers start as tasks come, and end at
 * `close`.
 */
export class SearchPool {
  readonly #idle: Worker[] = [];
  readonly #busy = new Map<Worker, Pending>();
  readonly #queue: Pending[] = [];
  #closed = false;

  constructor(readonly jobs: number) {}

  search(task: Task): Promise<Searched> {
    return new Promise((resolve, reject) => {
      if (this.#closed) {
        reject(new PoolClosed(`the pool was closed before ${task.scenario}`));
        return;
      }
      this.#queue.push({ task, resolve, reject });
      this.#dispatch();
    });
  }

  /** Ends every worker; the tasks not done are rejected with PoolClosed. */
  async close(): Promise<void> {
    this.#closed = true;
    const workers = [...this.#idle, ...this.#busy.keys()];
    for (const pending of [...this.#queue, ...this.#busy.values()]) {
      pending.reject(new PoolClosed(`the pool was closed during ${pending.task.scenario}`));
    }
    this.#queue.length = 0;
    this.#busy.clear();
    this.#idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0 && (this.#idle.length > 0 || this.#busy.size < this.jobs)) {
      const pending = this.#queue.shift();
      if (pending === undefined) return;
      const worker = this.#idle.pop() ?? this.#start();
      this.#busy.set(worker, pending);
      worker.postMessage(pending.task);
    }
  }

  #start(): Worker {
    const worker = new Worker(workerSource(), {
      eval: true,
      execArgv: [],
      env: { ...process.env, TSX_DISABLE_CACHE: '1' },
    });
    worker.on('message', (searched: Searched) => {
      const pending = this.#busy.get(worker);
      this.#busy.delete(worker);
      this.#idle.push(worker);
      pending?.resolve(searched);
      this.#dispatch();
    });
    const lost = (error: Error) => {
      const pending = this.#busy.get(worker);
      this.#busy.delete(worker);
      pending?.reject(error);
      this.#dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => {
      if (!this.#closed) lost(new Error(`a search's worker thread ended (exit code ${code})`));
    });
    return worker;
  }
}

/** A worker thread's side of SearchPool: each task posted is searched, and what it found posted back. */
export function serveSearches(): void {
  const port = parentPort;
  if (port === null) throw new Error('serveSearches runs in a worker thread');
  port.on('message', (task: Task) => {
    // A search that throws (a scenario's own bug) rejects here, unhandled: the worker ends with
    // the error, which the pool hands to that task's caller.
    void searchScenario(task).then((searched) => {
      port.postMessage(searched);
    });
  });
}

/** What `npm run simulate` searches: each scenario's scripts to `depth`, then `seeds` random runs of as many faults. */
export interface Search {
  readonly depth: number;
  readonly seeds: number;
  /** Scenarios searched at once, each in a worker thread; 1: one after the other, in this thread. */
  readonly jobs: number;
  /** A test's scenarios, by name, searched in this thread (a worker thread knows the simulator's own only). */
  readonly scenarios?: Readonly<Record<string, Scenario>>;
}

/**
 * Searches the scenarios `names` (up to `jobs` at once, each started in order), printing a
 * summary line for each as it ends (the scripts, the runs, the scripts pruned by rule, the copies
 * that met a fault by request kind and by role), and stops at the first failure found: no
 * scenario starts after it, those running are stopped, its report (the violation, the command
 * that replays it, the trace) is printed, and it is returned. A failure is what the search is
 * for: what is left would only keep the person from its replay line.
 */
export async function searchAll(
  names: readonly string[],
  { depth, seeds, jobs, scenarios }: Search,
  print: (line: string) => void,
): Promise<Failure | undefined> {
  const pool = jobs > 1 && scenarios === undefined ? new SearchPool(jobs) : undefined;
  const total = { runs: 0, pruned: { ...NOTHING_PRUNED }, faulted: noFaultedCopies() };
  const started = { wall: performance.now(), cpu: process.cpuUsage() };
  // Shared by the lanes: the next name to start, and the failure that stops them all.
  const state: { next: number; failure?: Failure } = { next: 0 };
  // A function, not the field: another lane may set it while this one awaits.
  function stopped(): boolean {
    return state.failure !== undefined;
  }
  async function lane(): Promise<void> {
    while (!stopped() && state.next < names.length) {
      const task = { scenario: names[state.next++] ?? '', depth, seeds, randomDepth: depth };
      let searched: Searched;
      try {
        searched = pool ? await pool.search(task) : await searchScenario(task, scenarios);
      } catch (error) {
        if (error instanceof PoolClosed && stopped()) return;
        throw error;
      }
      // Another lane's failure came first: this one's line would only bury its report.
      if (stopped()) return;
      const found = failureOf(searched);
      print(summaryLine(searched, found));
      total.runs += searched.exhaustive.runs + (searched.random?.runs ?? 0);
      addPruned(total.pruned, searched.exhaustive.pruned);
      addFaultedCopies(total.faulted, searched.exhaustive.faulted);
      if (searched.random) addFaultedCopies(total.faulted, searched.random.faulted);
      if (found) {
        state.failure = found;
        print(report(found));
        await pool?.close();
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: pool ? Math.min(jobs, names.length) : 1 }, lane));
  } finally {
    await pool?.close();
  }
  const { failure } = state;
  if (failure) return failure;
  const wall = (performance.now() - started.wall) / 1000;
  const { user, system } = process.cpuUsage(started.cpu);
  print(
    `all ${count(names.length)} scenarios: ${count(total.runs)} runs, ${prunedText(total.pruned)}; ` +
      `${count(Math.round(total.runs / Math.max(wall, 0.001)))} runs/s; ${wall.toFixed(1)} s, ` +
      `${((user + system) / 1e6).toFixed(1)} s of CPU (every thread); ok`,
  );
  print(`  ${faultedText(total.faulted)}`);
  return undefined;
}

function summaryLine({ task, exhaustive: searched, random, seconds }: Searched, failure: Failure | undefined): string {
  const depth = WORKLOADS.includes(task.scenario) ? Math.min(task.depth, 1) : task.depth;
  const faulted = noFaultedCopies();
  addFaultedCopies(faulted, searched.faulted);
  if (random) addFaultedCopies(faulted, random.faulted);
  const runs = searched.runs + (random?.runs ?? 0);
  return [
    `${task.scenario}: ${count(scriptsBelow(depth))} scripts to depth ${depth}: ${count(searched.runs)} run, ` +
      `${prunedText(searched.pruned)}; ${count(random?.runs ?? 0)} random; ` +
      `${count(Math.round(runs / Math.max(seconds, 0.001)))} runs/s, ${seconds.toFixed(1)} s; ${failure ? 'FAILED' : 'ok'}`,
    `  ${faultedText(faulted)}`,
  ].join('\n');
}

function addPruned(into: { -readonly [K in keyof Pruned]: number }, more: Pruned): void {
  into.unconsumed += more.unconsumed;
  into.sameAnswer += more.sameAnswer;
  into.landsAtEnd += more.landsAtEnd;
}

function prunedText({ unconsumed, sameAnswer, landsAtEnd }: Pruned): string {
  return (
    `${count(unconsumed + sameAnswer + landsAtEnd)} pruned (${count(sameAnswer)} same answer, ` +
    `${count(landsAtEnd)} held to the end, ${count(unconsumed)} unconsumed)`
  );
}

/** Every request kind and role, zeros included: a kind no fault met is a gap in the search, not noise. */
function faultedText({ byKind, byRole }: FaultedCopies): string {
  const kinds = REQUEST_KINDS.map((kind) => `${kind} ${count(byKind[kind])}`).join(', ');
  // `other` is for a role the network does not know yet: shown only when some action had one.
  const roles = ROLE_KINDS.filter((role) => role !== 'other' || byRole.other > 0)
    .map((role) => `${role} ${count(byRole[role])}`)
    .join(', ');
  return `faulted copies: ${kinds}; by role (a transaction's copy once for each): ${roles}`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}
