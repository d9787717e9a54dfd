import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { bodyOf, event, invoke } from '../../harness/event';
import { RESPONSE_LIMIT_BYTES } from '../../harness/gateway';
import { handlersOn } from '../../harness/routes';
import type { HttpResponse } from '../../lib/http';
import { MAX_LIST_BYTES } from '../../lib/list-size';
import { applyPatch, createTodo, listBytes } from '../../lib/todos';
import type { TodoStore } from '../../lib/todos';
import { ONLY_A_HANG_MS } from '../support/bounds';
import { JSON_TYPE } from '../support/expectations';
import { STORES } from '../support/stores';

/**
 * GET /todos answers the whole list in one Lambda answer, which Lambda refuses past 6,291,556
 * bytes (API Gateway then answers every caller 500). So writes that would take the list past
 * MAX_LIST_BYTES are refused with a 409, and the list is gzip-compressed for a client that takes it.
 */

/** The size of a Lambda answer carrying `response`: what Lambda holds to its limit. */
const lambdaAnswerBytes = (response: HttpResponse) => Buffer.byteLength(JSON.stringify(response));

/** The largest title a body may carry: 65,536 bytes of body less `{"title":""}`. */
const BIG_TITLE = 'x'.repeat(65_536 - 12);

describe('the size a record adds to the list (listBytes)', () => {
  it('is exactly what it adds to the list’s JSON inside a Lambda answer, whatever the title', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ title: fc.string({ unit: 'binary', maxLength: 40 }), completed: fc.boolean() }), {
          maxLength: 20,
        }),
        (records) => {
          const todos = records.map(({ title, completed }, i) =>
            applyPatch(createTodo({ title }, i + 1), { completed }),
          );
          const answer = JSON.stringify(JSON.stringify(todos));
          // The string's quotes, and `[` and `]` around the records, less the comma after the last.
          const counted = todos.reduce((sum, todo) => sum + listBytes(todo), 0) + (todos.length === 0 ? 4 : 3);
          // `completed: true` is a byte shorter than the `false` it is counted as.
          expect(Buffer.byteLength(answer)).toBeLessThanOrEqual(counted);
          expect(Buffer.byteLength(answer)).toBeGreaterThanOrEqual(counted - todos.length);
        },
      ),
    );
  });
});

/**
 * A test that fills the list to its limit: on the memory store work alone, bounded by
 * MAX_LIST_BYTES, which only a hang outlasts (test/support/bounds.ts); on DynamoDB Local a wait on
 * it: up to about 170 POSTs (91 of 64 KB), a transaction each, and a few more requests, each a few
 * to tens of ms idle; 120 s allows for a busy machine.
 */
const FILL_WITHIN_MS = { memory: ONLY_A_HANG_MS, dynamodb: 120_000 } as const;

describe.each(STORES)('a list at its size limit ($name store)', (fixture) => {
  let store: TodoStore;
  let handlers: ReturnType<typeof handlersOn>;
  beforeEach(async () => {
    store = await fixture.fresh();
    handlers = handlersOn(store);
  });

  /** POSTs of `title` until one is refused; the ids created. */
  async function fill(title: string): Promise<number[]> {
    const ids: number[] = [];
    for (;;) {
      const response = await invoke(handlers.createTodo, event({ method: 'POST', body: { title } }));
      if (response.statusCode !== 201) {
        expect(response.statusCode).toBe(409);
        expect(response.headers).toEqual({ 'content-type': JSON_TYPE });
        expect(bodyOf(response)).toEqual({
          error: `The list would be larger than ${MAX_LIST_BYTES} bytes: delete records or shorten titles`,
        });
        return ids;
      }
      ids.push((bodyOf(response) as { id: number }).id);
    }
  }

  /** Fills the list to its limit, to less than an empty-titled record's room: the ids created. */
  const fillUp = async () => [...(await fill(BIG_TITLE)), ...(await fill('x'.repeat(1_000))), ...(await fill(''))];

  it(
    'refuses the POST that would take it past the limit, and GET /todos still fits Lambda’s answer',
    async () => {
      const ids = await fillUp();
      expect(ids.length).toBeGreaterThan(80);
      const list = await invoke(handlers.listTodos, event({ headers: { 'accept-encoding': 'identity' } }));
      expect(list.statusCode).toBe(200);
      expect(Buffer.byteLength(list.body ?? '')).toBeLessThanOrEqual(MAX_LIST_BYTES);
      expect(lambdaAnswerBytes(list)).toBeLessThanOrEqual(RESPONSE_LIMIT_BYTES);
      // Room again, and the refused POSTs used up no id.
      expect((await invoke(handlers.deleteTodo, event({ method: 'DELETE', id: String(ids[0]) }))).statusCode).toBe(200);
      const next = await invoke(handlers.createTodo, event({ method: 'POST', body: { title: '' } }));
      expect(next.statusCode).toBe(201);
      expect(bodyOf(next)).toMatchObject({ id: (ids.at(-1) ?? 0) + 1 });
    },
    FILL_WITHIN_MS[fixture.name],
  );

  it.each([
    { method: 'POST', handler: 'createTodo', id: undefined },
    { method: 'PUT', handler: 'updateTodo', id: '1' },
  ] as const)(
    'keeps a keyed $method’s 409 under its key: its retry gets the 409 again after a DELETE made room, and nothing changes',
    async ({ method, handler, id }) => {
      const ids = await fillUp();
      const keyed = event({
        method,
        ...(id !== undefined && { id }),
        body: { title: BIG_TITLE },
        headers: { 'idempotency-key': '"one too many"' },
      });
      expect((await invoke(handlers[handler], keyed)).statusCode).toBe(409);
      for (const gone of ids.slice(0, 2)) {
        expect((await invoke(handlers.deleteTodo, event({ method: 'DELETE', id: String(gone) }))).statusCode).toBe(200);
      }
      const before = await store.list();
      // With room now, the retry is still the first request's 409: an attempt of it still on its way
      // on DynamoDB finds the key claimed, and cannot apply after the client was told 409.
      const retry = await invoke(handlers[handler], keyed);
      expect(retry.statusCode).toBe(409);
      expect(retry.headers).toMatchObject({ 'idempotent-replayed': 'true' });
      expect(await store.list()).toEqual(before);
    },
    FILL_WITHIN_MS[fixture.name],
  );

  it(
    'refuses a PUT that would grow a title past the limit, and changes nothing; a DELETE makes room again',
    async () => {
      const ids = await fillUp();
      // A seeded record, its title short.
      const id = 1;
      const before = await store.get(id);
      expect(before).toBeDefined();
      const grown = await invoke(
        handlers.updateTodo,
        event({ method: 'PUT', id: String(id), body: { title: BIG_TITLE } }),
      );
      expect(grown.statusCode).toBe(409);
      expect(await store.get(id)).toEqual(before);
      // completed alone never changes the size.
      const completed = await invoke(
        handlers.updateTodo,
        event({ method: 'PUT', id: String(id), body: { completed: true } }),
      );
      expect(completed.statusCode).toBe(200);
      // Two of the largest records gone: room for one more, whatever its id's digits.
      for (const gone of ids.slice(0, 2)) {
        expect((await invoke(handlers.deleteTodo, event({ method: 'DELETE', id: String(gone) }))).statusCode).toBe(200);
      }
      const again = await invoke(handlers.createTodo, event({ method: 'POST', body: { title: BIG_TITLE } }));
      expect(again.statusCode).toBe(201);
    },
    FILL_WITHIN_MS[fixture.name],
  );
});

describe.each(STORES)('GET /todos, compressed ($name store)', (fixture) => {
  let store: TodoStore;
  let list: (acceptEncoding?: string) => Promise<HttpResponse>;
  beforeEach(async () => {
    store = await fixture.fresh();
    const handler = handlersOn(store).listTodos;
    list = (acceptEncoding) =>
      invoke(handler, event(acceptEncoding === undefined ? {} : { headers: { 'accept-encoding': acceptEncoding } }));
  });
  const unzipped = (response: HttpResponse) =>
    JSON.parse(gunzipSync(Buffer.from(response.body ?? '', 'base64')).toString('utf8')) as unknown;

  it.each(['gzip', 'gzip, deflate, br', 'br;q=1.0, gzip;q=0.8', '*', 'GZIP'])(
    'is gzip-compressed, base64 in the answer, for Accept-Encoding: %s',
    async (acceptEncoding) => {
      for (let i = 0; i < 40; i++) await store.create({ title: `a title of a to-do ${i}` });
      const plain = await list();
      const response = await list(acceptEncoding);
      expect(response.statusCode).toBe(200);
      expect(response.isBase64Encoded).toBe(true);
      expect(response.headers).toEqual({
        'content-type': JSON_TYPE,
        vary: 'accept-encoding',
        etag: expect.stringMatching(/^W\/"[\w-]{22}"$/),
        'content-encoding': 'gzip',
      });
      expect(unzipped(response)).toEqual(bodyOf(plain));
      expect((response.body ?? '').length).toBeLessThan((plain.body ?? '').length / 2);
    },
  );

  it.each([undefined, 'identity', 'gzip;q=0', 'deflate, br', '*;q=0'])(
    'is plain JSON for Accept-Encoding: %s',
    async (acceptEncoding) => {
      for (let i = 0; i < 40; i++) await store.create({ title: `a title of a to-do ${i}` });
      const response = await list(acceptEncoding);
      expect(response.isBase64Encoded).toBeUndefined();
      expect(response.headers).toEqual({
        'content-type': JSON_TYPE,
        vary: 'accept-encoding',
        etag: expect.stringMatching(/^W\/"[\w-]{22}"$/),
      });
      expect(bodyOf(response)).toHaveLength(42);
    },
  );

  it('is plain when the list is too short for gzip to pay, or gzip would make it larger', async () => {
    expect((await list('gzip')).isBase64Encoded).toBeUndefined();
    // Titles that do not compress: random printable characters (not quotes or backslashes, which
    // JSON would escape), for which gzip and base64 make more bytes than there were: about 9% more,
    // so 2,000 of them outweigh what gzip saves on a record's other fields, a few more fields
    // included (with 400, one more field with a default, 21 bytes a record, made gzip pay).
    const printable = [...Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i))].filter(
      (c) => c !== '"' && c !== '\\',
    );
    const noise = Array.from({ length: 30 }, () =>
      [...randomBytes(2_000)].map((byte) => printable[byte % printable.length]).join(''),
    );
    for (const title of noise) await store.create({ title });
    const response = await list('gzip');
    expect(response.isBase64Encoded).toBeUndefined();
    expect(response.headers).not.toHaveProperty('content-encoding');
  });
});
