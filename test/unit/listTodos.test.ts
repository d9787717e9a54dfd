import { describe, it, expect } from '@jest/globals';
import { listTodos } from '../../functions/listTodos';
import { bodyOf, event, invoke } from '../support/event';
import { STORES } from '../support/stores';
import { handlerOn } from '../support/subject';

describe.each(STORES)('GET /todos ($name store)', (fixture) => {
  const subject = handlerOn(fixture, listTodos);

  it('answers 200 with the seeded records in list order, as JSON', async () => {
    const response = await invoke(subject.handler, event());
    expect(response.statusCode).toBe(200);
    expect(response.headers).toEqual({ 'content-type': 'application/json; charset=utf-8' });
    expect(bodyOf(response)).toEqual([
      { id: 1, title: expect.any(String), completed: false },
      { id: 2, title: expect.any(String), completed: true },
    ]);
  });

  it('lists created records at the end, in creation order', async () => {
    await subject.store.create('a');
    await subject.store.create('b');
    const ids = (bodyOf(await invoke(subject.handler, event())) as { id: number }[]).map((todo) => todo.id);
    expect(ids).toEqual([1, 2, 3, 4]);
  });

  it('answers an empty array when the collection is empty', async () => {
    await subject.store.remove(1);
    await subject.store.remove(2);
    const response = await invoke(subject.handler, event());
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('[]');
  });
});
