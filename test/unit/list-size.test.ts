import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { RESPONSE_LIMIT_BYTES, bodyOf, event, invoke } from '../support/event';
import { handlersOn } from '../support/routes';
import type { HttpResponse } from '../../lib/http';
import { MAX_LIST_BYTES } from '../../lib/list-size';
import { ListFull } from '../../lib/errors';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';
import {
  FIRST_NEW_ID,
  MAX_TITLE_LENGTH,
  SEED_TODOS,
  applyPatch,
  createTodo,
  listBytes,
  type Todo,
} from '../../lib/todos';
import type { TodoStore } from '../../lib/todos';
import { JSON_TYPE } from '../support/expectations';
import { STORES } from '../support/stores';
import { recordsOf } from '../support/records';

/**
 * GET /todos answers the whole list in one Lambda answer, which Lambda refuses past 6,291,556
 * bytes (API Gateway then answers every caller 500). So writes that would take the list past
 * MAX_LIST_BYTES are refused with a 409, and the list is gzip-compressed for a client that takes it.
 */

/** The size of a Lambda answer carrying `response`: what Lambda holds to its limit. */
const lambdaAnswerBytes = (response: HttpResponse) => Buffer.byteLength(JSON.stringify(response));

/**
 * The largest record a client can make, in the list's bytes: a title of MAX_TITLE_LENGTH control
 * characters, each of which JSON escapes to six bytes (`\u0001`), and the list's answer to seven.
 */
const BIGGEST_TITLE = '\u0001'.repeat(MAX_TITLE_LENGTH);

/** The bytes `records` take in the list (listBytes). */
const bytesOf = (records: readonly Todo[]) => records.reduce((sum, todo) => sum + listBytes(todo), 0);

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

describe('a list at MAX_LIST_BYTES (memory store)', () => {
  beforeEach(() => {
    resetMemoryStore();
  });

  it('answers GET /todos within Lambda’s limit when full of the largest records a client can make', async () => {
    // Filled through the store, not the handlers: thousands of records, and the refusal is the next tests'.
    for (;;) {
      try {
        await memoryStore.create({ title: BIGGEST_TITLE });
      } catch (error) {
        expect(error).toBeInstanceOf(ListFull);
        break;
      }
    }
    // Then to less than an empty-titled record's room.
    for (;;) {
      try {
        await memoryStore.create({ title: '' });
      } catch (error) {
        expect(error).toBeInstanceOf(ListFull);
        break;
      }
    }
    const records = await recordsOf(memoryStore);
    const next = createTodo({ title: '' }, Math.max(...records.map((todo) => todo.id)) + 1);
    expect(bytesOf(records)).toBeGreaterThan(MAX_LIST_BYTES - listBytes(next));
    const list = await invoke(handlersOn(memoryStore).listTodos, event({ headers: { 'accept-encoding': 'identity' } }));
    expect(list.statusCode).toBe(200);
    expect(Buffer.byteLength(list.body ?? '')).toBeLessThanOrEqual(MAX_LIST_BYTES);
    expect(lambdaAnswerBytes(list)).toBeLessThanOrEqual(RESPONSE_LIMIT_BYTES);
  });
});

/** The title of the records that fill a list here: the list's limit is made from their bytes, not from a long title. */
const TITLE = 'a record of a full list';
/** How many records of TITLE fill the list, after the seed. */
const FULL = 5;
/** The list a fresh store holds once it is full: the seed, then FULL records of TITLE. */
const FILLED = [
  ...SEED_TODOS,
  ...Array.from({ length: FULL }, (_, i) => createTodo({ title: TITLE }, FIRST_NEW_ID + i)),
];
/** The list's limit here: FILLED's bytes exactly, so that no record, however small, fits once it is full. */
const LIMIT = bytesOf(FILLED);
/** A title that grows a record past a full list's room, and fits once two records of TITLE are gone. */
const LONGER = `${TITLE}, and longer`;

describe.each(STORES)('a list at its size limit ($name store)', (fixture) => {
  let store: TodoStore;
  let handlers: ReturnType<typeof handlersOn>;
  beforeEach(async () => {
    store = await fixture.fresh({ maxListBytes: LIMIT });
    handlers = handlersOn(store);
  });

  /** A full list's 409, naming the store's limit; `replayed`, the answer a key kept. */
  const expectFull = (response: HttpResponse, replayed = false) => {
    expect(response.statusCode).toBe(409);
    expect(response.headers).toEqual({
      'content-type': JSON_TYPE,
      ...(replayed && { 'idempotent-replayed': 'true' }),
    });
    expect(bodyOf(response)).toEqual({
      error: `The list would be larger than ${LIMIT} bytes: delete records or shorten titles`,
    });
  };

  /** POSTs of TITLE until one is refused (a 409 naming the limit), then one of '' refused too: the ids created. */
  async function fillUp(): Promise<number[]> {
    const ids: number[] = [];
    for (let sent = 0; sent <= FULL; sent++) {
      const response = await invoke(handlers.createTodo, event({ method: 'POST', body: { title: TITLE } }));
      if (response.statusCode !== 201) {
        expectFull(response);
        break;
      }
      ids.push((bodyOf(response) as { id: number }).id);
    }
    expectFull(await invoke(handlers.createTodo, event({ method: 'POST', body: { title: '' } })));
    expect(await recordsOf(store)).toEqual(FILLED);
    return ids;
  }

  const remove = async (ids: readonly number[]) => {
    for (const id of ids) {
      expect((await invoke(handlers.deleteTodo, event({ method: 'DELETE', id: String(id) }))).statusCode).toBe(200);
    }
  };

  it('refuses the POST that would take it past the limit, to the byte, and a DELETE makes room again', async () => {
    const ids = await fillUp();
    expect(ids).toEqual(FILLED.slice(SEED_TODOS.length).map((todo) => todo.id));
    // Room again, and the refused POSTs used up no id.
    await remove(ids.slice(0, 1));
    const next = await invoke(handlers.createTodo, event({ method: 'POST', body: { title: '' } }));
    expect(next.statusCode).toBe(201);
    expect(bodyOf(next)).toMatchObject({ id: (ids.at(-1) ?? 0) + 1 });
  });

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
        body: { title: LONGER },
        headers: { 'idempotency-key': '"one too many"' },
      });
      expectFull(await invoke(handlers[handler], keyed));
      await remove(ids.slice(0, 2));
      const before = await recordsOf(store);
      // Room now for what the request asked (its record, or record 1 retitled).
      const asked = id === undefined ? [createTodo({ title: LONGER }, (ids.at(-1) ?? 0) + 1)] : [];
      const retitled = before.map((todo) => (String(todo.id) === id ? applyPatch(todo, { title: LONGER }) : todo));
      expect(bytesOf([...retitled, ...asked])).toBeLessThanOrEqual(LIMIT);
      // With room now, the retry is still the first request's 409: an attempt of it still on its way
      // on DynamoDB finds the key claimed, and cannot apply after the client was told 409.
      expectFull(await invoke(handlers[handler], keyed), true);
      expect(await recordsOf(store)).toEqual(before);
    },
  );

  it('refuses a PUT that would grow a title past the limit, and changes nothing; a DELETE makes room again', async () => {
    const ids = await fillUp();
    // A seeded record, its title short.
    const id = 1;
    const before = await store.get(id);
    expect(before).toBeDefined();
    const grown = await invoke(handlers.updateTodo, event({ method: 'PUT', id: String(id), body: { title: LONGER } }));
    expectFull(grown);
    expect(await store.get(id)).toEqual(before);
    // completed alone never changes the size: not even to `false`, a byte longer than `true`, in a list with no room.
    for (const completed of [true, false]) {
      const answer = await invoke(handlers.updateTodo, event({ method: 'PUT', id: String(id), body: { completed } }));
      expect(answer.statusCode).toBe(200);
    }
    // Two records gone: room for the longer title.
    await remove(ids.slice(0, 2));
    const again = await invoke(handlers.updateTodo, event({ method: 'PUT', id: String(id), body: { title: LONGER } }));
    expect(again.statusCode).toBe(200);
  });
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
