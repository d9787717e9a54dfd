import { PACING, type Pacing } from '../../lib/dynamodb/pacing';

/**
 * A pacing that decides every *when* of the queue at random, from the run's seeded chance (lib/dynamodb/pacing.ts):
 * whether a POST queues or is written alone, how long a waiting POST pauses, whether it stays, looks closer or takes
 * itself back, how long a head's lease is, how long before its deadline it gives up. The queue's protocol must be
 * exact whatever its pacing decides (docs/design.md, "The queue as a state machine"): the simulator runs the queue's
 * scenarios under this pacing too, and holds every run to the same invariants. Not to liveness: a pacing that gives
 * up at once may answer 503 where the store's would not.
 */
export function adversarialPacing(random: () => number): Pacing {
  /** A whole number of milliseconds from 0 to `most`. */
  function upTo(most: number): number {
    return Math.floor(random() * (most + 1));
  }
  return {
    // One process's POSTs together or not is drawn once a container, as the option is.
    batchPosts: random() < 0.5,
    queues: () => random() < 0.5,
    retractBeforeMs: upTo(2 * PACING.retractBeforeMs),
    headLeaseMs: upTo(2 * PACING.headLeaseMs),
    afterLook: PACING.afterLook,
    reach(pace) {
      const draw = random();
      // Mostly it stays, so that commits happen; one look in five it looks closer or gives up.
      if (pace.inNextCommit === undefined && draw < 0.1) return 'look closer';
      return draw < 0.2 ? 'out of reach' : 'stays';
    },
    // Mostly short pauses (more interleavings of looks and commits), now and then one past a head's lease.
    pauseBeforeLook: () => (random() < 0.8 ? upTo(50) : upTo(2 * PACING.headLeaseMs)),
    commitMs: () => upTo(100),
  };
}
