import { beforeEach, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { deleteTodo } from '../support/routes';
import { event, invoke } from '../support/event';
import { STORES } from '../support/stores';
import type { TodoStore } from '../../lib/todos';
import { NOT_FOUND_IDS, expectTodoNotFound } from '../support/expectations';
import { recordsOf } from '../support/records';

describe.each(STORES)('DELETE /todos/{id} ($name store)', (fixture) => {
  let store: TodoStore;
  let handler: APIGatewayProxyHandlerV2;
  beforeEach(async () => {
    store = await fixture.fresh();
    handler = deleteTodo(store);
  });
  const del = (id: string) => invoke(handler, event({ method: 'DELETE', id }));

  it('answers 200 with the plain-text body "Deleted" and removes the record', async () => {
    const response = await del('1');
    expect(response).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'Deleted',
    });
    expect(await store.get(1)).toBeUndefined();
    expect((await recordsOf(store)).map((todo) => todo.id)).toEqual([2]);
  });

  it('answers 404 the second time', async () => {
    await del('2');
    expectTodoNotFound(await del('2'));
  });

  it.each(NOT_FOUND_IDS)('answers 404 "Todo not found" for id %j and changes nothing', async (id) => {
    expectTodoNotFound(await del(id));
    expect(await recordsOf(store)).toHaveLength(2);
  });
});
