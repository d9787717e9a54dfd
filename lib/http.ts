import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyHandlerV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import { InvalidInput, StoreUnavailable, TodoNotFound } from './errors';
import { parseJsonObject, parseTodoId, type JsonObject } from './input';

/**
 * The HTTP edge: how a request is read and how every answer is written.
 * Handlers call these and never spell a header, a status for an error, or a message.
 */

export type HttpResponse = APIGatewayProxyStructuredResultV2;

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

export function json(statusCode: number, body: unknown): HttpResponse {
  return { statusCode, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify(body) };
}

export function text(statusCode: number, body: string): HttpResponse {
  return { statusCode, headers: { 'content-type': TEXT_TYPE }, body };
}

function errorResponse(statusCode: number, message: string, headers: Record<string, string> = {}): HttpResponse {
  const response = json(statusCode, { error: message });
  return { ...response, headers: { ...response.headers, ...headers } };
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

/** Turns whatever a handler throws into the answer the client gets. */
function errorToResponse(error: unknown): HttpResponse {
  if (error instanceof TodoNotFound) return errorResponse(404, 'Todo not found');
  if (error instanceof InvalidInput) return errorResponse(400, error.message);
  if (error instanceof StoreUnavailable) {
    console.error(error);
    return errorResponse(503, 'Service temporarily unavailable, please retry', { 'retry-after': '1' });
  }
  // The gateway would turn a thrown error into a bare 502; the stack stays in the log.
  console.error(error);
  return errorResponse(500, 'Internal server error');
}

export type HttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResponse>;

/** Wraps a handler so that it never throws: every failure leaves as a JSON error. */
export function httpHandler(handle: HttpHandler): APIGatewayProxyHandlerV2 {
  return async (event, context) => {
    try {
      return await handle(event, context);
    } catch (error) {
      return errorToResponse(error);
    }
  };
}
