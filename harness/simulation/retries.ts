import { MAX_ATTEMPTS } from '../../lib/dynamodb/client';
import type { Fault, Faults } from './network';

/**
 * Liveness under faults: which fault scripts the client's retries cover (lib/dynamodb/client.ts),
 * so that a request meeting them must still be answered as with no fault, not 503.
 *
 * The client sends a request again after each failure, by its kind: a throttle (a read's or a
 * write's, ProvisionedThroughputExceededException or ThrottlingException) until the deadline, as a
 * plain write meeting a transaction in progress; a 500 or a copy with no answer (its timeout, a
 * reset connection) MAX_ATTEMPTS times in all, each kind counted apart. A transaction cancelled
 * for a conflict or a throttling error at one of its actions is sent again with its token until
 * the deadline (lib/dynamodb/transaction.ts, `commit`), and so is one whose fate the client left
 * unknown. So a script covers every request it meets, wherever its steps land, when it holds
 * fewer than MAX_ATTEMPTS steps of ATTEMPT_FAULTS: even all on the copies of one request, the
 * client's last attempt is left. Its other steps, throttles and conflicts, cost a pause each (well
 * under a second) and the searches' scripts hold at most five: a request within its deadline (9 s,
 * lib/http.ts) still has its answer.
 *
 * A scenario states that it answers so (`WorldOptions.answersWithinRetries`) where every request it
 * sends has an answer of its own to give: not where a copy held may land after a refusal and make
 * the honest answer a 503 (a full list's), nor where the queue's timing is the scenario's subject.
 */

/** The faults whose copy the client counts against its MAX_ATTEMPTS: a 500, or no answer (held, lost, in progress, reset). */
export const ATTEMPT_FAULTS: readonly Fault[] = [
  'held',
  'lost',
  'in progress',
  '500 before',
  '500 after',
  'reset before',
  'reset after',
  'read timeout',
  'read 500',
];

/** Whether the client's retries cover every request that meets `faults` (see above); never for faults drawn at a rate. */
export function coveredByRetries(faults: Faults): boolean {
  if ('rate' in faults) return false;
  return faults.filter(({ fault }) => ATTEMPT_FAULTS.includes(fault)).length < MAX_ATTEMPTS;
}
