import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { START_WITHIN_MS } from '../../harness/offline';
import { E2E_STORES, startService, type Service } from '../support/servers';
import {
  expectInterruptedWithAPostInFlight,
  expectPassingRunThatLeavesTheList,
  runSmokeCommand,
  SMOKE_WITHIN_MS,
} from '../support/smoke-command';
import type { StageProxy } from '../support/stage-proxy';

/**
 * `npm run smoke` against `npm start` and `npm run start:dynamodb` (serverless offline with the
 * DynamoDB store on the run's DynamoDB Local): every check passes, and the stage is left as it
 * was, also when the run is interrupted with Ctrl-C while one of its POSTs is in flight.
 */
/** A signal's handler runs within milliseconds of it; this leaves room for a busy machine. */
const SIGNAL_WITHIN_MS = 10_000;

describe.each(E2E_STORES)('npm run smoke against the %s store', (store) => {
  let service: Service;
  beforeAll(async () => {
    service = await startService(store);
  }, START_WITHIN_MS);
  afterAll(() => service.stop());

  const list = async () => (await service.api.get('/todos')).json();

  it(
    'passes every check, and leaves the list as it was: records 1 and 2 untouched',
    () => expectPassingRunThatLeavesTheList(service.url, list),
    SMOKE_WITHIN_MS,
  );

  it(
    'passes on a stage in use, without records 1 and 2',
    async () => {
      for (const id of [1, 2]) await service.api.delete(`/todos/${id}`);
      const before = await list();
      const result = await runSmokeCommand(service.url);
      expect(result.status).toBe(0);
      expect(await list()).toEqual(before);
    },
    SMOKE_WITHIN_MS,
  );

  describe('interrupted with Ctrl-C', () => {
    let proxy: StageProxy | undefined;
    afterEach(async () => {
      await proxy?.close();
      proxy = undefined;
    });

    it(
      'while a POST is in flight: it gives that POST up at once, deletes every record it knows, names the one that may still come, and exits 130',
      async () => {
        const before = await list();
        const interrupted = await expectInterruptedWithAPostInFlight(service.url, list, {
          exitsWithin: SIGNAL_WITHIN_MS,
          recordWithin: SIGNAL_WITHIN_MS,
        });
        proxy = interrupted.proxy;
        expect(interrupted.report?.notRun.length).toBeGreaterThan(0);
        await service.api.delete(`/todos/${interrupted.late.id}`);
        expect(await list()).toEqual(before);
      },
      SMOKE_WITHIN_MS,
    );
  });
});
