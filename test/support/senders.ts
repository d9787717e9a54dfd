import { event, invoke } from '../../harness/event';
import { functionFor, handlersOn } from '../../harness/routes';
import type { TodoStore } from '../../lib/todos';
import type { ApiClient } from './client';
import { toReply, type Send } from './model';

/** Sends model requests straight to the five handlers, as API Gateway would route them. */
export function handlerSender(store: TodoStore): Send {
  const handlers = handlersOn(store);
  return async ({ method, id, body }) => {
    const name = functionFor(method, id !== undefined);
    if (name === undefined) throw new Error(`no route for ${method}`);
    const response = await invoke(
      handlers[name],
      event({ method, ...(id === undefined ? {} : { id }), ...(body === undefined ? {} : { rawBody: body }) }),
    );
    return toReply(response.statusCode ?? 200, response.headers?.['content-type']?.toString(), response.body ?? '');
  };
}

/** Sends model requests over HTTP to a running server. */
export function httpSender(api: ApiClient): Send {
  return async ({ method, id, body }) => {
    const path = id === undefined ? '/todos' : `/todos/${encodeURIComponent(id)}`;
    const response = await api.request(
      method,
      path,
      body === undefined ? {} : { rawBody: body, headers: { 'content-type': 'application/json' } },
    );
    return toReply(response.status, response.contentType, response.text);
  };
}
