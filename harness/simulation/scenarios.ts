import { todoEtag } from '../../lib/conditional';
import type { Todo } from '../../lib/todos';
import type { Answered, Container, Scenario, World } from './world';

/**
 * The requests the simulator explores, one scenario each (docs/testing.md, "The simulator"): a
 * POST alone, POSTs batched in one container, a POST queued behind a head that stalled, a PUT,
 * a PUT with If-Match, a DELETE, each unkeyed and keyed, and the seed. Each sets up with no
 * faults, turns them on, sends its request (a keyed one is sent again with its key after a 503,
 * as the docs tell clients), and checks what every run must keep:
 *
 * - one record for one POST, and none for a POST that was not answered 201 unless it may still be
 *   (a 503);
 * - no id skipped or reused: the records' ids from 3 are exactly those the counter gave;
 * - every answer true to what was stored: a 201's record is the stored one; a PUT answered 200
 *   stored its patch; a DELETE answered 200 removed the record; no 404 or 412 for what the
 *   request's own late copy did.
 */

const KEY = '"simulated-key"';

/** Sends a request, and again with its key after a 503 (up to twice), as a client that follows the docs. */
async function withRetries<T>(world: World, keyed: boolean, send: () => Promise<T>): Promise<Answered<T>> {
  let answered = await world.answer(send());
  for (let retry = 0; keyed && retry < 2 && 'failed' in answered && answered.failed === 'StoreUnavailable'; retry++) {
    await world.wait(1_000);
    answered = await world.answer(send());
  }
  return answered;
}

/** A 503, which a request may answer under faults (it may still be applied): with none, it is a violation too. */
function unavailable(world: World, answered: { readonly failed: string }): boolean {
  return answered.failed === 'StoreUnavailable' && !world.faultFree;
}

/** The seeded table, and a container that has seen it: set-up, with no faults. */
async function seededContainer(world: World): Promise<Container> {
  const container = world.container();
  await container.list();
  return container;
}

/** The checks of the ids: from 3 to the counter's next, each used by exactly one record (none deleted here). */
function idsIntact(world: World, deleted: readonly number[] = []): string[] {
  const [counter] = world.queueItems();
  const next = Number(counter?.next);
  const ids = world
    .records()
    .map(({ id }) => id)
    .filter((id) => id >= 3);
  const expected = Array.from({ length: Math.max(0, next - 3) }, (_, i) => i + 3).filter((id) => !deleted.includes(id));
  return JSON.stringify(ids) === JSON.stringify(expected)
    ? []
    : [`ids ${JSON.stringify(ids)} where the counter (next ${next}) gave ${JSON.stringify(expected)}`];
}

/** What one POST's answer and the records must agree on. */
function postChecks(world: World, title: string, answered: Answered<{ value: Todo }>): string[] {
  const stored = world.records().filter((todo) => todo.title === title);
  if ('ok' in answered) {
    const { value } = answered.ok;
    if (stored.length !== 1) return [`POST "${title}" answered 201 with id ${value.id}, stored ${stored.length} times`];
    if (JSON.stringify(stored[0]) !== JSON.stringify(value))
      return [`POST "${title}" answered ${JSON.stringify(value)}, stored ${JSON.stringify(stored[0])}`];
    return [];
  }
  if (!unavailable(world, answered)) return [`POST "${title}" answered ${answered.failed}`];
  return stored.length > 1 ? [`POST "${title}" answered 503, stored ${stored.length} times`] : [];
}

function post(keyed: boolean): Scenario {
  return async (world) => {
    const container = await seededContainer(world);
    world.startFaults();
    const answered = await withRetries(world, keyed, () =>
      container.create('alone', world.options(keyed ? KEY : undefined)),
    );
    return () => [...postChecks(world, 'alone', answered), ...idsIntact(world)];
  };
}

/** Three POSTs at once in one container: the first alone, the other two in one transaction behind it. */
function batched(keyed: boolean): Scenario {
  return async (world) => {
    const container = await seededContainer(world);
    world.startFaults();
    const titles = ['first', 'second', 'third'];
    const answers = await Promise.all(
      titles.map((title, i) =>
        withRetries(world, keyed, () => container.create(title, world.options(keyed ? `"key ${i}"` : undefined))),
      ),
    );
    return () => [
      ...titles.flatMap((title, i) => postChecks(world, title, answers[i] ?? { failed: '?' })),
      ...idsIntact(world),
    ];
  };
}

/**
 * A POST of a container that found the counter moved (another container wrote), so it queues;
 * at the queue's head, another container's intent that never commits: the POST waits out the
 * head's lease, takes it over, and commits both.
 */
function queued(keyed: boolean): Scenario {
  return async (world) => {
    const mine = await seededContainer(world);
    const other = world.container();
    await other.create('other container');
    world.dynamodb.handle(
      'PutItem',
      JSON.stringify({
        TableName: 'todos',
        Item: {
          pk: { S: 'COUNTER' },
          id: { N: String(world.now() * 1000) },
          uuid: { S: 'stalled-head' },
          title: { S: 'stalled head' },
          expires: { N: String(Math.ceil(world.now() / 1000) + 600) },
        },
      }),
    );
    world.startFaults();
    const answered = await withRetries(world, keyed, () =>
      mine.create('queued', world.options(keyed ? KEY : undefined)),
    );
    return () => {
      const stalled = world.records().filter(({ title }) => title === 'stalled head').length;
      return [
        ...postChecks(world, 'queued', answered),
        ...(stalled > 1 ? [`the stalled head's POST stored ${stalled} times`] : []),
        ...idsIntact(world),
      ];
    };
  };
}

function put(keyed: boolean, ifMatch: boolean): Scenario {
  return async (world) => {
    const container = await seededContainer(world);
    const before = await container.get(1);
    world.startFaults();
    const precondition = ifMatch && before ? (current: Todo) => todoEtag(current) === todoEtag(before) : undefined;
    const answered = await withRetries(world, keyed, () =>
      container.update(1, { title: 'changed' }, world.options(keyed ? KEY : undefined, { precondition })),
    );
    return () => {
      const [stored] = world.records().filter(({ id }) => id === 1);
      const violations = idsIntact(world);
      if ('ok' in answered) {
        if (answered.ok?.value.title !== 'changed') violations.push(`PUT answered ${JSON.stringify(answered.ok)}`);
        if (stored?.title !== 'changed') violations.push(`PUT answered 200, stored ${JSON.stringify(stored)}`);
      } else if (!unavailable(world, answered)) {
        violations.push(`PUT of a record no one else wrote answered ${answered.failed}`);
      }
      return violations;
    };
  };
}

function remove(keyed: boolean): Scenario {
  return async (world) => {
    const container = await seededContainer(world);
    world.startFaults();
    const answered = await withRetries(world, keyed, () => container.remove(1, world.options(keyed ? KEY : undefined)));
    return () => {
      const stored = world.records().some(({ id }) => id === 1);
      const violations = idsIntact(world);
      if ('ok' in answered && answered.ok === undefined)
        violations.push('DELETE of a record no one else deleted answered 404');
      else if ('ok' in answered && stored) violations.push('DELETE answered 200, and the record is still there');
      else if ('failed' in answered && !unavailable(world, answered))
        violations.push(`DELETE answered ${answered.failed}`);
      return violations;
    };
  };
}

/** Two containers start on an empty table at once: seeded once, records 1 and 2 and the counter at 3. */
const seed: Scenario = async (world) => {
  world.startFaults();
  const lists = await Promise.all([world.answer(world.container().list()), world.answer(world.container().list())]);
  return () => {
    const records = world.records();
    const violations = idsIntact(world);
    if (records.filter(({ id }) => id === 1 || id === 2).length !== 2)
      violations.push(`seeded as ${JSON.stringify(records)}`);
    for (const listed of lists) {
      if ('failed' in listed && !unavailable(world, listed)) violations.push(`a list answered ${listed.failed}`);
      if ('ok' in listed && listed.ok.length !== 2) violations.push(`a list answered ${JSON.stringify(listed.ok)}`);
    }
    return violations;
  };
};

/**
 * Many containers and clients at once, for the random search: three containers POST four records,
 * one of them twice in a row, while a fourth PUTs record 1 and DELETEs record 2. The POSTs meet on
 * the counter, so some queue; a keyed client sends again after a 503. Each POST has its own title.
 */
function mixed(keyed: boolean): Scenario {
  return async (world) => {
    const [a, b, c, d] = [
      await seededContainer(world),
      await seededContainer(world),
      await seededContainer(world),
      await seededContainer(world),
    ];
    world.startFaults();
    function key(name: string): string | undefined {
      return keyed ? `"${name}"` : undefined;
    }
    function posting(container: Container, title: string) {
      return withRetries(world, keyed, () => container.create(title, world.options(key(title))));
    }
    const [first, second, third, fourth, putAnswer, deleteAnswer] = await Promise.all([
      posting(a, 'from a').then(async (answered) => [answered, await posting(a, 'from a, again')] as const),
      posting(b, 'from b'),
      posting(c, 'from c'),
      withRetries(world, keyed, () => d.update(1, { completed: true }, world.options(key('put')))),
      withRetries(world, keyed, () => d.remove(2, world.options(key('delete')))),
    ]).then(([fromA, fromB, fromC, put, remove]) => [fromA[0], fromA[1], fromB, fromC, put, remove] as const);
    return () => {
      const titles = ['from a', 'from a, again', 'from b', 'from c'];
      const posts = [first, second, third, fourth];
      const violations = titles.flatMap((title, i) => postChecks(world, title, posts[i] ?? { failed: '?' }));
      const records = world.records();
      if ('ok' in putAnswer && records.find(({ id }) => id === 1)?.completed !== true) {
        violations.push('PUT answered 200, and record 1 is not completed');
      }
      if ('ok' in deleteAnswer && (deleteAnswer.ok === undefined || records.some(({ id }) => id === 2))) {
        violations.push(`DELETE of record 2 answered ${deleteAnswer.ok ? '200, and it is still there' : '404'}`);
      }
      for (const answered of [putAnswer, deleteAnswer]) {
        if ('failed' in answered && !unavailable(world, answered)) violations.push(`answered ${answered.failed}`);
      }
      return [...violations, ...idsIntact(world)];
    };
  };
}

/**
 * The workloads of many requests, whose scripts are too many to search each: searched exhaustively
 * to one fault only, and at random.
 */
export const WORKLOADS: readonly string[] = ['mixed: four containers at once', 'mixed: four containers at once, keyed'];

/** Every scenario the simulator explores, by name. */
export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'POST alone': post(false),
  'POST alone, keyed': post(true),
  'POST batched': batched(false),
  'POST batched, keyed': batched(true),
  'POST queued behind a stalled head': queued(false),
  'POST queued behind a stalled head, keyed': queued(true),
  PUT: put(false, false),
  'PUT, keyed': put(true, false),
  'PUT with If-Match': put(false, true),
  'PUT with If-Match, keyed': put(true, true),
  DELETE: remove(false),
  'DELETE, keyed': remove(true),
  seed,
  'mixed: four containers at once': mixed(false),
  'mixed: four containers at once, keyed': mixed(true),
};
