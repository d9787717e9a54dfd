import { beforeEach, describe, expect, it } from '@jest/globals';
import { bodyOf, event, invoke, type EventOptions } from '../support/event';
import { functionFor, handlersOn } from '../support/routes';
import type { HttpResponse } from '../../lib/http';
import { applyPatch, type TodoStore } from '../../lib/todos';
import { JSON_TYPE, seed } from '../support/expectations';
import { STORES } from '../support/stores';
import { recordsOf } from '../support/records';

/**
 * Conditional requests (RFC 9110 §13, lib/conditional.ts), handler by handler and on each store:
 * every Todo and the list carry an ETag; If-None-Match on a GET answers 304; If-Match on a PUT
 * or DELETE writes only while the record is the one the client read, else 412 and nothing
 * changes; If-None-Match on a PUT or DELETE, and If-Match on a GET, are 412 when they fail; each
 * 412 says which condition failed; and with an Idempotency-Key a retry gets the first answer, a
 * 412 included.
 */

/** A 412 that says `error`: which of the request's conditions failed. */
const failed = (error: string) => ({
  statusCode: 412,
  headers: { 'content-type': JSON_TYPE },
  body: JSON.stringify({ error }),
});
const PRECONDITION_FAILED = failed('The Todo has changed since it was read: read it again (a new ETag) and retry');
const WEAK_TAG = failed(
  'If-Match compares strongly, so a weak tag (W/"...") never matches: send the ETag as the Todo\'s answers give it',
);
const EXISTS = failed('The Todo exists, and If-None-Match: * asks that it does not: nothing was changed');
const NAMED = failed('If-None-Match names the Todo as it is now: nothing was changed');
const BOTH = failed('The Todo is not as If-Match and If-None-Match ask: read it again (a new ETag) and decide');
const WEAK_LIST = failed("The list's ETag is weak, and If-Match compares strongly: only If-Match: * matches the list");
/** The same 412, answered again to a retry with its Idempotency-Key. */
const REPLAYED_412 = {
  ...PRECONDITION_FAILED,
  headers: { ...PRECONDITION_FAILED.headers, 'idempotent-replayed': 'true' },
};

function etagOf(response: HttpResponse): string {
  const etag = response.headers?.etag;
  if (typeof etag !== 'string') throw new Error(`no ETag in ${JSON.stringify(response)}`);
  return etag;
}

describe.each(STORES)('conditional requests ($name store)', (fixture) => {
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
  const withHeader = (options: EventOptions, name: string, value: string): EventOptions => ({
    ...options,
    headers: { ...options.headers, [name]: value },
  });

  describe('ETag', () => {
    it('is the same on GET, PUT and POST answers of one record, strong, and changes when the record does', async () => {
      const created = await send({ method: 'POST', body: { title: 'tagged' } });
      const read = await send({ id: '3' });
      expect(etagOf(created)).toMatch(/^"[\w-]{22}"$/);
      expect(etagOf(read)).toBe(etagOf(created));
      const changed = await send({ method: 'PUT', id: '3', body: { completed: true } });
      expect(etagOf(changed)).not.toBe(etagOf(created));
      expect(etagOf(await send({ id: '3' }))).toBe(etagOf(changed));
      // Put back as it was, the record has its first tag again: the tag is taken from the content.
      expect(etagOf(await send({ method: 'PUT', id: '3', body: { completed: false } }))).toBe(etagOf(created));
    });

    it('on the list is weak, one for both encodings, and changes when any record does', async () => {
      // A list long enough for gzip to pay (lib/http.ts): records of short titles, whatever a title's limit.
      for (let i = 0; i < 30; i++) await send({ method: 'POST', body: { title: `a record of a long list ${i}` } });
      const plain = await send({});
      const zipped = await send({ headers: { 'accept-encoding': 'gzip' } });
      expect(zipped.headers?.['content-encoding']).toBe('gzip');
      expect(etagOf(plain)).toMatch(/^W\/"[\w-]{22}"$/);
      expect(etagOf(zipped)).toBe(etagOf(plain));
      await send({ method: 'PUT', id: '1', body: { completed: true } });
      expect(etagOf(await send({}))).not.toBe(etagOf(plain));
    });
  });

  describe('If-None-Match on GET', () => {
    it('answers 304 with no body when it names the record’s tag, and 200 when the record changed since', async () => {
      const first = await send({ id: '1' });
      const current = await send(withHeader({ id: '1' }, 'if-none-match', etagOf(first)));
      expect(current).toEqual({ statusCode: 304, headers: { etag: etagOf(first) }, body: '' });
      await send({ method: 'PUT', id: '1', body: { title: 'changed' } });
      const changed = await send(withHeader({ id: '1' }, 'if-none-match', etagOf(first)));
      expect(changed.statusCode).toBe(200);
      expect(bodyOf(changed)).toEqual(applyPatch(seed(1), { title: 'changed' }));
    });

    it('answers 304 for the list, by the weak comparison, in a list of tags, or for *', async () => {
      const list = await send({ headers: { 'accept-encoding': 'gzip' } });
      const opaque = etagOf(list).slice(2);
      for (const header of [etagOf(list), opaque, `"other", ${etagOf(list)}`, '*']) {
        const answer = await send(withHeader({}, 'if-none-match', header));
        expect(answer).toEqual({
          statusCode: 304,
          headers: { vary: 'accept-encoding', etag: etagOf(list) },
          body: '',
        });
      }
    });

    it('answers 200 as without it when it names another tag, and 404 for a missing record', async () => {
      const other = await send(withHeader({ id: '2' }, 'if-none-match', '"another"'));
      expect(other).toEqual(await send({ id: '2' }));
      expect((await send(withHeader({ id: '99' }, 'if-none-match', '*'))).statusCode).toBe(404);
    });

    it.each(['abc', '"unterminated', 'W/abc', '"a" "b"'])('is a 400 when malformed: %s', async (header) => {
      for (const options of [{ id: '1' }, {}]) {
        const answer = await send(withHeader(options, 'if-none-match', header));
        expect(answer.statusCode).toBe(400);
        expect(bodyOf(answer)).toEqual({ error: 'If-None-Match must be * or a list of quoted entity tags' });
      }
    });
  });

  describe('If-Match on PUT and DELETE', () => {
    it('writes when it names the record’s tag, among others or not', async () => {
      const read = etagOf(await send({ id: '1' }));
      const put = await send(
        withHeader({ method: 'PUT', id: '1', body: { title: 'first' } }, 'if-match', `"x", ${read}`),
      );
      expect(put.statusCode).toBe(200);
      const deleted = await send(withHeader({ method: 'DELETE', id: '1' }, 'if-match', etagOf(put)));
      expect([deleted.statusCode, deleted.body]).toEqual([200, 'Deleted']);
      expect(await store.get(1)).toBeUndefined();
    });

    it('answers 412 and changes nothing when the record changed since it was read', async () => {
      const read = etagOf(await send({ id: '1' }));
      await send({ method: 'PUT', id: '1', body: { title: 'by the other tab' } });
      const before = await recordsOf(store);
      const put = await send(withHeader({ method: 'PUT', id: '1', body: { completed: true } }, 'if-match', read));
      const empty = await send(withHeader({ method: 'PUT', id: '1', body: {} }, 'if-match', read));
      const deleted = await send(withHeader({ method: 'DELETE', id: '1' }, 'if-match', read));
      expect([put, empty, deleted]).toEqual([PRECONDITION_FAILED, PRECONDITION_FAILED, PRECONDITION_FAILED]);
      expect(await recordsOf(store)).toEqual(before);
    });

    it('never matches a weak tag (the strong comparison), and its 412 says so, not that the record changed', async () => {
      const read = etagOf(await send({ id: '1' }));
      const before = await recordsOf(store);
      const put = await send(
        withHeader({ method: 'PUT', id: '1', body: { completed: true } }, 'if-match', `W/${read}`),
      );
      const deleted = await send(withHeader({ method: 'DELETE', id: '1' }, 'if-match', `W/"x", W/${read}`));
      expect([put, deleted]).toEqual([WEAK_TAG, WEAK_TAG]);
      expect(await recordsOf(store)).toEqual(before);
    });

    it('answers as without it for * (404 on a missing record), and 404 on a missing record whatever it names', async () => {
      expect(
        (await send(withHeader({ method: 'PUT', id: '2', body: { completed: false } }, 'if-match', '*'))).statusCode,
      ).toBe(200);
      for (const header of ['*', '"any"']) {
        expect(
          (await send(withHeader({ method: 'PUT', id: '99', body: { completed: true } }, 'if-match', header)))
            .statusCode,
        ).toBe(404);
        expect((await send(withHeader({ method: 'DELETE', id: '99' }, 'if-match', header))).statusCode).toBe(404);
      }
    });

    it('is a 400 when malformed, and nothing changes', async () => {
      const before = await recordsOf(store);
      const answer = await send(withHeader({ method: 'DELETE', id: '1' }, 'if-match', 'not-a-tag'));
      expect(answer.statusCode).toBe(400);
      expect(bodyOf(answer)).toEqual({ error: 'If-Match must be * or a list of quoted entity tags' });
      expect(await recordsOf(store)).toEqual(before);
    });
  });

  describe('If-None-Match on PUT and DELETE', () => {
    it('answers 412 for *, the record existing, and changes nothing', async () => {
      const before = await recordsOf(store);
      const put = await send(
        withHeader({ method: 'PUT', id: '1', body: { title: 'overwritten' } }, 'if-none-match', '*'),
      );
      const deleted = await send(withHeader({ method: 'DELETE', id: '2' }, 'if-none-match', ' * '));
      expect([put, deleted]).toEqual([EXISTS, EXISTS]);
      expect(await recordsOf(store)).toEqual(before);
    });

    it('answers 412 when it names the record’s tag, by the weak comparison, in a list or not; nothing changes', async () => {
      const read = etagOf(await send({ id: '1' }));
      const before = await recordsOf(store);
      for (const header of [read, `W/${read}`, `"other", ${read}`]) {
        const put = await send(
          withHeader({ method: 'PUT', id: '1', body: { completed: true } }, 'if-none-match', header),
        );
        const deleted = await send(withHeader({ method: 'DELETE', id: '1' }, 'if-none-match', header));
        expect([put, deleted]).toEqual([NAMED, NAMED]);
      }
      expect(await recordsOf(store)).toEqual(before);
    });

    it('writes when it names none of the record’s tags (a tag it had before, say)', async () => {
      const read = etagOf(await send({ id: '1' }));
      const put = await send({ method: 'PUT', id: '1', body: { title: 'changed' } });
      const again = await send(
        withHeader({ method: 'PUT', id: '1', body: { completed: true } }, 'if-none-match', `"x", ${read}`),
      );
      expect(again.statusCode).toBe(200);
      expect(bodyOf(again)).toEqual(applyPatch(seed(1), { title: 'changed', completed: true }));
      const deleted = await send(withHeader({ method: 'DELETE', id: '1' }, 'if-none-match', etagOf(put)));
      expect([deleted.statusCode, deleted.body]).toEqual([200, 'Deleted']);
      expect(await store.get(1)).toBeUndefined();
    });

    it('answers 404 on a missing record, * included (no PUT creates one)', async () => {
      for (const header of ['*', '"any"']) {
        const put = await send(
          withHeader({ method: 'PUT', id: '99', body: { completed: true } }, 'if-none-match', header),
        );
        const deleted = await send(withHeader({ method: 'DELETE', id: '99' }, 'if-none-match', header));
        expect([put.statusCode, deleted.statusCode]).toEqual([404, 404]);
      }
      expect(await store.get(99)).toBeUndefined();
    });

    it('with If-Match, writes only when both hold, and its 412 names both', async () => {
      const read = etagOf(await send({ id: '1' }));
      const before = await recordsOf(store);
      const both = { 'if-match': read, 'if-none-match': '*' };
      const put = await send({ method: 'PUT', id: '1', body: { completed: true }, headers: both });
      const deleted = await send({ method: 'DELETE', id: '1', headers: both });
      expect([put, deleted]).toEqual([BOTH, BOTH]);
      expect(await recordsOf(store)).toEqual(before);
      const holds = { 'if-match': read, 'if-none-match': '"other"' };
      expect((await send({ method: 'PUT', id: '1', body: { completed: true }, headers: holds })).statusCode).toBe(200);
    });

    it.each(['abc', '"unterminated', 'W/abc', '"a" "b"'])(
      'is a 400 when malformed, and nothing changes: %s',
      async (header) => {
        const before = await recordsOf(store);
        for (const options of [
          { method: 'PUT', id: '1', body: { completed: true } },
          { method: 'DELETE', id: '1' },
        ] as const) {
          const answer = await send(withHeader(options, 'if-none-match', header));
          expect(answer.statusCode).toBe(400);
          expect(bodyOf(answer)).toEqual({ error: 'If-None-Match must be * or a list of quoted entity tags' });
        }
        expect(await recordsOf(store)).toEqual(before);
      },
    );
  });

  describe('If-Match on GET', () => {
    it('answers the Todo when it names the record’s tag or is *, and 412 when the record changed since', async () => {
      const read = await send({ id: '1' });
      for (const header of [etagOf(read), `"other", ${etagOf(read)}`, '*']) {
        expect(await send(withHeader({ id: '1' }, 'if-match', header))).toEqual(read);
      }
      await send({ method: 'PUT', id: '1', body: { title: 'by the other tab' } });
      expect(await send(withHeader({ id: '1' }, 'if-match', etagOf(read)))).toEqual(PRECONDITION_FAILED);
    });

    it('never matches a weak tag, and its 412 says so', async () => {
      const read = etagOf(await send({ id: '1' }));
      expect(await send(withHeader({ id: '1' }, 'if-match', `W/${read}`))).toEqual(WEAK_TAG);
    });

    it('is evaluated before If-None-Match: 412 when it fails, else 304 when If-None-Match names the tag', async () => {
      const read = etagOf(await send({ id: '1' }));
      expect(await send({ id: '1', headers: { 'if-match': '"other"', 'if-none-match': read } })).toEqual(
        PRECONDITION_FAILED,
      );
      expect(await send({ id: '1', headers: { 'if-match': read, 'if-none-match': read } })).toEqual({
        statusCode: 304,
        headers: { etag: read },
        body: '',
      });
    });

    it('answers 404 on a missing record, and 400 when malformed', async () => {
      expect((await send(withHeader({ id: '99' }, 'if-match', '"any"'))).statusCode).toBe(404);
      for (const options of [{ id: '1' }, {}]) {
        const answer = await send(withHeader(options, 'if-match', 'not-a-tag'));
        expect(answer.statusCode).toBe(400);
        expect(bodyOf(answer)).toEqual({ error: 'If-Match must be * or a list of quoted entity tags' });
      }
    });

    it('on the list matches only *: the list’s tag is weak, and If-Match compares strongly', async () => {
      const list = await send({});
      expect(await send(withHeader({}, 'if-match', '*'))).toEqual(list);
      for (const header of [etagOf(list), etagOf(list).slice(2), `"x", ${etagOf(list)}`]) {
        expect(await send(withHeader({}, 'if-match', header))).toEqual(WEAK_LIST);
      }
    });
  });

  describe('with an Idempotency-Key', () => {
    const keyed = (options: EventOptions, key: string): EventOptions =>
      withHeader(options, 'idempotency-key', `"${key}"`);

    it('answers a retried PUT whose first answer was 412 with the 412 again, though the record came back to the tag it names', async () => {
      const read = etagOf(await send({ id: '1' }));
      const original = await store.get(1);
      await send({ method: 'PUT', id: '1', body: { title: 'by the other tab' } });
      const put = keyed(
        withHeader({ method: 'PUT', id: '1', body: { completed: true } }, 'if-match', read),
        'stale-put',
      );
      expect(await send(put)).toEqual(PRECONDITION_FAILED);
      await send({ method: 'PUT', id: '1', body: { title: original?.title } });
      expect(etagOf(await send({ id: '1' }))).toBe(read);
      expect(await send(put)).toEqual(REPLAYED_412);
      expect(await store.get(1)).toEqual(original);
    });

    it('answers a retried DELETE whose first answer was 412 with the 412 again, and the record stays', async () => {
      const read = etagOf(await send({ id: '2' }));
      await send({ method: 'PUT', id: '2', body: { title: 'changed' } });
      const del = keyed(withHeader({ method: 'DELETE', id: '2' }, 'if-match', read), 'stale-delete');
      expect(await send(del)).toEqual(PRECONDITION_FAILED);
      expect(await send(del)).toEqual(REPLAYED_412);
      expect(await store.get(2)).toMatchObject({ title: 'changed' });
    });

    it('answers a retried PUT that succeeded with its 200, though its own write changed the tag it names', async () => {
      const read = etagOf(await send({ id: '1' }));
      const put = keyed(
        withHeader({ method: 'PUT', id: '1', body: { completed: true } }, 'if-match', read),
        'fresh-put',
      );
      const first = await send(put);
      expect(first.statusCode).toBe(200);
      const again = await send(put);
      expect(again).toEqual({ ...first, headers: { ...first.headers, 'idempotent-replayed': 'true' } });
    });

    it('answers a retried PUT whose If-None-Match: * was a 412 with the same 412 again', async () => {
      const put = keyed(
        withHeader({ method: 'PUT', id: '1', body: { title: 'only if new' } }, 'if-none-match', '*'),
        'not-new',
      );
      expect(await send(put)).toEqual(EXISTS);
      expect(await send(put)).toEqual({ ...EXISTS, headers: { ...EXISTS.headers, 'idempotent-replayed': 'true' } });
    });

    it('takes If-None-Match as part of the request: the same key with another If-None-Match, or none, is a 422', async () => {
      const put = { method: 'PUT', id: '1', body: { completed: true } } as const;
      expect((await send(keyed(withHeader(put, 'if-none-match', '"other"'), 'untagged'))).statusCode).toBe(200);
      expect((await send(keyed(withHeader(put, 'if-none-match', '"another"'), 'untagged'))).statusCode).toBe(422);
      expect((await send(keyed(put, 'untagged'))).statusCode).toBe(422);
      expect((await send(keyed(withHeader(put, 'if-match', '"other"'), 'untagged'))).statusCode).toBe(422);
    });

    it('leaves a POST’s If-None-Match, which it ignores, out of the request: its key answers as before the header was read', async () => {
      const post = { method: 'POST', body: { title: 'ignores If-None-Match' } } as const;
      const first = await send(keyed(withHeader(post, 'if-none-match', '*'), 'posted'));
      expect(first.statusCode).toBe(201);
      const again = await send(keyed(post, 'posted'));
      expect(again).toEqual({ ...first, headers: { ...first.headers, 'idempotent-replayed': 'true' } });
    });

    it('takes If-Match as part of the request: the same key with another If-Match is a 422', async () => {
      const read = etagOf(await send({ id: '1' }));
      const put = { method: 'PUT', id: '1', body: { completed: true } } as const;
      expect((await send(keyed(withHeader(put, 'if-match', read), 'tagged'))).statusCode).toBe(200);
      expect((await send(keyed(withHeader(put, 'if-match', '"other"'), 'tagged'))).statusCode).toBe(422);
      expect((await send(keyed(put, 'tagged'))).statusCode).toBe(422);
    });
  });
});
