import { describe, expect, it } from '@jest/globals';
import { answer, created, httpHandler, json, text } from '../../lib/http';
import { context, event, invoke } from '../support/event';
import { createTodo } from '../../lib/todos';

describe('httpHandler', () => {
  it('turns an unexpected error into a JSON 500 with no stack or message in the body', async () => {
    const handler = httpHandler(() => Promise.reject(new Error('secret detail at /var/task/index.js:1:1')));
    const response = await invoke(handler, event());
    expect(response).toEqual({
      statusCode: 500,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ error: 'Internal server error' }),
    });
  });

  it('passes a handler answer through unchanged', async () => {
    const handler = httpHandler(() => Promise.resolve(json(200, { ok: true })));
    expect(await handler(event(), context(), () => undefined)).toEqual(json(200, { ok: true }));
  });

  it('answers the response of a write’s answer, unchanged', async () => {
    const response = created(createTodo({ title: 't' }, 3));
    const handler = httpHandler(() => Promise.resolve({ response, todoId: 3, replayed: false }));
    expect(await invoke(handler, event({ method: 'POST', body: { title: 't' } }))).toEqual(response);
  });
});

describe('answer', () => {
  const todo = createTodo({ title: 't' }, 3);

  it('carries the id of the record written, for the log', () => {
    expect(answer({ value: todo, replayed: false }, created)).toEqual({
      response: created(todo),
      todoId: 3,
      replayed: false,
    });
  });

  it('says a replay in Idempotent-Replayed, and to the log', () => {
    const deleted = text(200, 'Deleted');
    expect(answer({ value: true, replayed: true }, () => deleted)).toEqual({
      response: { ...deleted, headers: { ...deleted.headers, 'idempotent-replayed': 'true' } },
      replayed: true,
    });
  });
});
