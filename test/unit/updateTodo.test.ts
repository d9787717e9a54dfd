import { beforeEach, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { updateTodo } from '../support/routes';
import { bodyOf, event, invoke } from '../support/event';
import { STORES } from '../support/stores';
import { MAX_TITLE_LENGTH, applyPatch, type TodoStore } from '../../lib/todos';
import { MAX_BODY_BYTES } from '../../lib/input';
import {
  NOT_AN_OBJECT_BODIES,
  NOT_FOUND_IDS,
  bodyOfBytes,
  expectBadRequest,
  expectPayloadTooLarge,
  expectTodoNotFound,
  seed,
} from '../support/expectations';
import { recordsOf } from '../support/records';

describe.each(STORES)('PUT /todos/{id} ($name store)', (fixture) => {
  let store: TodoStore;
  let handler: APIGatewayProxyHandlerV2;
  beforeEach(async () => {
    store = await fixture.fresh();
    handler = updateTodo(store);
  });
  const put = (id: string, body: unknown) => invoke(handler, event({ method: 'PUT', id, body }));

  it('sets completed = true, then back to false, answering 200 with the record after the update', async () => {
    const done = await put('1', { completed: true });
    expect(done.statusCode).toBe(200);
    expect(done.headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
      etag: expect.stringMatching(/^"[\w-]{22}"$/),
    });
    expect(bodyOf(done)).toEqual(applyPatch(seed(1), { completed: true }));
    expect(bodyOf(await put('1', { completed: false }))).toEqual(applyPatch(seed(1), { completed: false }));
  });

  it('changes only the fields present: a title alone keeps completed', async () => {
    const renamed = applyPatch(seed(2), { title: 'renamed' });
    expect(bodyOf(await put('2', { title: 'renamed' }))).toEqual(renamed);
    expect(await store.get(2)).toEqual(renamed);
  });

  it('changes both fields together', async () => {
    expect(bodyOf(await put('1', { title: 'both', completed: true }))).toEqual(
      applyPatch(seed(1), { title: 'both', completed: true }),
    );
  });

  it('answers 200 with the record unchanged for an empty object', async () => {
    expect(bodyOf(await put('1', {}))).toEqual(seed(1));
  });

  it('cannot change the id, and ignores other fields', async () => {
    expect(bodyOf(await put('1', { id: 42, title: 't', extra: true }))).toEqual(applyPatch(seed(1), { title: 't' }));
    expect(await store.get(42)).toBeUndefined();
  });

  it('keeps the record in its place in the list', async () => {
    await put('1', { title: 'first still' });
    expect((await recordsOf(store)).map((todo) => todo.id)).toEqual([1, 2]);
  });

  it.each(NOT_FOUND_IDS)('answers 404 "Todo not found" for id %j and creates nothing', async (id) => {
    expectTodoNotFound(await put(id, { title: 'x', completed: true }));
    expect(await recordsOf(store)).toHaveLength(2);
  });

  it.each(NOT_AN_OBJECT_BODIES)('answers 400 for the body %j and changes nothing', async (rawBody) => {
    const before = await recordsOf(store);
    expectBadRequest(await invoke(handler, event({ method: 'PUT', id: '1', rawBody })));
    expect(await recordsOf(store)).toEqual(before);
  });

  it.each([
    { title: 5 },
    { title: null },
    { completed: 'true' },
    { completed: 1 },
    { completed: null },
    { title: 'valid', completed: 'yes' },
    { title: 7, completed: true },
  ])('answers 400 for %j and changes nothing, not even the valid fields', async (body) => {
    const before = await recordsOf(store);
    expectBadRequest(await put('1', body));
    expect(await recordsOf(store)).toEqual(before);
  });

  it.each([{ title: 'a\udc00b' }, { title: '\ud83d', completed: true }])(
    'answers 400 for a title that is not well-formed Unicode, %j, and changes nothing',
    async (body) => {
      const before = await recordsOf(store);
      const answer = await put('1', body);
      expect(answer.statusCode).toBe(400);
      expect(bodyOf(answer)).toEqual({ error: 'title must be well-formed Unicode (no lone surrogates)' });
      expect(await recordsOf(store)).toEqual(before);
    },
  );

  it('takes a title of MAX_TITLE_LENGTH characters, and answers 400 naming the limit one past it, changing nothing', async () => {
    // Characters are code points, as openapi.yaml's maxLength counts them: an emoji is one, though two UTF-16 units.
    const longest = '🚀'.repeat(MAX_TITLE_LENGTH);
    const before = await recordsOf(store);
    const past = await put('1', { title: `${longest}x`, completed: true });
    expect(past.statusCode).toBe(400);
    expect(bodyOf(past)).toEqual({ error: expect.stringContaining(`at most ${MAX_TITLE_LENGTH} characters`) });
    expect(await recordsOf(store)).toEqual(before);
    const [first] = before;
    if (first === undefined) throw new Error('no record 1');
    expect(bodyOf(await put('1', { title: longest }))).toEqual(applyPatch(first, { title: longest }));
  });

  it('answers 400 before 404: a malformed body is rejected whatever the id', async () => {
    expectBadRequest(await put('99', { completed: 'no' }));
  });

  it('never lets __proto__ or constructor reach a record or a prototype', async () => {
    const response = await invoke(
      handler,
      event({
        method: 'PUT',
        id: '1',
        rawBody: '{"__proto__":{"completed":true,"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
      }),
    );
    expect(bodyOf(response)).toEqual(seed(1));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers 413 for a body over 64 KiB and changes nothing', async () => {
    const before = await recordsOf(store);
    expectPayloadTooLarge(
      await invoke(handler, event({ method: 'PUT', id: '1', rawBody: bodyOfBytes(MAX_BODY_BYTES + 1) })),
    );
    expect(await recordsOf(store)).toEqual(before);
    expect(
      (await invoke(handler, event({ method: 'PUT', id: '1', rawBody: bodyOfBytes(MAX_BODY_BYTES) }))).statusCode,
    ).toBe(200);
  });
});
