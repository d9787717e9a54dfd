import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiClient } from '../support/client';
import { START_WITHIN_MS, startOffline, type OfflineServer } from '../../harness/offline';
import { scratchCopy, type ScratchCopy } from '../../harness/scratch';
import { eventually } from '../../harness/wait';

/** A rebuild of five bundles takes well under a second idle (npm run bench -- reload); this allows for a busy machine. */
const RELOAD_WITHIN_MS = 30_000;

/** `npm run dev` serves a saved edit without a restart and keeps the data; `npm start` does not reload. */
describe('npm run dev', () => {
  let scratch: ScratchCopy;
  let dev: OfflineServer;
  let start: OfflineServer;
  beforeAll(async () => {
    scratch = scratchCopy();
    [dev, start] = await Promise.all([
      startOffline({ script: 'dev', cwd: scratch.dir }),
      startOffline({ script: 'start', cwd: scratch.dir }),
    ]);
  }, START_WITHIN_MS);
  afterAll(async () => {
    await Promise.all([dev.stop(), start.stop()]);
    scratch.remove();
  });

  it(
    'serves an edit to lib/ on the next requests, with the records made before it still there',
    async () => {
      const api = new ApiClient(dev.url);
      const plain = new ApiClient(start.url);
      expect((await api.post('/todos', { title: 'made before the edit' })).status).toBe(201);
      expect((await api.get('/todos/99')).json()).toEqual({ error: 'Todo not found' });
      expect((await plain.get('/todos/99')).json()).toEqual({ error: 'Todo not found' });

      const file = join(scratch.dir, 'lib/http.ts');
      writeFileSync(file, readFileSync(file, 'utf8').replace("'Todo not found'", "'Todo not found (edited)'"));

      await eventually(async () => JSON.stringify((await api.get('/todos/99')).json()).includes('(edited)'), {
        within: RELOAD_WITHIN_MS,
        what: 'npm run dev serving the edit',
      });
      expect((await api.get('/todos/3')).json()).toEqual({ id: 3, title: 'made before the edit', completed: false });
      expect((await api.post('/todos', { title: 'after' })).json()).toMatchObject({ id: 4 });
      // The plain server, in the same folder, still runs the code it started with: it watches nothing.
      expect((await plain.get('/todos/99')).json()).toEqual({ error: 'Todo not found' });
      expect(start.output()).not.toContain('Reloaded');
      expect(dev.output()).toContain('Reloaded');
    },
    2 * RELOAD_WITHIN_MS,
  );
});
