import { describe, expect, it } from '@jest/globals';
import { SimulatedDynamoDb } from '../../harness/simulation/dynamodb';
import { EventClock } from '../../harness/simulation/event-clock';
import { SimulatedStage, type Answered, type StageOptions } from '../../harness/simulation/lambda';
import { runPoint } from '../../harness/simulation/scale';
import { TimedDynamoDb } from '../../harness/simulation/timed-dynamodb';
import { TABLE, seeded } from '../../harness/simulation/world';

/**
 * The simulator's timing mode (docs/testing.md, "The simulator"; docs/scale.md): the mechanics
 * that move its clock, each shown to act. Every run is in simulated time, bounded by it
 * (SIMULATED_LIMIT_MS): work, with the project's timeout, which only a hang meets
 * (test/support/bounds.ts).
 */

/** No run here lasts longer in simulated time. */
const SIMULATED_LIMIT_MS = 60_000;

function world(options: Partial<StageOptions> = {}) {
  const clock = new EventClock(Date.UTC(2026, 10, 26));
  const dynamodb = new TimedDynamoDb(new SimulatedDynamoDb({ now: clock.now }), clock, seeded(11));
  const stage = new SimulatedStage({ clock, dynamodb, random: seeded(7), containers: 1, ...options });
  return { clock, dynamodb, stage };
}

/** Sends each request at once; resolves with every answer, once all are in. */
async function all(clock: EventClock, sends: (() => Promise<Answered>)[]): Promise<Answered[]> {
  const answers: Answered[] = [];
  const ended = sends.map((send) => send().then((answer) => answers.push(answer)));
  await clock.runUntil(() => answers.length === sends.length, SIMULATED_LIMIT_MS);
  await Promise.all(ended);
  return answers;
}

/** Lets `ms` of simulated time pass. */
async function wait(clock: EventClock, ms: number): Promise<void> {
  let waited = false;
  clock.after(ms, () => {
    waited = true;
  });
  await clock.runUntil(() => waited, SIMULATED_LIMIT_MS);
}

/** A PutItem of an item of about `bytes` bytes in partition `pk`, as the store's client sends it. */
function putItem(pk: string, id: number, bytes: number): string {
  return JSON.stringify({
    TableName: TABLE,
    Item: { pk: { S: pk }, id: { N: String(id) }, title: { S: 'x'.repeat(bytes) } },
  });
}

function transaction(pk: string, id: number, token: string): string {
  return JSON.stringify({
    TransactItems: [{ Put: { TableName: TABLE, Item: { pk: { S: pk }, id: { N: String(id) }, title: { S: token } } } }],
    ClientRequestToken: token,
  });
}

function errorOf(body: string): string {
  const { __type, CancellationReasons } = JSON.parse(body) as {
    __type?: string;
    CancellationReasons?: { Code: string }[];
  };
  const name = __type?.slice(__type.indexOf('#') + 1) ?? 'ok';
  return CancellationReasons ? `${name} ${CancellationReasons.map(({ Code }) => Code).join(',')}` : name;
}

describe('the timing mode', () => {
  it('gives each container a clock of its own within the bound when asked (clocks.ts), and the stage’s time otherwise', async () => {
    const bound = { skewMs: 500, drift: 0.001 };
    const twoAtOnce = (stage: SimulatedStage) =>
      Array.from({ length: 2 }, () => () => stage.send({ route: 'GET /todos/{id}', id: 1 }));
    const own = world({ containers: 2, clocks: { bound, random: seeded(5) } });
    await all(own.clock, twoAtOnce(own.stage));
    const offsets = own.stage.pool('getTodo').containers.map((container) => container.now() - own.clock.now());
    expect(offsets).toHaveLength(2);
    expect(new Set(offsets).size).toBe(2);
    for (const offset of offsets) expect(Math.abs(offset)).toBeLessThanOrEqual(bound.skewMs + 1);
    const shared = world({ containers: 2 });
    await all(shared.clock, twoAtOnce(shared.stage));
    const readings = shared.stage.pool('getTodo').containers.map((container) => container.now());
    expect(readings).toEqual([shared.clock.now(), shared.clock.now()]);
  });

  it('serves one invocation at a time in a container: requests at once on one container end one after another', async () => {
    const { clock, stage } = world({ atCap: 'wait', coldStartMs: { getTodo: 0 } });
    const answers = await all(
      clock,
      Array.from({ length: 5 }, () => () => stage.send({ route: 'GET /todos/{id}', id: 1 })),
    );
    const ends = answers.map(({ ms }) => ms).sort((a, b) => a - b);
    const pool = stage.pool('getTodo');
    expect(pool.containers).toHaveLength(1);
    expect(pool.containers[0]?.invocations).toBe(5);
    // Each waited for the one before: at least a GetItem's fastest time (5.47 ms) apart.
    for (let i = 1; i < ends.length; i++) expect((ends[i] ?? 0) - (ends[i - 1] ?? 0)).toBeGreaterThan(5);
  });

  it('starts a container for each invocation at once, up to the cap, and Lambda refuses past it', async () => {
    const { clock, stage } = world({ containers: 3, atCap: 'throttle' });
    const answers = await all(
      clock,
      Array.from({ length: 5 }, () => () => stage.send({ route: 'GET /todos/{id}', id: 1 })),
    );
    expect(answers.map(({ status }) => status).sort()).toEqual([200, 200, 200, 429, 429]);
    expect(stage.pool('getTodo').coldStarts).toBe(3);
    expect(stage.pool('getTodo').throttled).toBe(2);
  });

  it('refuses requests past the stage throttle’s burst, and lets its rate through a second later', async () => {
    const { clock, stage } = world({ containers: 200, throttle: { perSecond: 50, burst: 100 } });
    const first = await all(
      clock,
      Array.from({ length: 150 }, () => () => stage.send({ route: 'GET /todos/{id}', id: 1 })),
    );
    expect(first.filter(({ status }) => status === 429)).toHaveLength(50);
    await wait(clock, 1_000);
    const second = await all(
      clock,
      Array.from({ length: 60 }, () => () => stage.send({ route: 'GET /todos/{id}', id: 1 })),
    );
    // A second refilled 50 tokens, whatever the first burst's own answers took.
    expect(second.filter(({ status }) => status !== 429).length).toBeGreaterThanOrEqual(50);
    expect(second.filter(({ status }) => status === 429).length).toBeGreaterThanOrEqual(1);
    expect(stage.throttled).toBe(50 + second.filter(({ status }) => status === 429).length);
  });

  it('makes a new container spend its cold start before its first request, and no other', async () => {
    const { clock, stage } = world({ coldStartMs: { getTodo: 2_000 } });
    const [cold] = await all(clock, [() => stage.send({ route: 'GET /todos/{id}', id: 1 })]);
    const [warm] = await all(clock, [() => stage.send({ route: 'GET /todos/{id}', id: 1 })]);
    expect(cold?.status).toBe(200);
    expect(cold?.ms).toBeGreaterThanOrEqual(2_000);
    expect(warm?.ms).toBeLessThan(500);
  });

  it('throttles writes to one partition key value past 1,000 write units in a second, and takes them again after', async () => {
    const { clock, dynamodb } = world();
    const answers: string[] = [];
    for (let id = 0; id < 1_500; id++) {
      dynamodb.serve('PutItem', putItem('HOT', id, 900), (answer) => answers.push(errorOf(answer.body)));
    }
    await clock.runUntil(() => answers.length === 1_500, SIMULATED_LIMIT_MS);
    expect(answers.filter((name) => name === 'ok')).toHaveLength(1_000);
    expect(answers.filter((name) => name === 'ProvisionedThroughputExceededException')).toHaveLength(500);
    expect(dynamodb.stats.throttled).toEqual({ 'HOT write': 500 });
    // Another partition key value has its own thousand.
    const other: string[] = [];
    dynamodb.serve('PutItem', putItem('COLD', 1, 900), (answer) => other.push(errorOf(answer.body)));
    await clock.runUntil(() => other.length === 1, SIMULATED_LIMIT_MS);
    expect(other).toEqual(['ok']);
    await wait(clock, 1_000);
    const later: string[] = [];
    dynamodb.serve('PutItem', putItem('HOT', 2_000, 900), (answer) => later.push(errorOf(answer.body)));
    await clock.runUntil(() => later.length === 1, SIMULATED_LIMIT_MS);
    expect(later).toEqual(['ok']);
  });

  it('cancels a transaction on an item while another is in progress on it, for exactly the drawn service time', async () => {
    /** A transaction on TODO/1 at 0, and another on it `at` ms later (same seeds: the first's time is drawn alike). */
    async function two(at: (firstMs: number) => number, firstMs = 0) {
      const { clock, dynamodb } = world();
      const outcomes: Record<string, string> = {};
      let firstAt = 0;
      dynamodb.serve('TransactWriteItems', transaction('TODO', 1, 'first'), (answer) => {
        firstAt = clock.elapsed();
        outcomes.first = errorOf(answer.body);
      });
      clock.after(at(firstMs), () => {
        dynamodb.serve('TransactWriteItems', transaction('TODO', 1, 'second'), (answer) => {
          outcomes.second = errorOf(answer.body);
        });
      });
      await clock.runUntil(() => Object.keys(outcomes).length === 2, SIMULATED_LIMIT_MS);
      return { outcomes, firstAt, conflicts: dynamodb.stats.conflicts };
    }
    const { firstAt } = await two(() => 0);
    // At least latency.ts's fastest transaction of 1 item (a PutItem's 5.47 ms).
    expect(firstAt).toBeGreaterThan(5);
    const during = await two((ms) => ms - 0.5, firstAt);
    expect(during.outcomes).toEqual({ first: 'ok', second: 'TransactionCanceledException TransactionConflict' });
    expect(during.conflicts).toEqual({ TODO: 1 });
    const after = await two((ms) => ms, firstAt);
    expect(after.outcomes).toEqual({ first: 'ok', second: 'ok' });
  });

  it('replays a point exactly from its seed', async () => {
    const workload = {
      design: 'queue' as const,
      containers: 4,
      postsPerSecond: 25,
      titleBytes: 20,
      throttlePerSecond: 50,
      warmSeconds: 1,
      seconds: 2,
      seed: 3,
    };
    const [one, two] = [await runPoint(workload), await runPoint(workload)];
    expect(two).toEqual(one);
    expect(one.postsCreated).toBeGreaterThan(20);
  });
});
