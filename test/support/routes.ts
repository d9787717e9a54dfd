import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import createTodoFunction from '../../functions/createTodo';
import deleteTodoFunction from '../../functions/deleteTodo';
import getTodoFunction from '../../functions/getTodo';
import listTodosFunction from '../../functions/listTodos';
import updateTodoFunction from '../../functions/updateTodo';
import type { TodoStore } from '../../lib/todos';
import type { Method } from './event';

// Each function file ends in `export = { <factory>, handler }` (it keeps the bundle small), so
// its factory is imported here, once, and the tests and the bench take it from this module.
export const { createTodo } = createTodoFunction;
export const { deleteTodo } = deleteTodoFunction;
export const { getTodo } = getTodoFunction;
export const { listTodos } = listTodosFunction;
export const { updateTodo } = updateTodoFunction;

/**
 * The five routes of serverless.yml, as the tests and the bench route requests to handlers
 * without a gateway. test/system/package.test.ts holds this table and the packaged routes together.
 */
export const ROUTES = {
  listTodos: { method: 'GET', withId: false, build: listTodos },
  getTodo: { method: 'GET', withId: true, build: getTodo },
  createTodo: { method: 'POST', withId: false, build: createTodo },
  updateTodo: { method: 'PUT', withId: true, build: updateTodo },
  deleteTodo: { method: 'DELETE', withId: true, build: deleteTodo },
} as const satisfies Record<
  string,
  { method: Method; withId: boolean; build: (todos: TodoStore) => APIGatewayProxyHandlerV2 }
>;

export type FunctionName = keyof typeof ROUTES;

export const FUNCTION_NAMES = Object.keys(ROUTES) as FunctionName[];

/** The route key API Gateway matches, e.g. `PUT /todos/{id}`. */
export function routeKey(name: FunctionName): string {
  const { method, withId } = ROUTES[name];
  return `${method} ${withId ? '/todos/{id}' : '/todos'}`;
}

/** The function a request goes to, or undefined for a route the service does not have. */
export function functionFor(method: string, withId: boolean): FunctionName | undefined {
  return FUNCTION_NAMES.find((name) => ROUTES[name].method === method && ROUTES[name].withId === withId);
}

/** The five handlers built on one store, by function name. */
export function handlersOn(todos: TodoStore): Record<FunctionName, APIGatewayProxyHandlerV2> {
  return Object.fromEntries(FUNCTION_NAMES.map((name) => [name, ROUTES[name].build(todos)])) as Record<
    FunctionName,
    APIGatewayProxyHandlerV2
  >;
}
