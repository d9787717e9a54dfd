import { event, invoke } from './event';
import { functionFor, handlersOn } from './routes';
import type { TodoStore } from '../../lib/todos';
import type { ApiClient } from './client';
import { requestHeaders, toReply, type Send } from './model';

/** Sends model requests straight to the five handlers, as API Gateway would route them. */
export function handlerSender(store: TodoStore): Send {
  const handlers = handlersOn(store);
  return async (request) => {
    const { method, id, body } = request;
    const name = functionFor(method, id !== undefined);
    if (name === undefined) throw new Error(`no route for ${method}`);
    const response = await invoke(
      handlers[name],
      event({
        method,
        ...(id === undefined ? {} : { id }),
        ...(body === undefined ? {} : { rawBody: body }),
        headers: requestHeaders(request),
      }),
    );
    const headers = response.headers ?? {};
    return toReply(response.statusCode ?? 200, { get: (name) => headers[name]?.toString() }, response.body ?? '');
  };
}

/** Sends model requests over HTTP to a running server. */
export function httpSender(api: ApiClient): Send {
  return async (request) => {
    const { method, id, body } = request;
    const path = id === undefined ? '/todos' : `/todos/${encodeURIComponent(id)}`;
    const headers = {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...requestHeaders(request),
    };
    const response = await api.request(method, path, { ...(body === undefined ? {} : { rawBody: body }), headers });
    return toReply(response.status, response.headers, response.text);
  };
}
