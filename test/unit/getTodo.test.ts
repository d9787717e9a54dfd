import { beforeEach, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { getTodo } from '../support/routes';
import { bodyOf, event, invoke } from '../support/event';
import { STORES } from '../support/stores';
import type { TodoStore } from '../../lib/todos';
import { NOT_FOUND_IDS, expectTodoNotFound, seed } from '../support/expectations';

describe.each(STORES)('GET /todos/{id} ($name store)', (fixture) => {
  let store: TodoStore;
  let handler: APIGatewayProxyHandlerV2;
  beforeEach(async () => {
    store = await fixture.fresh();
    handler = getTodo(store);
  });

  it('answers 200 with the record', async () => {
    const response = await invoke(handler, event({ id: '2' }));
    expect(response.statusCode).toBe(200);
    expect(response.headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
      etag: expect.stringMatching(/^"[\w-]{22}"$/),
    });
    expect(bodyOf(response)).toEqual(seed(2));
  });

  it('converts the path value with Number(), so "007" and "2.0" name records 7 and 2', async () => {
    for (let i = 0; i < 5; i++) await store.create({ title: `t${i}` });
    expect(bodyOf(await invoke(handler, event({ id: '007' })))).toMatchObject({ id: 7 });
    expect(bodyOf(await invoke(handler, event({ id: '2.0' })))).toMatchObject({ id: 2 });
  });

  it.each(NOT_FOUND_IDS)('answers 404 "Todo not found" for id %j', async (id) => {
    expectTodoNotFound(await invoke(handler, event({ id })));
  });

  it('answers 404 for a deleted record', async () => {
    await store.remove(1);
    expectTodoNotFound(await invoke(handler, event({ id: '1' })));
  });
});
