import { describe, it } from '@jest/globals';
import { checkAgainstModel } from '../support/arbitraries';
import { ONLY_A_HANG_MS } from '../support/bounds';
import { seededModel } from '../support/model';
import { handlerSender } from '../support/senders';
import { STORES } from '../support/stores';

/** Thousands of random command sequences, valid and hostile, against the handlers and the model. */
const RUNS = { memory: 5_000, dynamodb: 150 } as const;
/**
 * On the memory store the runs are work alone, bounded by RUNS: only a hang meets their bound
 * (test/support/bounds.ts). On DynamoDB Local each run waits on it: up to 25 commands and a list
 * after each, a few ms a request idle; 120 s allows for a busy machine.
 */
const WITHIN_MS = { memory: ONLY_A_HANG_MS, dynamodb: 120_000 } as const;

describe.each(STORES)('the handlers against the model ($name store)', (fixture) => {
  it(
    `agree on every status, body and list, over ${RUNS[fixture.name]} random sequences`,
    async () => {
      await checkAgainstModel(
        async () => ({ model: seededModel(), real: { send: handlerSender(await fixture.fresh()) } }),
        RUNS[fixture.name],
      );
    },
    WITHIN_MS[fixture.name],
  );
});
