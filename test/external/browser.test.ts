import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser } from 'playwright-core';
import { FUNCTION_TIMEOUT_MS } from '../support/event';
import { startFaultProxy, type FaultProxy } from '../../harness/fault-proxy';
import { START_WITHIN_MS, startOffline, type OfflineServer } from '../../harness/offline';
import { applyPatch, createTodo } from '../../lib/todos';
import { startService, type Service } from '../support/servers';
import { testDynamoDbEndpoint } from '../support/stores';

/** Debian's Chromium (apt-get install chromium); .ci/run installs it when it is missing. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/**
 * Without the network flags Chromium keeps calling home, which this machine's network refuses.
 * (Playwright adds --headless itself.)
 */
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** What the page does with the API, in the browser, with fetch(); it reports what it could read. */
async function useTheApi(api: string) {
  const json = { 'content-type': 'application/json' };
  const created = await fetch(`${api}/todos`, { method: 'POST', headers: json, body: '{"title":"from a browser"}' });
  const location = created.headers.get('location');
  const todo = (await created.json()) as { id: number };
  const read = await fetch(`${api}${location ?? ''}`);
  const updated = await fetch(`${api}/todos/${todo.id}`, { method: 'PUT', headers: json, body: '{"completed":true}' });
  const listed = await fetch(`${api}/todos`);
  const deleted = await fetch(`${api}/todos/${todo.id}`, { method: 'DELETE' });
  const gone = await fetch(`${api}/todos/${todo.id}`);
  const malformed = await fetch(`${api}/todos`, { method: 'POST', headers: json, body: '{"title":' });
  // A keyed POST sent twice: the preflight must allow the Idempotency-Key header, and the page
  // must be able to read Idempotent-Replayed.
  const keyed = { ...json, 'idempotency-key': `"${crypto.randomUUID()}"` };
  const keyedFirst = await fetch(`${api}/todos`, { method: 'POST', headers: keyed, body: '{"title":"keyed"}' });
  const keyedAgain = await fetch(`${api}/todos`, { method: 'POST', headers: keyed, body: '{"title":"keyed"}' });
  return {
    created: { status: created.status, location, body: todo },
    read: { status: read.status, body: await read.json() },
    updated: { status: updated.status, body: await updated.json() },
    listed: { status: listed.status, body: await listed.json() },
    deleted: { status: deleted.status, type: deleted.headers.get('content-type'), text: await deleted.text() },
    gone: { status: gone.status, body: await gone.json() },
    malformed: { status: malformed.status, body: await malformed.json() },
    keyedFirst: {
      status: keyedFirst.status,
      replayed: keyedFirst.headers.get('idempotent-replayed'),
      body: await keyedFirst.text(),
    },
    keyedAgain: {
      status: keyedAgain.status,
      replayed: keyedAgain.headers.get('idempotent-replayed'),
      body: await keyedAgain.text(),
    },
  };
}

/** One tab: reads record `id` and keeps its ETag, as an editing form would. */
async function readInTab([api, id]: readonly [string, number]) {
  const read = await fetch(`${api}/todos/${id}`);
  return { etag: read.headers.get('etag'), todo: (await read.json()) as { title: string } };
}

/** One tab saves its edit of record `id`, naming the ETag it read; it reports what it could read of the answer. */
async function saveInTab([api, id, etag, title]: readonly [string, number, string, string]) {
  const saved = await fetch(`${api}/todos/${id}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', 'if-match': etag },
    body: JSON.stringify({ title }),
  });
  return { status: saved.status, etag: saved.headers.get('etag'), body: await saved.json() };
}

/** A page reads an answer that asks it to come back later: its status, when (Retry-After), and why. */
async function readLater(url: string) {
  const answer = await fetch(url);
  return { status: answer.status, retryAfter: answer.headers.get('retry-after'), body: await answer.json() };
}

/**
 * A page served from another origin uses every operation of the API from a real browser,
 * through CORS: the preflights, reading Location, the text of `Deleted`, and the JSON errors.
 */
describe('the API from a page on another origin, in Chromium', () => {
  let api: OfflineServer | undefined;
  let site: Server | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    api = await startOffline({ script: 'start' });
    // 127.0.0.1 is another origin than the API's localhost, as another site would be.
    site = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title>');
    }).listen(0, '127.0.0.1');
    await once(site, 'listening');
    // A new, empty profile of Playwright's making.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  }, START_WITHIN_MS);
  afterAll(async () => {
    await browser?.close();
    site?.close();
    await api?.stop();
  });

  it('creates, reads, updates, lists and deletes, reads Location, "Deleted" and the errors, and retries a keyed POST', async () => {
    if (browser === undefined || site === undefined || api === undefined) throw new Error('not started');
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
    const seen = await page.evaluate(useTheApi, api.url);
    const id = seen.created.body.id;
    const created = createTodo({ title: 'from a browser' }, id);
    const updated = applyPatch(created, { completed: true });
    expect(seen).toEqual({
      created: { status: 201, location: `/todos/${id}`, body: created },
      read: { status: 200, body: created },
      updated: { status: 200, body: updated },
      listed: { status: 200, body: expect.arrayContaining([updated]) },
      deleted: { status: 200, type: 'text/plain; charset=utf-8', text: 'Deleted' },
      gone: { status: 404, body: { error: 'Todo not found' } },
      malformed: { status: 400, body: { error: expect.any(String) } },
      keyedFirst: { status: 201, replayed: null, body: expect.stringContaining('"title":"keyed"') },
      keyedAgain: { status: 201, replayed: 'true', body: seen.keyedFirst.body },
    });
  });

  it('edits one record from two tabs: the second save, made from what it read before the first, gets the 412', async () => {
    if (browser === undefined || site === undefined || api === undefined) throw new Error('not started');
    const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    const [laptop, phone] = [await browser.newPage(), await browser.newPage()];
    await Promise.all([laptop.goto(origin), phone.goto(origin)]);
    const created = await fetch(`${api.url}/todos`, { method: 'POST', body: '{"title":"edited twice"}' });
    const { id } = (await created.json()) as { id: number };
    const [onLaptop, onPhone] = await Promise.all([
      laptop.evaluate(readInTab, [api.url, id] as const),
      phone.evaluate(readInTab, [api.url, id] as const),
    ]);
    expect(onLaptop.etag).toMatch(/^"[\w-]{22}"$/);
    expect(onPhone.etag).toBe(onLaptop.etag);
    const first = await laptop.evaluate(saveInTab, [api.url, id, onLaptop.etag ?? '', 'from the laptop'] as const);
    const second = await phone.evaluate(saveInTab, [api.url, id, onPhone.etag ?? '', 'from the phone'] as const);
    const saved = applyPatch(createTodo({ title: 'edited twice' }, id), { title: 'from the laptop' });
    expect(first).toEqual({ status: 200, etag: expect.stringMatching(/^"[\w-]{22}"$/), body: saved });
    expect(second).toEqual({
      status: 412,
      etag: null,
      body: { error: expect.stringContaining('changed since it was read') },
    });
    expect(await (await fetch(`${api.url}/todos/${id}`)).json()).toEqual(saved);
  });
  /**
   * `npm run start:dynamodb` in front of a DynamoDB that stops answering: its 503 says when to come
   * back in Retry-After, which a page of another origin can read only if CORS exposes it (as for a
   * 409 of a key in progress, or the gateway's 429).
   */
  describe('with a store that stops answering', () => {
    let network: FaultProxy | undefined;
    let frozen: Service | undefined;
    beforeAll(async () => {
      network = await startFaultProxy(testDynamoDbEndpoint());
      frozen = await startService('dynamodb', { DYNAMODB_ENDPOINT: network.endpoint });
    }, START_WITHIN_MS);
    afterAll(async () => {
      await frozen?.stop();
      await network?.close();
    });

    it(
      'reads the 503’s Retry-After from the page',
      async () => {
        if (browser === undefined || site === undefined || network === undefined || frozen === undefined) {
          throw new Error('not started');
        }
        const page = await browser.newPage();
        await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
        network.freeze();
        expect(await page.evaluate(readLater, `${frozen.url}/todos/1`)).toEqual({
          status: 503,
          retryAfter: '1',
          body: { error: 'Service temporarily unavailable, please retry' },
        });
      },
      2 * FUNCTION_TIMEOUT_MS,
    );
  });
});
