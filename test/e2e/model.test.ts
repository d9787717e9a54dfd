import { describe, it } from '@jest/globals';
import { ApiClient } from '../support/client';
import { Contract } from '../support/contract';
import { checkAgainstModel, modelOfLiveState } from '../support/model';
import { httpSender } from '../support/senders';
import { E2E_STORES, serverFor } from './servers';

/** The same property over real HTTP: fewer runs, each starting from the live server's state. */
describe.each(E2E_STORES)('the live service against the model ($store store)', ({ store }) => {
  it('agrees on every status, body and list, over 40 random sequences', async () => {
    const send = httpSender(new ApiClient(serverFor(__filename, store), new Contract()));
    await checkAgainstModel(async () => ({ model: await modelOfLiveState(send), real: { send } }), 40);
  }, 180_000);
});
