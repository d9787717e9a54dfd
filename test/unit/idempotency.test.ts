import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { bodyOf, event, invoke, type EventOptions } from '../support/event';
import { functionFor, handlersOn } from '../support/routes';
import type { HttpResponse } from '../../lib/http';
import { KEY_LIFETIME_MS, MAX_KEY_LENGTH, idempotencyClaim } from '../../lib/idempotency';
import { MAX_KEPT_CLAIMS, memoryStore, resetMemoryStore } from '../../lib/memory-store';
import { MAX_TITLE_LENGTH, applyPatch, createTodo, type TodoStore } from '../../lib/todos';
import { JSON_TYPE, expectBadRequest, expectCreated, expectTodoNotFound, seed } from '../support/expectations';
import { STORES } from '../support/stores';
import { recordsOf } from '../support/records';

/**
 * The Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header), handler by handler and
 * on each store: a retry gets the first answer again, whatever happened in between; a key reused
 * for another request is a 422; a malformed key a 400; and nothing changes in either case.
 */

/** A key in the draft's form: a quoted string. */
const key = (value: string) => `"${value}"`;
const keyed = (value: string, options: EventOptions): EventOptions => ({
  ...options,
  headers: { ...options.headers, 'idempotency-key': key(value) },
});

function expectReplay(response: HttpResponse, first: HttpResponse): void {
  expect(response).toEqual({ ...first, headers: { ...first.headers, 'idempotent-replayed': 'true' } });
}

describe.each(STORES)('Idempotency-Key ($name store)', (fixture) => {
  let store: TodoStore;
  let send: (options: EventOptions) => Promise<HttpResponse>;
  beforeEach(async () => {
    store = await fixture.fresh();
    const handlers = handlersOn(store);
    send = (options) => {
      const name = functionFor(options.method ?? 'GET', options.id !== undefined);
      if (name === undefined) throw new Error(`no route for ${options.method ?? 'GET'}`);
      return invoke(handlers[name], event(options));
    };
  });
  const titles = async () => (await recordsOf(store)).map((todo) => todo.title);

  it('answers a retried POST with the first 201, its Location and Idempotent-Replayed, and creates one record', async () => {
    const post = keyed('post-1', { method: 'POST', body: { title: 'once' } });
    const first = await send(post);
    expectCreated(first, createTodo({ title: 'once' }, 3));
    expectReplay(await send(post), first);
    expectReplay(await send(post), first);
    expect(await titles()).toEqual([expect.any(String), expect.any(String), 'once']);
  });

  it('answers a retried POST with the record as created, even after it changed', async () => {
    const post = keyed('post-2', { method: 'POST', body: { title: 'as created' } });
    const first = await send(post);
    const change = { title: 'changed since', completed: true };
    await send({ method: 'PUT', id: '3', body: change });
    expectReplay(await send(post), first);
    expect(await store.get(3)).toEqual(applyPatch(createTodo({ title: 'as created' }, 3), change));
  });

  it('answers a retried PUT with the first 200, and leaves a later PUT standing', async () => {
    const put = keyed('put-1', { method: 'PUT', id: '1', body: { title: 'first' } });
    const first = await send(put);
    expect(bodyOf(first)).toEqual(applyPatch(seed(1), { title: 'first' }));
    await send(keyed('put-2', { method: 'PUT', id: '1', body: { title: 'later' } }));
    expectReplay(await send(put), first);
    expect(await store.get(1)).toEqual(applyPatch(seed(1), { title: 'later' }));
  });

  it('answers a retried DELETE with the first 200 "Deleted", not 404', async () => {
    const del = keyed('delete-1', { method: 'DELETE', id: '2' });
    const first = await send(del);
    expect(first).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'Deleted',
    });
    expectReplay(await send(del), first);
    // Without the key, the retry is what it always was: the record is gone.
    expectTodoNotFound(await send({ method: 'DELETE', id: '2' }));
  });

  it.each([
    ['another body', { method: 'POST', body: { title: 'other' } }],
    ['the same body with other spacing', { method: 'POST', rawBody: '{ "title": "first" }' }],
    ['another method and path', { method: 'PUT', id: '1', body: { title: 'first' } }],
    ['another record', { method: 'DELETE', id: '1' }],
  ] as const)('answers 422 and changes nothing when the key comes again with %s', async (_case, options) => {
    await send(keyed('reused', { method: 'POST', rawBody: '{"title":"first"}' }));
    const before = await recordsOf(store);
    const response = await send(keyed('reused', options));
    expect(response.statusCode).toBe(422);
    expect(response.headers).toEqual({ 'content-type': JSON_TYPE });
    expect(bodyOf(response)).toEqual({ error: 'Idempotency-Key was used with a different request' });
    expect(await recordsOf(store)).toEqual(before);
  });

  it.each([
    ['unquoted', 'abc'],
    ['empty', '""'],
    ['empty, unquoted', ''],
    [`longer than ${MAX_KEY_LENGTH} characters`, key('k'.repeat(MAX_KEY_LENGTH + 1))],
    ['with a character outside printable ASCII', key('clé')],
    ['with a control character', key('a\tb')],
    ['with an unescaped quote', '"a"b"'],
    ['with a lone backslash', '"a\\b"'],
    ['two keys (the header sent twice)', '"a","b"'],
    ['with parameters', '"a";p=1'],
  ])('answers 400 for a key %s, and changes nothing', async (_case, value) => {
    const before = await recordsOf(store);
    for (const options of [
      { method: 'POST', body: { title: 'x' } },
      { method: 'PUT', id: '1', body: { title: 'x' } },
      { method: 'DELETE', id: '1' },
    ] as const) {
      const response = await send({ ...options, headers: { 'idempotency-key': value } });
      expectBadRequest(response);
      expect(bodyOf(response)).toEqual({ error: expect.stringContaining('Idempotency-Key') });
    }
    expect(await recordsOf(store)).toEqual(before);
  });

  it.each([
    ['of 255 characters', key('k'.repeat(MAX_KEY_LENGTH))],
    ['with escaped quotes and backslashes', '"a\\"b\\\\c"'],
    ['a UUID', key('8e03978e-40d5-43e8-bc93-6894a57f9324')],
  ])('takes a key %s', async (_case, value) => {
    const post = { method: 'POST', body: { title: 'keyed' }, headers: { 'idempotency-key': value } } as const;
    const first = await send(post);
    expect(first.statusCode).toBe(201);
    expectReplay(await send(post), first);
  });

  it('does not claim a key for a request that changed nothing: a 404, then the key for another request', async () => {
    expectTodoNotFound(await send(keyed('not-used', { method: 'PUT', id: '99', body: { title: 'x' } })));
    expectTodoNotFound(await send(keyed('not-used', { method: 'DELETE', id: '99' })));
    expect((await send(keyed('not-used', { method: 'POST', body: { title: 'now used' } }))).statusCode).toBe(201);
  });

  it('ignores the header on GET, which is safe to retry as it is', async () => {
    expect((await send({ id: '1', headers: { 'idempotency-key': 'not even quoted' } })).statusCode).toBe(200);
  });

  // During a deploy another version may take a request this one refuses (a title past a cap it does not have, say):
  // once stored under its key, this version answers the key with what is stored, not a 400 that says nothing changed.
  it.each([
    ['POST', { method: 'POST', body: { title: 'x'.repeat(MAX_TITLE_LENGTH + 1) } }],
    ['PUT', { method: 'PUT', id: '1', body: { title: 'x'.repeat(MAX_TITLE_LENGTH + 1) } }],
  ] as const)(
    'replays a %s this version refuses when its key holds what another version stored for it',
    async (_method, options) => {
      const request = keyed('another version took it', options);
      expectBadRequest(await send(request));
      // As the other version stores it: the same request's claim, beside its write.
      const sent = event(request);
      const claim = idempotencyClaim(sent, sent.body);
      if (claim === undefined) throw new Error('the request has no key');
      const title = (options.body as { title: string }).title;
      const stored =
        options.method === 'POST'
          ? (await store.create({ title }, { claim })).value
          : (await store.update(1, { title }, { claim }))?.value;

      const again = await send(request);
      expect(again.statusCode).toBe(options.method === 'POST' ? 201 : 200);
      expect(again.headers).toMatchObject({ 'idempotent-replayed': 'true' });
      expect(bodyOf(again)).toEqual(stored);
      // The same body under another key, or none, is still the 400 it was: nothing is stored for it.
      expectBadRequest(await send(keyed('never used', options)));
      expectBadRequest(await send(options));
    },
  );
});

describe('the memory store’s keys', () => {
  beforeEach(() => {
    resetMemoryStore();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  // The DynamoDB store's are in test/unit/exactly-once.test.ts: its requests are signed with the time.
  it('are forgotten after 24 hours: the same request is then a new one', async () => {
    const post = handlersOn(memoryStore).createTodo;
    const request = event(keyed('day-old', { method: 'POST', body: { title: 'again' } }));
    expect(bodyOf(await invoke(post, request))).toMatchObject({ id: 3 });
    jest.spyOn(Date, 'now').mockReturnValue(Date.now() + KEY_LIFETIME_MS + 1_000);
    const response = await invoke(post, request);
    expect(response.headers).not.toHaveProperty('idempotent-replayed');
    expect(bodyOf(response)).toMatchObject({ id: 4, title: 'again' });
  });

  it(`keeps at most ${MAX_KEPT_CLAIMS}, forgetting the oldest first`, async () => {
    const post = handlersOn(memoryStore).createTodo;
    const sent = (i: number) => invoke(post, event(keyed(`k${i}`, { method: 'POST', body: { title: `t${i}` } })));
    for (let i = 0; i <= MAX_KEPT_CLAIMS; i++) await sent(i);
    // k0 was forgotten: its request is a new one. k1 is still kept.
    expect((await sent(0)).headers).not.toHaveProperty('idempotent-replayed');
    expect((await sent(2)).headers).toHaveProperty('idempotent-replayed', 'true');
  });

  it('keeps a key claimed again after it expired as the newest, and forgets no other key for it', async () => {
    const post = handlersOn(memoryStore).createTodo;
    const sent = (i: number) => invoke(post, event(keyed(`k${i}`, { method: 'POST', body: { title: `t${i}` } })));
    for (let i = 0; i < MAX_KEPT_CLAIMS; i++) await sent(i);
    // A day later every key has expired, and k5 is claimed again, by a new request.
    jest.spyOn(Date, 'now').mockReturnValue(Date.now() + KEY_LIFETIME_MS + 1_000);
    expect((await sent(5)).headers).not.toHaveProperty('idempotent-replayed');
    // Six new keys push out the six oldest claims: k0 to k4, and k6. Not k5, the newest but six.
    for (let i = MAX_KEPT_CLAIMS; i < MAX_KEPT_CLAIMS + 6; i++) await sent(i);
    expect((await sent(5)).headers).toHaveProperty('idempotent-replayed', 'true');
  });
});
