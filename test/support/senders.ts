import { createTodo } from '../../functions/createTodo';
import { deleteTodo } from '../../functions/deleteTodo';
import { getTodo } from '../../functions/getTodo';
import { listTodos } from '../../functions/listTodos';
import { updateTodo } from '../../functions/updateTodo';
import type { TodoStore } from '../../lib/todos';
import type { ApiClient } from './client';
import { event, invoke } from './event';
import { toReply, type Send } from './model';

/** Sends model requests straight to the five handlers, as API Gateway would route them. */
export function handlerSender(store: TodoStore): Send {
  const routes = {
    list: listTodos(store),
    get: getTodo(store),
    create: createTodo(store),
    update: updateTodo(store),
    remove: deleteTodo(store),
  };
  return async ({ method, id, body }) => {
    const handler =
      method === 'GET'
        ? id === undefined
          ? routes.list
          : routes.get
        : method === 'POST'
          ? routes.create
          : method === 'PUT'
            ? routes.update
            : routes.remove;
    const response = await invoke(
      handler,
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
