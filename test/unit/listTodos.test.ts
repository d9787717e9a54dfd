import { beforeEach, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { listTodos } from '../support/routes';
import { bodyOf, event, invoke } from '../support/event';
import { STORES } from '../support/stores';
import { SEED_TODOS, type TodoStore } from '../../lib/todos';

describe.each(STORES)('GET /todos ($name store)', (fixture) => {
  let store: TodoStore;
  let handler: APIGatewayProxyHandlerV2;
  beforeEach(async () => {
    store = await fixture.fresh();
    handler = listTodos(store);
  });

  it('answers 200 with the seeded records in list order, as JSON', async () => {
    const response = await invoke(handler, event());
    expect(response.statusCode).toBe(200);
    expect(response.headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
      vary: 'accept-encoding',
      etag: expect.stringMatching(/^W\/"[\w-]{22}"$/),
    });
    expect(bodyOf(response)).toEqual(SEED_TODOS);
  });

  it('lists created records at the end, in creation order', async () => {
    await store.create({ title: 'a' });
    await store.create({ title: 'b' });
    const ids = (bodyOf(await invoke(handler, event())) as { id: number }[]).map((todo) => todo.id);
    expect(ids).toEqual([1, 2, 3, 4]);
  });

  it('answers an empty array when the collection is empty', async () => {
    await store.remove(1);
    await store.remove(2);
    const response = await invoke(handler, event());
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('[]');
  });
});
