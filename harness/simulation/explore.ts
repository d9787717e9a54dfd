import { Worker, parentPort } from 'node:worker_threads';
import {
  ALPHABET,
  REQUEST_KINDS,
  ROLE_KINDS,
  SINGLE_WRITES,
  addFaultedCopies,
  channelOf,
  copyOf,
  landingOf,
  lands,
  noFaultedCopies,
  type Channel,
  type FaultedCopies,
  type Step,
} from './network';
import { SCENARIOS, SEEDS_AT_MOST, WORKLOADS } from './scenarios';
import { run, seeded, type RunResult, type Scenario } from './world';

/**
 * The two searches of the simulator. Exhaustive: for one scenario, every script of up to `depth`
 * faults, shortest first, each fault on the next copy of a write, a held copy landing at each
 * place among the copies after it, less the scripts a run already made proves the same (see
 * `exhaustive`). So the first failure found is a shortest one. Random: many seeds, each a script
 * drawn from the seed.
 */
/** A script as text, for a trace and for the command that replays it: `held+1,conflict at claim,read 500`. */
export function scriptText(script: readonly Step[]): string {
  return script.map(stepText).join(',');
}

function stepText({ fault, landsAfter, at }: Step): string {
  if (fault === 'held')
    return `held+${landsAfter === undefined || landsAfter === Infinity ? 'end' : String(landsAfter)}`;
  return at === undefined ? fault : `${fault} at ${at}`;
}

const STEPS_BY_TEXT = new Map(ALPHABET.map((step) => [stepText(step), step]));

export function parseScript(text: string): Step[] {
  if (text.trim() === '') return [];
  return text.split(',').map((part) => {
    const step = STEPS_BY_TEXT.get(part.trim());
    if (step === undefined) throw new Error(`no fault "${part}" (known: ${[...STEPS_BY_TEXT.keys()].join(', ')})`);
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
  /** A script extended by a fault that no copy after its last fault can meet, and every extension of it: their added faults meet nothing. */
  readonly unconsumed: number;
  /** A fault whose answer to that copy is read as an earlier fault's is, and every extension of it (SAME_ANSWER). */
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
 * The faults the exhaustive search places: the alphabet's, less those the store reads as another
 * on every copy, each a throttling error at a role and a conflict at a role but a claim's, read as
 * the same fault at the first action. lib/dynamodb/transaction.ts reads a cancellation's reasons
 * by role: a lone ThrottlingError is `throttled` and a lone TransactionConflict `conflict`, each
 * `met others` (the same token again, after the same backoff) at whichever action; the one
 * difference the store makes is a conflict on a claim, which makes its request contended (a
 * KeyInFlight at the deadline: lib/dynamodb/claims.ts, heard in posts.ts and rewrite.ts). The
 * random runs place every fault; test/unit/simulation.test.ts runs each left out beside the one at
 * the first action and compares the traces.
 */
export const SEARCHED: readonly Step[] = ALPHABET.filter(
  ({ fault, at }) => at === undefined || (fault === 'conflict' && at === 'claim'),
);

/**
 * The order a script is extended in: held+end before the held copies that land at a place, so
 * that a script with held+end at some copy is run (or proven) before those that differ from it
 * only in where that copy lands (`landsAtEnd`). Otherwise ALPHABET's order.
 */
const EXTENSIONS: readonly Step[] = [
  ...SEARCHED.filter(({ fault, landsAfter }) => fault === 'held' && landsAfter === Infinity),
  ...SEARCHED.filter(({ fault, landsAfter }) => !(fault === 'held' && landsAfter === Infinity)),
];
const HELD_TO_THE_END = EXTENSIONS[0] ?? { fault: 'held', landsAfter: Infinity };

/** The step of ALPHABET with this fault and no role or landing named. */
function plain(fault: Step['fault']): Step {
  return ALPHABET.find((step) => step.fault === fault && step.at === undefined) ?? { fault };
}

/**
 * The fault `step` runs as on `copy` (its `copyText`), when another fault's answer is read there
 * exactly as its own is; undefined when none is.
 * - On a single write (PutItem, UpdateItem, DeleteItem), `throttling error` is answered
 *   ThrottlingException where `throttle` is answered ProvisionedThroughputExceededException, both
 *   status 400, and lib/dynamodb/client.ts treats the two alike: both are THROTTLES (retried until
 *   the deadline, with the same backoff and the same draw of the random source), `copyFate` makes
 *   each `not applied`, neither carries cancellation reasons, and the error itself is dropped (a
 *   throttle is never thrown: only the deadline's abort ends its retries). Only the trace's names
 *   differ. The same holds of a read's `read throttling error` and `read throttle`.
 * - A role the copy has no action in (a single write has none) names nothing: the fault is answered
 *   as the one that names no role is, byte for byte.
 * On a TransactWriteItems, `in progress`, the two 500s and a conflict on a claim differ from the
 * others: no merge there. test/unit/simulation.test.ts runs merged scripts beside their kept ones
 * and compares the traces.
 */
export function sameAnswer(step: Step, copy: string): Step | undefined {
  const { operation, roles } = copyOf(copy);
  const single = SINGLE_WRITES.includes(operation);
  if (step.fault === 'read throttling error') return plain('read throttle');
  if (single && step.fault === 'throttling error') return plain('throttle');
  if (step.at !== undefined && !roles.includes(step.at)) return plain(step.fault);
  return undefined;
}

/** What a search keeps of a script's run (or of the run it is proven the same as): enough to extend it. */
interface Ran {
  readonly writesSent: number;
  /** Every copy sent while faults were on (RunResult.copies). */
  readonly copies: readonly string[];
  /** Where in `copies` each of the script's steps was met; undefined past the first step no copy met. */
  readonly metAt: readonly (number | undefined)[];
}

/** Where in `copies` each step of `script` is met: by the first copy it can land on after the step before it (network.ts, Channel). */
function metAt(script: readonly Step[], copies: readonly string[]): (number | undefined)[] {
  const met: (number | undefined)[] = [];
  let from = 0;
  for (const { fault } of script) {
    const channel = channelOf(fault);
    const at = copies.findIndex((copy, index) => index >= from && lands(channel, copyOf(copy).operation));
    if (at < 0) break;
    met.push(at);
    from = at + 1;
  }
  return met;
}

/** The first copy after a script's last step that a fault on each channel would meet: what its extensions' next fault meets. */
function nextCopies({ copies, metAt: met }: Ran, length: number): Partial<Record<Channel, string>> {
  if (met.length < length) return {};
  const from = length === 0 ? 0 : (met[length - 1] ?? copies.length) + 1;
  const next: Partial<Record<Channel, string>> = {};
  for (const channel of ['write', 'read', 'query'] as const) {
    const copy = copies.slice(from).find((sent) => lands(channel, copyOf(sent).operation));
    if (copy !== undefined) next[channel] = copy;
  }
  return next;
}

/** A script not run, and the one whose run proves what it does (for the tests that compare the two). */
export type OnPruned = (script: readonly Step[], sameAs: readonly Step[]) => void;

/**
 * How far an exhaustive search goes: every script of up to `depth` faults of writes, and every
 * script of up to `readDepth` faults (at most `depth`) of any kind. A read's faults reach further
 * in the random runs: each is a few places more at every step of a script (a queued POST polls),
 * and one more fault of any kind is up to A times the runs, A the alphabet's size. So do a
 * connection's resets (SHALLOW): to the store, a reset after applying is a lost answer heard at
 * once, and a reset before one is a 500 before applying whose copy stays unanswered; to three
 * faults they made a POST alone's search 70 % longer, where two show what a reset is taken for.
 */
export interface Bounds {
  readonly depth: number;
  readonly readDepth: number;
}

/** The faults of writes searched to `readDepth` only, as a read's are (see Bounds). */
const SHALLOW: readonly Step['fault'][] = ['reset before', 'reset after'];

const WRITE_STEPS = EXTENSIONS.filter(({ fault }) => channelOf(fault) === 'write' && !SHALLOW.includes(fault)).length;

/** A read's fault, or a reset (SHALLOW): searched to `readDepth`. */
function isRead({ fault }: Step): boolean {
  return channelOf(fault) !== 'write' || SHALLOW.includes(fault);
}

/**
 * The number of scripts within `bounds` that extend a script of `length` faults, that one
 * included, `withRead` if it holds a read's fault: 1 + A + … + A^depth from the empty script
 * when `readDepth` is `depth`, A the alphabet's size.
 */
function scriptsBelow({ depth, readDepth }: Bounds, length: number, withRead: boolean): number {
  let count = 0;
  for (let more = 0; length + more <= depth; more++) {
    if (length + more <= readDepth) count += EXTENSIONS.length ** more;
    else if (!withRead) count += WRITE_STEPS ** more;
  }
  return count;
}

/** The bounds of `scenario`'s search: a workload's and a deploy's to one fault. */
export function boundsOf(scenario: string, depth: number, readDepth = depth): Bounds {
  const most = WORKLOADS.includes(scenario) ? Math.min(depth, 1) : depth;
  return { depth: most, readDepth: Math.min(readDepth, most) };
}

/**
 * Every script of up to `depth` faults for `scenario` (a workload's, of one), of which those with a
 * read's fault up to `readDepth` (Bounds), shortest first; stops at the first failure. A script is
 * not run when a run already made proves it runs the same, copy for copy (each rule's why is at
 * its Pruned field, `sameAnswer` and `heldToTheEnd`): so the search checks every behaviour the
 * scripts within its bounds have, and its first failure is still a shortest one. `runs` plus the
 * pruned make the scripts within its bounds (1 + A + … + A^depth when `readDepth` is `depth`).
 */
export async function exhaustive(
  scenario: string,
  depth: number,
  {
    readDepth = depth,
    seed = 1,
    scenarios = SCENARIOS,
    onPruned,
  }: {
    readDepth?: number;
    seed?: number;
    scenarios?: Readonly<Record<string, Scenario>>;
    onPruned?: OnPruned;
  } = {},
): Promise<Explored> {
  const run1 = scenarios[scenario];
  if (run1 === undefined) throw new Error(`no scenario "${scenario}"`);
  const bounds = boundsOf(scenario, depth, readDepth);
  const faulted = noFaultedCopies();
  const pruned = { ...NOTHING_PRUNED };
  let frontier: Step[][] = [[]];
  let runs = 0;
  for (let length = 0; length <= bounds.depth && frontier.length > 0; length++) {
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
        ran = { writesSent: result.writesSent, copies: result.copies, metAt: metAt(script, result.copies) };
      }
      ranAt.set(textOf(script), ran);
      if (length === bounds.depth) continue;
      const nextCopy = nextCopies(ran, script.length);
      const withRead = script.some(isRead);
      for (const step of EXTENSIONS) {
        const read = withRead || isRead(step);
        // Beyond the search's bounds: neither run nor pruned.
        if (read && length + 1 > bounds.readDepth) continue;
        const below = scriptsBelow(bounds, length + 1, read);
        const copy = nextCopy[channelOf(step.fault)];
        if (copy === undefined) {
          pruned.unconsumed += below;
          continue;
        }
        const kept = sameAnswer(step, copy);
        if (kept === undefined) {
          next.push([...script, step]);
          continue;
        }
        pruned.sameAnswer += below;
        onPruned?.([...script, step], [...script, kept]);
      }
    }
    frontier = next;
  }
  return { runs, pruned, faulted };
}

/**
 * The script `script` runs as, when a held copy of it lands where held+end's would: S, with
 * held+k (or `in progress`, which lands as held+0 does) at copy c of a write, runs exactly as S'
 * with held+end there until copy c+1+k of a write is sent, since the network looks at a held
 * copy's place only when each copy of a write is sent (network.ts, `#landHeld`). If S' sent fewer
 * copies of writes, S never reaches that copy either: both land it at the end of the run, applied
 * at once, in the same order among the copies held, and their runs (traces included) are the same.
 * S' is of the same length and comes first (EXTENSIONS); one proven the same in its turn stands
 * for its own.
 */
function heldToTheEnd(
  script: readonly Step[],
  ranAt: ReadonlyMap<string, Ran>,
): { script: readonly Step[]; ran: Ran } | undefined {
  for (const [index, step] of script.entries()) {
    const landing = landingOf(step);
    if (landing === undefined || landing === Infinity) continue;
    const sameAs = script.map((other, at) => (at === index ? HELD_TO_THE_END : other));
    const ran = ranAt.get(textOf(sameAs));
    const met = ran?.metAt[index];
    if (ran === undefined || met === undefined) continue;
    // The copy's number among the copies of writes, as the network numbers them.
    const copy = ran.copies.slice(0, met + 1).filter((sent) => lands('write', copyOf(sent).operation)).length;
    if (ran.writesSent < copy + 1 + landing) return { script: sameAs, ran };
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

/** One scenario's search: every script to `depth` (with a read's faults to `readDepth`), then `seeds` random runs (scripts of `randomDepth` faults). */
export interface Task {
  readonly scenario: string;
  readonly depth: number;
  readonly readDepth: number;
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

/** One scenario's search, in this thread; its random runs at most SEEDS_AT_MOST's for it. */
export async function searchScenario(
  task: Task,
  scenarios: Readonly<Record<string, Scenario>> = SCENARIOS,
): Promise<Searched> {
  const started = performance.now();
  const searched = await exhaustive(task.scenario, task.depth, { readDepth: task.readDepth, scenarios });
  const seeds = Math.min(task.seeds, SEEDS_AT_MOST[task.scenario] ?? task.seeds);
  const random = searched.failure ? undefined : await randomRuns(task.scenario, 1, seeds, task.randomDepth, scenarios);
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

/** Raised for a search still running `hungAfterMs` after its worker took it: that worker was ended. */
export class SearchHung extends Error {
  override readonly name = 'SearchHung';
}

export interface SearchOptions {
  /**
   * How long the search may run, from when a worker takes it, before it is taken for hung: its
   * worker thread is ended (a search that computes forever would hold it, and the pool's place,
   * for good) and the search rejected with SearchHung. A search is work, bounded by its scripts
   * and seeds: this bound is for a hang alone (test/support/bounds.ts). None by default.
   */
  readonly hungAfterMs?: number;
}

interface Pending {
  readonly task: Task;
  readonly options: SearchOptions;
  readonly resolve: (searched: Searched) => void;
  readonly reject: (error: Error) => void;
}

/** A search a worker is running, and the timer that takes it for hung. */
interface Running {
  readonly pending: Pending;
  readonly hung: NodeJS.Timeout | undefined;
}

/**
 * Scenarios searched side by side, each in a worker thread of its own, up to `jobs` at once: the
 * searches share nothing (each run builds its own world from its scenario, script and seed), so
 * they only add up. Tasks start in the order given. Workers start as tasks come, and end at
 * `close`.
 */
export class SearchPool {
  readonly #idle: Worker[] = [];
  readonly #busy = new Map<Worker, Running>();
  readonly #queue: Pending[] = [];
  #closed = false;

  constructor(readonly jobs: number) {}

  search(task: Task, options: SearchOptions = {}): Promise<Searched> {
    return new Promise((resolve, reject) => {
      if (this.#closed) {
        reject(new PoolClosed(`the pool was closed before ${task.scenario}`));
        return;
      }
      this.#queue.push({ task, options, resolve, reject });
      this.#dispatch();
    });
  }

  /** Ends every worker; the tasks not done are rejected with PoolClosed. */
  async close(): Promise<void> {
    this.#closed = true;
    const workers = [...this.#idle, ...this.#busy.keys()];
    const running = [...this.#busy.values()];
    for (const { hung } of running) clearTimeout(hung);
    for (const pending of [...this.#queue, ...running.map((search) => search.pending)]) {
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
      const { hungAfterMs } = pending.options;
      const hung =
        hungAfterMs === undefined
          ? undefined
          : setTimeout(() => {
              this.#hung(worker, hungAfterMs);
            }, hungAfterMs);
      this.#busy.set(worker, { pending, hung });
      worker.postMessage(pending.task);
    }
  }

  /** Ends a worker whose search ran past its bound, and gives its place to the next task. */
  #hung(worker: Worker, hungAfterMs: number): void {
    const running = this.#busy.get(worker);
    if (running === undefined) return;
    this.#busy.delete(worker);
    // Its exit, and a message it may still post, find it in neither #busy nor #idle: both are ignored.
    void worker.terminate();
    running.pending.reject(
      new SearchHung(
        `the search of "${running.pending.task.scenario}" was still running after ${hungAfterMs} ms: its worker thread was ended`,
      ),
    );
    this.#dispatch();
  }

  #start(): Worker {
    const worker = new Worker(workerSource(), {
      eval: true,
      execArgv: [],
      env: { ...process.env, TSX_DISABLE_CACHE: '1' },
    });
    worker.on('message', (searched: Searched) => {
      const running = this.#busy.get(worker);
      // A worker ended for a hang (#hung) is not taken back.
      if (running === undefined) return;
      clearTimeout(running.hung);
      this.#busy.delete(worker);
      this.#idle.push(worker);
      running.pending.resolve(searched);
      this.#dispatch();
    });
    const lost = (error: Error) => {
      const running = this.#busy.get(worker);
      clearTimeout(running?.hung);
      this.#busy.delete(worker);
      running?.pending.reject(error);
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

/** What `npm run simulate` searches: each scenario's scripts to `depth` (a read's faults to `readDepth`), then `seeds` random runs of `depth` faults. */
export interface Search {
  readonly depth: number;
  readonly readDepth: number;
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
  { depth, readDepth, seeds, jobs, scenarios }: Search,
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
      const task = { scenario: names[state.next++] ?? '', depth, readDepth, seeds, randomDepth: depth };
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
  const bounds = boundsOf(task.scenario, task.depth, task.readDepth);
  const reads = bounds.readDepth < bounds.depth ? ` (a read's faults and a reset's to ${bounds.readDepth})` : '';
  const faulted = noFaultedCopies();
  addFaultedCopies(faulted, searched.faulted);
  if (random) addFaultedCopies(faulted, random.faulted);
  const runs = searched.runs + (random?.runs ?? 0);
  return [
    `${task.scenario}: ${count(scriptsBelow(bounds, 0, false))} scripts to depth ${bounds.depth}${reads}: ` +
      `${count(searched.runs)} run, ` +
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
