import type { APIGatewayProxyEventV2, APIGatewayProxyHandlerV2, Context } from 'aws-lambda';
import type { HttpResponse } from '../../lib/http';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface EventOptions {
  method?: Method;
  /** The `{id}` path parameter, exactly as it would arrive in the URL. */
  id?: string;
  /** A value to send as JSON. */
  body?: unknown;
  /** A body sent as it is, for input that is not JSON. */
  rawBody?: string;
  /** Send the body base64-encoded, as API Gateway does for some content types. */
  base64?: boolean;
  /** The request id API Gateway gives the request. */
  requestId?: string;
  /** More request headers, lower-cased as API Gateway passes them (`idempotency-key`, `accept-encoding`). */
  headers?: Record<string, string>;
}

function noop(): void {
  return;
}

/** A mocked API Gateway HTTP API (payload 2.0) event, shaped like the request it names. */
export function event({
  method = 'GET',
  id,
  body,
  rawBody,
  base64 = false,
  requestId = 'request-id',
  headers = {},
}: EventOptions = {}): APIGatewayProxyEventV2 {
  const path = id === undefined ? '/todos' : `/todos/${id}`;
  const routePath = id === undefined ? '/todos' : '/todos/{id}';
  const text = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
  const now = new Date();
  return {
    version: '2.0',
    routeKey: `${method} ${routePath}`,
    rawPath: path,
    rawQueryString: '',
    headers: { ...(text === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(id === undefined ? {} : { pathParameters: { id } }),
    ...(text === undefined ? {} : { body: base64 ? Buffer.from(text, 'utf8').toString('base64') : text }),
    isBase64Encoded: base64,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api-id',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'harness' },
      requestId,
      routeKey: `${method} ${routePath}`,
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
  };
}

/** Lambda's limit on a synchronous invocation's answer, in bytes of its JSON (harness/gateway.ts refuses past it). */
export const RESPONSE_LIMIT_BYTES = 6_291_556;

/** Lambda's timeout for every function (serverless.yml), as the context reports it at the start. */
export const FUNCTION_TIMEOUT_MS = 10_000;

// Deprecated since Node 8 runtimes, but the Context type still requires them; no handler calls them.
const legacyCallbacks = { done: noop, fail: noop, succeed: noop };

/** A Lambda context whose clock starts now and runs out after `timeoutMs`, as Lambda's does. */
export function context({ timeoutMs = FUNCTION_TIMEOUT_MS, requestId = 'aws-request-id' } = {}): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:test',
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: '/aws/lambda/test',
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    ...legacyCallbacks,
  };
}

/** Calls a handler as Lambda would and insists on a structured response. */
export async function invoke(
  handler: APIGatewayProxyHandlerV2,
  request: APIGatewayProxyEventV2,
  lambdaContext: Context = context(),
): Promise<HttpResponse> {
  const result = await handler(request, lambdaContext, noop);
  if (typeof result !== 'object') throw new Error(`handler answered ${String(result)}, not a response object`);
  return result;
}

/** The response body parsed as JSON. */
export function bodyOf(response: HttpResponse): unknown {
  if (typeof response.body !== 'string') throw new Error('response has no string body');
  return JSON.parse(response.body);
}
