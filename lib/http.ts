import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyHandlerV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import { InvalidInput, Refusal } from './errors';
import { errorFields, log } from './log';
import { metricFields, type Metric } from './metrics';
import type { Deadline, Todo, Written } from './todos';

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

/**
 * The answer to a write: `respond` builds it from what was written, and a replay of an earlier
 * request's answer (the same Idempotency-Key) says so in `Idempotent-Replayed`, as Stripe's does.
 */
export function answer<T>(written: Written<T>, respond: (value: T) => HttpResponse): HttpResponse {
  const response = respond(written.value);
  return written.replayed ? { ...response, headers: { ...response.headers, 'idempotent-replayed': 'true' } } : response;
}

/** Below this many bytes gzip saves less than its own header costs. */
const GZIP_FROM_BYTES = 1024;

/**
 * The client's Accept-Encoding takes gzip: named, or `*`, without `q=0`. (`gzip;q=0` refuses it.)
 */
function acceptsGzip(header = ''): boolean {
  function weight(coding: string): number | undefined {
    const match = new RegExp(`(?:^|,)\\s*${coding}\\s*(?:;\\s*q=([\\d.]+))?\\s*(?:,|$)`, 'i').exec(header);
    return match ? Number(match[1] ?? 1) : undefined;
  }
  return (weight('gzip') ?? weight('\\*') ?? 0) > 0;
}

/**
 * GET /todos: the list, gzip-compressed (base64 in Lambda's answer, which API Gateway decodes)
 * for a client that accepts gzip, as long as that is smaller: an HTTP API compresses nothing
 * itself. The answer varies with Accept-Encoding, and says so to caches.
 */
export function listAnswer(event: APIGatewayProxyEventV2, todos: readonly Todo[]): HttpResponse {
  const body = JSON.stringify(todos);
  const headers = { 'content-type': JSON_TYPE, vary: 'accept-encoding' };
  if (body.length >= GZIP_FROM_BYTES && acceptsGzip(event.headers['accept-encoding'])) {
    // node:zlib is loaded by the first list worth compressing, not at load: requiring it costs
    // about 1 ms of a cold start (npm run bench -- coldInit).
    const zipped = process.getBuiltinModule('node:zlib').gzipSync(body).toString('base64');
    if (zipped.length < body.length) {
      return {
        statusCode: 200,
        headers: { ...headers, 'content-encoding': 'gzip' },
        body: zipped,
        isBase64Encoded: true,
      };
    }
  }
  return { statusCode: 200, headers, body };
}

/** The request body as sent, decoded when the gateway base64-encoded it. */
export function bodyText({ body, isBase64Encoded }: APIGatewayProxyEventV2): string | undefined {
  return isBase64Encoded && body ? Buffer.from(body, 'base64').toString() : body;
}

/**
 * Turns whatever a handler throws into the answer the client gets. A 5xx is a failure of ours:
 * the gateway would turn a thrown error into a bare 502; the stack goes to the log, never the body.
 */
function errorToResponse(error: unknown): HttpResponse {
  if (error instanceof Refusal) return json(error.status, { error: error.answer ?? error.message }, error.headers);
  return json(500, { error: 'Internal server error' });
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

/** An event whose shape is not yet known. */
interface Unchecked {
  readonly requestContext?: { readonly http?: { readonly method?: string } };
  readonly headers?: unknown;
  readonly routeKey?: string;
  readonly pathParameters?: Record<string, string | undefined>;
}

/** True until this container has answered its first request. */
let cold = true;

/** The metrics (lib/metrics.ts) a write's answer counts for, by method and status. */
const WRITTEN: Partial<Record<string, Metric>> = { 'POST 201': 'Created', 'DELETE 200': 'Deleted' };

/**
 * Wraps a handler so that it never throws (every failure leaves as a JSON error), hands it the
 * request's deadline, and logs one line per request, with the service's metrics in it: never the
 * body or the title, and the stack only for unexpected failures. An event that is not an API
 * Gateway request (`invoke local` with another event, or none) is answered a 400, like any
 * malformed request.
 */
export function httpHandler(handle: HttpHandler): APIGatewayProxyHandlerV2 {
  return async (event, context) => {
    // hrtime, not performance.now(): the first use of `performance` loads perf_hooks, about
    // 0.5 ms of every cold start.
    const started = process.hrtime.bigint();
    // The event as it may arrive from a caller other than API Gateway (`invoke local`, say).
    const request = event as Unchecked | undefined;
    // Checked here, so that every handler may read the event's method, path and headers.
    const method = request?.requestContext?.http?.method;
    let response: HttpResponse;
    let failure: unknown;
    try {
      if (method === undefined || typeof request?.headers !== 'object') {
        throw new InvalidInput('Not an API Gateway HTTP API event');
      }
      response = await handle(event, deadlineOf(context));
    } catch (error) {
      response = errorToResponse(error);
      // A 4xx is the client's and is answered; a 5xx is ours and is logged with its stack.
      if ((response.statusCode ?? 500) >= 500) failure = error;
    }
    // The path's {id} as sent, or a POST's new id from its Location; kept short: the log is
    // for finding requests, not for storing input.
    const todoId = (request?.pathParameters?.id ?? response.headers?.location?.toString().slice(7))?.slice(0, 32);
    log(failure === undefined ? 'info' : 'error', {
      message: 'request',
      method,
      route: request?.routeKey,
      status: response.statusCode,
      durationMs: Number((process.hrtime.bigint() - started) / 10_000n) / 100,
      requestId: context.awsRequestId,
      todoId,
      error: errorFields(failure),
      ...metricFields([
        cold && 'ColdStart',
        response.headers?.['idempotent-replayed'] ? 'Replayed' : WRITTEN[`${method} ${response.statusCode}`],
        failure instanceof Refusal && failure.metric,
      ]),
    });
    cold = false;
    return response;
  };
}
