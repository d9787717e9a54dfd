import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiClient } from '../support/client';
import { startOffline, type OfflineServer } from '../support/offline';
import { scratchCopy, type ScratchCopy } from '../support/scratch';

const sleep = (ms: number) =>
  new Promise((done) => {
    setTimeout(done, ms);
  });

/** Polls until `check` holds, or gives up after `timeoutMs`; true when it held. */
async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(50);
  }
  return false;
}

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
  }, 60_000);
  afterAll(async () => {
    await Promise.all([dev.stop(), start.stop()]);
    scratch.remove();
  });

  it('serves an edit to lib/ on the next requests, with the records made before it still there', async () => {
    const api = new ApiClient(dev.url);
    const plain = new ApiClient(start.url);
    expect((await api.post('/todos', { title: 'made before the edit' })).status).toBe(201);
    expect((await api.get('/todos/99')).json()).toEqual({ error: 'Todo not found' });
    expect((await plain.get('/todos/99')).json()).toEqual({ error: 'Todo not found' });

    const file = join(scratch.dir, 'lib/http.ts');
    writeFileSync(file, readFileSync(file, 'utf8').replace("'Todo not found'", "'Todo not found (edited)'"));

    const reloaded = await eventually(
      async () => JSON.stringify((await api.get('/todos/99')).json()).includes('(edited)'),
      15_000,
    );
    expect(reloaded).toBe(true);
    expect((await api.get('/todos/3')).json()).toEqual({ id: 3, title: 'made before the edit', completed: false });
    expect((await api.post('/todos', { title: 'after' })).json()).toMatchObject({ id: 4 });
    // The plain server, in the same folder, still runs the code it started with.
    await sleep(1_000);
    expect((await plain.get('/todos/99')).json()).toEqual({ error: 'Todo not found' });
  }, 60_000);
});
