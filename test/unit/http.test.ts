import { describe, expect, it } from '@jest/globals';
import { httpHandler, json } from '../../lib/http';
import { context, event, invoke } from '../../harness/event';

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
});
