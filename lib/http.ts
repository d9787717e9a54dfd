import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyHandlerV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import { accessLog, type Answered } from './access-log';
import { notModified, preconditionFailure, todoEtag } from './conditional';
import { InvalidInput, PayloadTooLarge, PreconditionFailed, Refusal } from './errors';
import { log } from './log';
import { metricFields } from './metrics';
import type { Deadline, IdempotencyClaim, Todo, TodoList, Written } from './todos';

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

/** A Todo's answer, with its entity tag (lib/conditional.ts) for a later If-Match or If-None-Match. */
export function todoAnswer(statusCode: number, todo: Todo, headers?: Record<string, string>): HttpResponse {
  return json(statusCode, todo, { etag: todoEtag(todo), ...headers });
}

/** 201 Created, with the record and its address in `Location`. */
export function created(todo: Todo): HttpResponse {
  return todoAnswer(201, todo, { location: `/todos/${todo.id}` });
}

/** 304 Not Modified: no body, and the headers a 200 would have had that say which copy is current. */
function notModifiedAnswer(headers: Record<string, string>): HttpResponse {
  return { statusCode: 304, headers, body: '' };
}

/**
 * GET /todos/{id}: the Todo; 412 when If-Match does not name it, 304 when If-None-Match names the
 * copy the client has (lib/conditional.ts).
 */
export function todoRead(event: APIGatewayProxyEventV2, todo: Todo): HttpResponse {
  const etag = todoEtag(todo);
  return notModified(event, etag) ? notModifiedAnswer({ etag }) : json(200, todo, { etag });
}

/**
 * What a handler answers when it has more to say than its response: the log line (lib/access-log.ts)
 * names a POST's new record by the id the store gave it, and counts a replay.
 */
export interface Answer {
  readonly response: HttpResponse;
  /** The id of the record the write answers with. */
  readonly todoId?: number;
  /** The answer is an earlier request's, replayed for its Idempotency-Key. */
  readonly replayed?: boolean;
}

/**
 * The answer to a write: `respond` builds it from what was written, and a replay of an earlier
 * request's answer (the same Idempotency-Key) says so in `Idempotent-Replayed`, as Stripe's does.
 */
export function answer<T extends Todo | true>(written: Written<T>, respond: (value: T) => HttpResponse): Answer {
  const response = respond(written.value);
  const todoId = written.value === true ? undefined : written.value.id;
  return {
    response: written.replayed
      ? { ...response, headers: { ...response.headers, 'idempotent-replayed': 'true' } }
      : response,
    replayed: written.replayed,
    ...(todoId === undefined ? {} : { todoId }),
  };
}

/**
 * A keyed write's input, as `parse` reads it; or, when this version refuses it (400, 413) while its Idempotency-Key
 * holds a record for this very request, that record, replayed. Another version took the request (during a deploy, one
 * that ignores a field this one checks), and a 400 would say that nothing changed where something did. Without a key,
 * or with nothing kept under it for this request, the refusal stands (docs/design.md, "Keys and tags across versions").
 */
export async function inputOrKept<T>(
  claim: IdempotencyClaim | undefined,
  parse: () => T,
  kept: (claim: IdempotencyClaim) => Promise<Written<Todo> | undefined>,
): Promise<{ readonly input: T } | { readonly kept: Written<Todo> }> {
  try {
    return { input: parse() };
  } catch (error) {
    if (claim === undefined || !(error instanceof InvalidInput || error instanceof PayloadTooLarge)) throw error;
    const answer = await kept(claim);
    if (answer === undefined) throw error;
    return { kept: answer };
  }
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
 * itself. The answer varies with Accept-Encoding, and says so to caches. Its entity tag is weak
 * (`W/"…"`), one for both encodings, as RFC 9110 §8.8.1 allows for the same content: so a 304 for
 * a client's If-None-Match is decided before any compression: by the store, from the list's
 * version alone (lib/conditional.ts, listCondition: no record is read for a 304), which answers
 * the tag without the records. A weak tag never matches If-Match, so any If-Match but `*` is a 412.
 */
export function listAnswer(event: APIGatewayProxyEventV2, { tag: etag, todos }: TodoList): HttpResponse {
  const headers = { 'content-type': JSON_TYPE, vary: 'accept-encoding', etag };
  if (todos === undefined) return notModifiedAnswer({ vary: headers.vary, etag });
  const body = JSON.stringify(todos);
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
 * The answer to whatever a handler throws. A 5xx is a failure of ours: the gateway would turn a
 * thrown error into a bare 502; the stack goes to the log (lib/access-log.ts), never the body. A
 * 412 says which of the request's conditions failed, which only the request tells.
 */
function errorAnswer(error: unknown, request: APIGatewayProxyEventV2 | undefined): HttpResponse {
  if (!(error instanceof Refusal)) return json(500, { error: 'Internal server error' });
  const message =
    error instanceof PreconditionFailed && request !== undefined
      ? preconditionFailure(request)
      : (error.answer ?? error.message);
  return json(error.status, { error: message }, error.headers);
}

export type HttpHandler = (event: APIGatewayProxyEventV2, deadline: Deadline) => Promise<HttpResponse | Answer>;

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

/** An event whose shape is not yet known: it may come from a caller other than API Gateway (`invoke local`, say). */
interface Unchecked {
  readonly requestContext?: { readonly http?: { readonly method?: string } };
  readonly headers?: unknown;
  readonly routeKey?: string;
  readonly pathParameters?: Record<string, string | undefined>;
}

/** What the log names of any event, and the event itself when it is an API Gateway HTTP API request. */
interface ReadEvent {
  readonly method: string | undefined;
  readonly route: string | undefined;
  readonly pathId: string | undefined;
  /** Undefined for an event of another kind, or none. */
  readonly request: APIGatewayProxyEventV2 | undefined;
}

/**
 * Reads an event of any shape. Whether it is an API Gateway HTTP API request is checked here, so
 * that every handler may read its method, path and headers.
 */
function readEvent(event: unknown): ReadEvent {
  const unchecked = event as Unchecked | undefined;
  const method = unchecked?.requestContext?.http?.method;
  const isHttpApi = method !== undefined && typeof unchecked?.headers === 'object' && unchecked.headers !== null;
  return {
    method,
    route: unchecked?.routeKey,
    pathId: unchecked?.pathParameters?.id,
    request: isHttpApi ? (event as APIGatewayProxyEventV2) : undefined,
  };
}

/**
 * The handler's answer to the request, never a throw: a request that is not an API Gateway one is
 * a 400, like any malformed request, and what the handler throws becomes its error answer.
 */
async function answerTo(
  handle: HttpHandler,
  request: APIGatewayProxyEventV2 | undefined,
  deadline: Deadline,
): Promise<Answered> {
  try {
    if (request === undefined) throw new InvalidInput('Not an API Gateway HTTP API event');
    const answered = await handle(request, deadline);
    return 'response' in answered ? answered : { response: answered };
  } catch (error) {
    return { response: errorAnswer(error, request), error };
  }
}

/** True until this container has answered its first request. */
let cold = true;

/**
 * Wraps a handler so that it never throws (every failure leaves as a JSON error), hands it the
 * request's deadline, and logs one line per request, with the service's metrics in it
 * (lib/access-log.ts says what the line holds).
 */
export function httpHandler(handle: HttpHandler): APIGatewayProxyHandlerV2 {
  return async (event, context) => {
    // hrtime, not performance.now(): the first use of `performance` loads perf_hooks, about
    // 0.5 ms of every cold start.
    const started = process.hrtime.bigint();
    const { method, route, pathId, request } = readEvent(event);
    const answered = await answerTo(handle, request, deadlineOf(context));
    const durationMs = Number((process.hrtime.bigint() - started) / 10_000n) / 100;
    const requestId = context.awsRequestId;
    const entry = accessLog({ method, route, pathId, requestId, durationMs, coldStart: cold }, answered);
    log(entry.level, { ...entry.fields, ...metricFields(entry.metrics) });
    cold = false;
    return answered.response;
  };
}
