import { describe, it } from '@jest/globals';
import { checkAgainstModel } from '../support/arbitraries';
import { seededModel } from '../support/model';
import { handlerSender } from '../support/senders';
import { STORES } from '../support/stores';

/** Thousands of random command sequences, valid and hostile, against the handlers and the model. */
const RUNS = { memory: 5_000, dynamodb: 150 } as const;

describe.each(STORES)('the handlers against the model ($name store)', (fixture) => {
  it(`agree on every status, body and list, over ${RUNS[fixture.name]} random sequences`, async () => {
    await checkAgainstModel(
      async () => ({ model: seededModel(), real: { send: handlerSender(await fixture.fresh()) } }),
      RUNS[fixture.name],
    );
  }, 120_000);
});
