import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { START_WITHIN_MS } from '../../harness/offline';
import { eventually } from '../../harness/wait';
import { E2E_STORES, startService, type Service } from '../support/servers';
import {
  expectPassingRunThatLeavesTheList,
  linesOf,
  runSmokeCommand,
  SMOKE_WITHIN_MS,
  startSmoke,
} from '../support/smoke-command';
import { startStageProxy, type StageProxy } from '../support/stage-proxy';

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
        let posts = 0;
        // The third POST waits until the test releases it: the run is then surely mid-way, with
        // records made, and a create in flight that Ctrl-C gives up.
        proxy = await startStageProxy(service.url, { hold: (method) => method === 'POST' && ++posts === 3 });
        const run = startSmoke([proxy.url]);
        await proxy.holding;
        run.interrupt();
        await eventually(() => !run.running(), { within: SIGNAL_WITHIN_MS, what: 'npm run smoke ending at Ctrl-C' });
        const result = await run.finished;
        expect(result.status).toBe(130);
        const titled = result.report?.records.titled ?? '';
        expect(linesOf(result.stderr)).toEqual([
          'Interrupted: deleting the records this run created, then stopping',
          `Cleanup: 1 POST got no answer and may still make a record, titled "${titled}…"`,
        ]);
        expect(result.stdout).toMatch(
          /\nInterrupted: \d+ of \d+ checks ran\nCleanup: deleted the 2 records this run created\n/,
        );
        expect(result.report).toMatchObject({
          result: 'interrupted',
          records: { created: 2, deleted: 2, left: [], unanswered: 1 },
        });
        expect(result.report?.notRun.length).toBeGreaterThan(0);
        expect(await list()).toEqual(before);
        // The POST given up reaches the stage after all: its record is the one the run named.
        proxy.release();
        const late = await eventually(
          async () => {
            const todos = (await list()) as { id: number; title: string }[];
            return todos.length > (before as unknown[]).length ? todos.at(-1) : undefined;
          },
          { within: SIGNAL_WITHIN_MS, what: 'the POST given up making its record' },
        );
        expect(late.title.startsWith(titled)).toBe(true);
        await service.api.delete(`/todos/${late.id}`);
        expect(await list()).toEqual(before);
      },
      SMOKE_WITHIN_MS,
    );
  });
});
