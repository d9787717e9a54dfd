import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runLoad } from '../../harness/load';
import { START_WITHIN_MS } from '../../harness/offline';
import { checkAgainstModel } from '../support/arbitraries';
import { modelOfLiveState } from '../support/model';
import { httpSender } from '../support/senders';
import { E2E_STORES, startService, type Service } from '../support/servers';

const MODEL_RUNS = 40;
/** Each run is up to 25 commands, each followed by a list: a few hundred requests of a few ms. */
const MODEL_WITHIN_MS = 180_000;
const LOAD_MAX_SECONDS = 60;

/**
 * The live service used as clients use it: random command sequences checked against the model
 * (the property of test/unit/model.test.ts, over real HTTP), and concurrent load checked for loss.
 * Both hold whatever state the other left: the model starts from the live state, and the load
 * check reads what the load itself did.
 */
describe.each(E2E_STORES)('the live service (%s store)', (store) => {
  let service: Service;
  beforeAll(async () => {
    service = await startService(store);
  }, START_WITHIN_MS);
  afterAll(() => service.stop());

  it(
    `agrees with the model on every status, body and list, over ${MODEL_RUNS} random sequences`,
    async () => {
      const send = httpSender(service.api);
      await checkAgainstModel(async () => ({ model: await modelOfLiveState(send), real: { send } }), MODEL_RUNS);
    },
    MODEL_WITHIN_MS,
  );

  // `npm run load`, smaller. No timing is asserted; the run itself is bounded at LOAD_MAX_SECONDS.
  it(
    'under load keeps every acknowledged create, forgets every acknowledged delete, reuses no id, answers no 5xx',
    async () => {
      const report = await runLoad(service.url, { amount: 3_000, connections: 16, maxSeconds: LOAD_MAX_SECONDS });
      expect(report.problems).toEqual([]);
      expect(report.requests).toBe(3_000);
      expect(report.errors).toBe(0);
      expect(report.created).toBeGreaterThan(500);
      expect(report.deleted).toBeGreaterThan(100);
    },
    2 * LOAD_MAX_SECONDS * 1_000,
  );
});
