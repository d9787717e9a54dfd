import { MAX_INTENTS } from '../../lib/dynamodb/queue-plan';
import { idsIntact, postChecks, seededContainer, withRetries } from './clients';
import { answeringWithinRetries, withOptions, type Answered, type Scenario } from './world';
import type { Todo } from '../../lib/todos';

/**
 * The queue of POSTs under concurrency (issue 41, item 4): several containers, each a Lambda
 * instance serving one POST at a time, POST at once on a counter another container moved, so
 * their POSTs queue (lib/dynamodb/queue.ts): intents written, heads taking the lease, commits of
 * many POSTs of many containers in one transaction, outcomes read back. Every POST must get one
 * record or none (one for a 201, exactly the one answered; none or one for a 503), and the ids
 * from 3 must be exactly those the counter gave; with no fault, every POST is answered 201.
 */

/** What each POST was answered, by its title (each unique: invariants.ts knows a record by its title). */
interface Posted {
  readonly title: string;
  readonly answered: Answered<{ value: Todo }>;
}

function queueUnderConcurrency(containers: number, postsEach: number, keyed: boolean): Scenario {
  return async (world) => {
    const fleet = await Promise.all(Array.from({ length: containers }, () => seededContainer(world)));
    const [first] = fleet;
    if (first === undefined) throw new Error('no container');
    // Every container read the counter at its list; this POST moves it, so each finds it moved and queues.
    await first.create({ title: 'before the queue' });
    world.startFaults();
    const posted: Posted[] = [];
    await Promise.all(
      fleet.map(async (container, c) => {
        for (let n = 0; n < postsEach; n++) {
          const title = `container ${c}, POST ${n}`;
          const key = keyed ? `"${title}"` : undefined;
          const answered = await withRetries(world, keyed, () => container.create({ title }, world.options(key)));
          posted.push({ title, answered });
        }
      }),
    );
    return () => [...posted.flatMap(({ title, answered }) => postChecks(world, title, answered)), ...idsIntact(world)];
  };
}

/**
 * A queue deeper than one commit takes (MAX_INTENTS), and than the Query of its first intents reads
 * (lib/dynamodb/queue.ts, `commitQueue`, and the look that asks `takenNext`): `containers` new
 * containers, each a Lambda instance serving one keyed POST, POST at once (a new container's first
 * POST queues: queue.ts, `queues`), so they all wait at once and the commits that write them take
 * the queue's first intents, a full transaction of keyed POSTs each (four actions each, and the
 * counter's), until none is left. The checks are the other queue scenarios'.
 */
function deepQueue(containers: number): Scenario {
  if (containers <= MAX_INTENTS + 1)
    throw new Error(`${containers} POSTs fit in one commit and its Query (${MAX_INTENTS} intents)`);
  return async (world) => {
    const fleet = Array.from({ length: containers }, () => world.container());
    world.startFaults();
    const posted = await Promise.all(
      fleet.map(async (container, c): Promise<Posted> => {
        const title = `container ${c}`;
        const answered = await withRetries(world, true, () =>
          container.create({ title }, world.options(`"${title}"`, {}, container)),
        );
        return { title, answered };
      }),
    );
    return () => [...posted.flatMap(({ title, answered }) => postChecks(world, title, answered)), ...idsIntact(world)];
  };
}

/** The deep queue's POSTs: more than a commit takes, and about 250 ms of CPU a run with faults at a rate. */
const DEEP_QUEUE = 30;

/** The queue's scenarios, by name: four containers of four POSTs, six of three, and DEEP_QUEUE of one. */
export const QUEUE_UNDER_CONCURRENCY: Readonly<Record<string, Scenario>> = {
  'queue: four containers, four POSTs each': answeringWithinRetries(queueUnderConcurrency(4, 4, false)),
  'queue: four containers, four POSTs each, keyed': answeringWithinRetries(queueUnderConcurrency(4, 4, true)),
  // The same queue, every decision about when drawn at random: exact whatever its pacing decides (not always live).
  'queue: four containers, four POSTs each, keyed, under an adversarial pacing': withOptions(
    { pacing: 'adversarial' },
    queueUnderConcurrency(4, 4, true),
  ),
  'queue: six containers, three POSTs each': answeringWithinRetries(queueUnderConcurrency(6, 3, false)),
  'queue: six containers, three POSTs each, keyed': answeringWithinRetries(queueUnderConcurrency(6, 3, true)),
  [`queue: ${DEEP_QUEUE} containers at once, one keyed POST each`]: answeringWithinRetries(deepQueue(DEEP_QUEUE)),
};

/** The queue's scenarios whose random runs are few: a run of the deep queue is a hundred times a POST alone's. */
export const QUEUE_SEEDS_AT_MOST: Readonly<Record<string, number>> = {
  [`queue: ${DEEP_QUEUE} containers at once, one keyed POST each`]: 10,
};
