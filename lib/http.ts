import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyHandlerV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import { InvalidInput, PayloadTooLarge, StoreUnavailable, TodoNotFound } from './errors';
import { parseJsonObject, parseTodoId, type JsonObject } from './input';
import { errorFields, log } from './log';
import type { Deadline, Todo } from './todos';

/**
 * The HTTP edge: how a request is read and how every answer is written.
 * Handlers call these and never spell a header, a status for an error, or a message.
 */

export type HttpResponse = APIGatewayProxyStructuredResultV2;

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

export function json(statusCode: number, body: unknown, headers?: Record<string, string>): HttpResponse {
  return { statusCode, headers: { 'content-type': JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}

export function text(statusCode: number, body: string): HttpResponse {
  return { statusCode, headers: { 'content-type': TEXT_TYPE }, body };
}

/** 201 Created, with the record and its address in `Location`. */
export function created(todo: Todo): HttpResponse {
  return json(201, todo, { location: `/todos/${todo.id}` });
}

function errorResponse(statusCode: number, message: string, headers?: Record<string, string>): HttpResponse {
  return json(statusCode, { error: message }, headers);
}

/** The `{id}` path parameter as a record id; a 404 when it cannot name one. */
export function todoId(event: APIGatewayProxyEventV2): number {
  return parseTodoId(event.pathParameters?.id);
}

/** The request body as one JSON object; a 400 otherwise. */
export function jsonBody(event: APIGatewayProxyEventV2): JsonObject {
  const { body, isBase64Encoded } = event;
  return parseJsonObject(isBase64Encoded && body !== undefined ? Buffer.from(body, 'base64').toString('utf8') : body);
}

/** Turns whatever a handler throws into the answer the client gets. A 5xx is a failure of ours. */
function errorToResponse(error: unknown): HttpResponse {
  if (error instanceof TodoNotFound) return errorResponse(404, 'Todo not found');
  if (error instanceof InvalidInput) return errorResponse(400, error.message);
  if (error instanceof PayloadTooLarge) return errorResponse(413, error.message);
  if (error instanceof StoreUnavailable) {
    return errorResponse(503, 'Service temporarily unavailable, please retry', { 'retry-after': '1' });
  }
  // The gateway would turn a thrown error into a bare 502; the stack goes to the log, never the body.
  return errorResponse(500, 'Internal server error');
}

/**
 * The path's `{id}` as the client sent it, kept short (the log is for finding requests, not
 * storing input); for a POST, the id in the Location it answered.
 */
function todoIdForLog(event: APIGatewayProxyEventV2, response: HttpResponse): string | undefined {
  const raw = event.pathParameters?.id ?? response.headers?.location?.toString().split('/').pop();
  return raw !== undefined && raw.length > 32 ? `${raw.slice(0, 32)}…` : raw;
}

export type HttpHandler = (event: APIGatewayProxyEventV2, deadline: Deadline) => Promise<HttpResponse>;

/**
 * What a request keeps of its function's time to answer once the store has given up: a 503 is
 * built and written in well under a millisecond, but timers fire late on a busy host, and past
 * the timeout Lambda (or the emulator) answers for us, with an error body.
 */
export const ANSWER_MARGIN_MS = 1_000;

/** The deadline a request's store calls must meet: the function's remaining time less the margin. */
export function deadlineOf(context: Context): Deadline {
  return Date.now() + context.getRemainingTimeInMillis() - ANSWER_MARGIN_MS;
}

/**
 * Wraps a handler so that it never throws (every failure leaves as a JSON error), hands it the
 * request's deadline, and logs one line per request: never the body or the title, and the stack
 * only for unexpected failures.
 */
export function httpHandler(handle: HttpHandler): APIGatewayProxyHandlerV2 {
  return async (event, context) => {
    // hrtime, not performance.now(): the first use of `performance` loads perf_hooks, about
    // 0.5 ms of every cold start.
    const started = process.hrtime.bigint();
    let response: HttpResponse;
    let failure: unknown;
    try {
      response = await handle(event, deadlineOf(context));
    } catch (error) {
      response = errorToResponse(error);
      // A 4xx is the client's and is answered; a 5xx is ours and is logged with its stack.
      if ((response.statusCode ?? 500) >= 500) failure = error;
    }
    log(failure === undefined ? 'info' : 'error', {
      message: 'request',
      method: event.requestContext.http.method,
      route: event.routeKey,
      status: response.statusCode,
      durationMs: Number((process.hrtime.bigint() - started) / 10_000n) / 100,
      requestId: context.awsRequestId,
      todoId: todoIdForLog(event, response),
      ...(failure === undefined ? {} : { error: errorFields(failure) }),
    });
    return response;
  };
}
