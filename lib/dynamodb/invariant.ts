import { StoreUnavailable } from '../errors';
import { log } from '../log';

/**
 * Assertions of what the DynamoDB store relies on, where it relies on it (as TigerBeetle's TIGER_STYLE asks): a commit's
 * ids continue the counter in order with no gap, a record's size is what the counter moves by, an outcome goes with its
 * record, … The simulator checks these from outside after every step (harness/simulation/invariants.ts); these check
 * them from inside, before a write is sent, so that a wrong state stops the request instead of being written.
 */

/** What an invariant's log line may carry: ids, counts, sizes, versions and names, never a title (a user's text). */
export type InvariantState = Readonly<Record<string, number | string | boolean | undefined | readonly number[]>>;

/** An invariant did not hold: the request is answered 503 and writes nothing further (a queued POST is not retracted). */
export class InvariantFailed extends StoreUnavailable {
  constructor(readonly invariant: string) {
    super(`the store's invariant failed: ${invariant}`);
  }
}

/**
 * Asserts that `holds`: otherwise logs the invariant by `name` with `state` at error level, and throws InvariantFailed.
 * `state` is built only when it fails: pass a function, so that an assertion on a hot path costs a comparison.
 */
export function invariant(holds: boolean, name: string, state: () => InvariantState): asserts holds {
  if (holds) return;
  log('error', { message: 'invariant failed', invariant: name, ...state() });
  throw new InvariantFailed(name);
}
