import { beforeEach, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEventV2, APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { createTodo } from '../support/routes';
import { bodyOf, event, invoke } from '../support/event';
import { STORES } from '../support/stores';
import * as domain from '../../lib/todos';
import type { TodoStore } from '../../lib/todos';
import { MAX_BODY_BYTES } from '../../lib/input';
import { NOT_AN_OBJECT_BODIES, bodyOfBytes, expectBadRequest, expectPayloadTooLarge } from '../support/expectations';
import { recordsOf } from '../support/records';

describe.each(STORES)('POST /todos ($name store)', (fixture) => {
  let store: TodoStore;
  let handler: APIGatewayProxyHandlerV2;
  beforeEach(async () => {
    store = await fixture.fresh();
    handler = createTodo(store);
  });
  const post = (body: unknown) => invoke(handler, event({ method: 'POST', body }));

  it('answers 201 with the new record: id 3, the title as sent, completed = false', async () => {
    const response = await post({ title: 'Buy milk' });
    expect(response.statusCode).toBe(201);
    expect(response.headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
      location: '/todos/3',
      etag: expect.stringMatching(/^"[\w-]{22}"$/),
    });
    expect(bodyOf(response)).toEqual(domain.createTodo({ title: 'Buy milk' }, 3));
    expect(await recordsOf(store)).toHaveLength(3);
  });

  it('ignores completed, id and every other field sent on create', async () => {
    const response = await post({ title: 't', completed: true, id: 1, extra: 'x' });
    expect(bodyOf(response)).toEqual(domain.createTodo({ title: 't' }, 3));
  });

  it('stores the title exactly as sent: empty, unicode, whitespace', async () => {
    for (const [i, title] of ['', '  spaced  ', 'çà 🚀 日本', '<b>"quoted"</b>'].entries()) {
      expect(bodyOf(await post({ title }))).toEqual(domain.createTodo({ title }, 3 + i));
    }
  });

  it('gives consecutive ids and never reuses one after a delete', async () => {
    const a = bodyOf(await post({ title: 'a' }));
    await store.remove(3);
    const b = bodyOf(await post({ title: 'b' }));
    expect([a, b]).toMatchObject([{ id: 3 }, { id: 4 }]);
  });

  it('reads a base64-encoded body', async () => {
    const response = await invoke(handler, event({ method: 'POST', body: { title: 'encoded' }, base64: true }));
    expect(bodyOf(response)).toEqual(domain.createTodo({ title: 'encoded' }, 3));
  });

  it.each(NOT_AN_OBJECT_BODIES)('answers 400 for the body %j, and uses up no id', async (rawBody) => {
    expectBadRequest(await invoke(handler, event({ method: 'POST', rawBody })));
    expect(bodyOf(await post({ title: 'after' }))).toMatchObject({ id: 3 });
  });

  it('answers 400 for a request with no body', async () => {
    expectBadRequest(await invoke(handler, event({ method: 'POST' })));
  });

  it('answers 400 when the emulator passes the missing body as null', async () => {
    // serverless-offline does this, though the event type says string | undefined.
    expectBadRequest(
      await invoke(
        handler,
        JSON.parse(JSON.stringify({ ...event({ method: 'POST' }), body: null })) as APIGatewayProxyEventV2,
      ),
    );
  });

  it.each([
    {},
    { title: null },
    { title: 5 },
    { title: true },
    { title: ['a'] },
    { title: { text: 'a' } },
    { Title: 'a' },
  ])('answers 400 when title is missing or not a string: %j', async (body) => {
    expectBadRequest(await post(body));
    expect(await recordsOf(store)).toHaveLength(2);
  });

  // JSON may carry a lone surrogate; DynamoDB keeps UTF-8, which cannot (docs/design.md, "What the spec leaves open").
  it.each(['a\udc00b', '\ud83d', 'ends \ud800', '\udfff\ud800'])(
    'answers 400 for a title that is not well-formed Unicode, %j, and uses up no id',
    async (title) => {
      const answer = await post({ title });
      expect(answer.statusCode).toBe(400);
      expect(bodyOf(answer)).toEqual({ error: 'title must be well-formed Unicode (no lone surrogates)' });
      expect(await recordsOf(store)).toHaveLength(2);
      expect(bodyOf(await post({ title: 'after' }))).toMatchObject({ id: 3 });
    },
  );

  it('takes a title of MAX_TITLE_LENGTH characters, and answers 400 naming the limit one past it, using up no id', async () => {
    // Characters are code points, as openapi.yaml's maxLength counts them: an emoji is one, though two UTF-16 units.
    const longest = '🚀'.repeat(domain.MAX_TITLE_LENGTH);
    const past = await post({ title: `${longest}x` });
    expect(past.statusCode).toBe(400);
    expect(bodyOf(past)).toEqual({ error: expect.stringContaining(`at most ${domain.MAX_TITLE_LENGTH} characters`) });
    expect(await recordsOf(store)).toHaveLength(2);
    expect(bodyOf(await post({ title: longest }))).toEqual(domain.createTodo({ title: longest }, 3));
  });

  it('takes a lone surrogate escaped in the JSON text for one too, and a pair for its character', async () => {
    const raw = (text: string) => invoke(handler, event({ method: 'POST', rawBody: `{"title":"${text}"}` }));
    expectBadRequest(await raw('a\\udc00b'));
    expect(bodyOf(await raw('\\ud83d\\ude80'))).toEqual(domain.createTodo({ title: '🚀' }, 3));
  });

  it('never lets __proto__ or constructor reach a record or a prototype', async () => {
    const response = await invoke(
      handler,
      event({
        method: 'POST',
        rawBody:
          '{"title":"p","__proto__":{"polluted":true,"completed":true},"constructor":{"prototype":{"polluted":true}}}',
      }),
    );
    expect(bodyOf(response)).toEqual(domain.createTodo({ title: 'p' }, 3));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(await store.get(3))).toBe(Object.prototype);
  });

  it('does not take a title from the prototype chain', async () => {
    expectBadRequest(await invoke(handler, event({ method: 'POST', rawBody: '{"__proto__":{"title":"inherited"}}' })));
  });

  it('accepts a body of exactly 64 KiB and answers 413 one byte over, using up no id', async () => {
    expect(MAX_BODY_BYTES).toBe(65_536);
    expectPayloadTooLarge(await invoke(handler, event({ method: 'POST', rawBody: bodyOfBytes(MAX_BODY_BYTES + 1) })));
    const atLimit = await invoke(handler, event({ method: 'POST', rawBody: bodyOfBytes(MAX_BODY_BYTES) }));
    expect(atLimit.statusCode).toBe(201);
    expect(bodyOf(atLimit)).toMatchObject({ id: 3 });
  });

  it('counts UTF-8 bytes, not characters', async () => {
    // 22,000 euro signs are 66,000 bytes but only 22,000 characters: in a field the service ignores,
    // so that nothing but the body's size can refuse it.
    expectPayloadTooLarge(await post({ title: 'x', padding: '€'.repeat(22_000) }));
    expect(await recordsOf(store)).toHaveLength(2);
  });

  it.each([
    ['a 1 MB title', { title: 'x'.repeat(1_000_000) }],
    ['a 2 MB body', { title: 'x', padding: 'y'.repeat(2_000_000) }],
  ])('answers 413 for %s, and stores nothing', async (_name, body) => {
    expectPayloadTooLarge(await post(body));
    expect(await recordsOf(store)).toHaveLength(2);
  });

  it('checks the size of a base64-encoded body after decoding it', async () => {
    const rawBody = bodyOfBytes(MAX_BODY_BYTES);
    expect((await invoke(handler, event({ method: 'POST', rawBody, base64: true }))).statusCode).toBe(201);
  });
});
