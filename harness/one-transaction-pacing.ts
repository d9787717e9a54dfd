import { PACING as QUEUE_PACING, type Pacing } from '../lib/dynamodb/pacing';

/**
 * The design the queue of POSTs replaced, as a pacing of the bench's own (lib/dynamodb/pacing.ts, `Pacing`): a POST
 * never queues. It is written alone in one transaction from the counter its container knows, and again from the
 * counter as it is when another container moved it. The scale model runs the store with it (harness/simulation/
 * scale.ts), and the fleet bench ships zips built with this module in place of lib/dynamodb/pacing.ts
 * (harness/versions.ts, `packageWith`): so no switch for it stays in the store's options or configuration.
 */
export const ONE_TRANSACTION_A_POST: Pacing = { ...QUEUE_PACING, queues: () => false };

// As lib/dynamodb/pacing.ts, but for the pacing the store runs with.
export * from '../lib/dynamodb/pacing';
export const PACING = ONE_TRANSACTION_A_POST;
