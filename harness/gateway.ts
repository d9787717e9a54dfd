import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { RESPONSE_LIMIT_BYTES } from '../test/support/event';
import type { Invocation } from './container';

/**
 * An API Gateway HTTP API in front of the fleet's functions, as AWS runs one with Lambda proxy
 * integrations and payload format 2.0:
 *
 * - each request becomes a 2.0 event: lower-cased headers (repeats joined with commas), cookies
 *   apart, the raw query string, path parameters from the route, and the body as text only for
 *   text/*, JSON, XML and JavaScript; anything else, and a body with no Content-Type, arrives
 *   base64 with `isBase64Encoded: true`;
 * - a body over 10 MB is a 413 before any function runs; an unknown route is a 404;
 * - the function's answer is read as AWS reads it: `isBase64Encoded` bodies are decoded to
 *   bytes, `cookies` become `set-cookie`, and an answer without `statusCode` is a 200 JSON body;
 * - Lambda refuses an answer over 6,291,556 bytes (serialized), and a function that throws, times
 *   out or crashes: API Gateway then answers 500 `{"message":"Internal Server Error"}`;
 * - CORS as the API's CorsConfiguration says: preflights answered by the gateway, and the
 *   allow-origin and expose-headers on every answer to a request with an Origin.
 *
 * Not modelled: the stage's throttling (it would cap the benchmarks), authorizers (the API has none).
 */

/** API Gateway's limit on a request body. */
export const REQUEST_LIMIT_BYTES = 10 * 1024 * 1024;

export interface Route {
  /** `GET /todos/{id}`. */
  readonly routeKey: string;
  readonly invoke: (event: APIGatewayProxyEventV2) => Promise<Invocation>;
}

export interface Cors {
  readonly AllowOrigins?: string[];
  readonly AllowMethods?: string[];
  readonly AllowHeaders?: string[];
  readonly ExposeHeaders?: string[];
  readonly MaxAge?: number;
}

/** What the gateway saw of one request: for tests that check what Lambda answered. */
export interface GatewayRecord {
  readonly routeKey: string;
  readonly status: number;
  /** The serialized size of the function's answer, in bytes. */
  readonly responseBytes?: number;
  /** Why the integration failed, when it did. */
  readonly integrationError?: string;
}

export interface Gateway {
  readonly url: string;
  readonly records: readonly GatewayRecord[];
  close(): Promise<void>;
}

const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript)\b|application\/[^;]*\+(json|xml)\b)/i;

function matcher(routeKey: string): { method: string; pattern: RegExp; names: string[] } {
  const [method = '', path = ''] = routeKey.split(' ');
  const names: string[] = [];
  const pattern = path.replace(/\{([^}+]+)(\+?)\}/g, (_all, name: string, greedy: string) => {
    names.push(name);
    return greedy === '+' ? '(.+)' : '([^/]+)';
  });
  return { method, pattern: new RegExp(`^${pattern}$`), names };
}

/** CLF time, as requestContext.time has it: `22/Nov/2026:10:48:25 +0000`. */
function clfTime(date: Date): string {
  const [, day, month, year, time] = /^\w+, (\d+) (\w+) (\d+) ([\d:]+)/.exec(date.toUTCString()) ?? [];
  return `${day?.padStart(2, '0')}/${month}/${year}:${time} +0000`;
}

function headersOf(incoming: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  const raw = incoming.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    const value = raw[i + 1] ?? '';
    headers[name] = name in headers ? `${headers[name]},${value}` : value;
  }
  return headers;
}

export async function startGateway(routes: readonly Route[], cors: Cors = {}): Promise<Gateway> {
  const table = routes.map((route) => ({ route, ...matcher(route.routeKey) }));
  const records: GatewayRecord[] = [];

  function corsHeaders(origin: string | undefined): Record<string, string> {
    if (origin === undefined) return {};
    const origins = cors.AllowOrigins ?? [];
    if (!origins.includes('*') && !origins.includes(origin)) return {};
    return {
      'access-control-allow-origin': origins.includes('*') ? '*' : origin,
      ...(cors.ExposeHeaders?.length ? { 'access-control-expose-headers': cors.ExposeHeaders.join(',') } : {}),
    };
  }

  async function handle(incoming: IncomingMessage, answer: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of incoming) {
      size += (chunk as Buffer).length;
      if (size <= REQUEST_LIMIT_BYTES) chunks.push(chunk as Buffer);
    }
    const headers = headersOf(incoming);
    const url = new URL(incoming.url ?? '/', 'http://gateway');
    const method = incoming.method ?? 'GET';
    const origin = headers.origin;
    function send(status: number, body: string | Buffer, extra: Record<string, string> = {}) {
      answer.writeHead(status, { 'apigw-requestid': randomUUID(), ...corsHeaders(origin), ...extra }).end(body);
    }
    function message(status: number, text: string) {
      send(status, JSON.stringify({ message: text }), { 'content-type': 'application/json' });
    }

    if (method === 'OPTIONS' && origin !== undefined && headers['access-control-request-method'] !== undefined) {
      const allowed = corsHeaders(origin);
      send(204, '', {
        ...(allowed['access-control-allow-origin'] === undefined
          ? {}
          : {
              'access-control-allow-methods': (cors.AllowMethods ?? []).join(','),
              'access-control-allow-headers': (cors.AllowHeaders ?? []).join(','),
              'access-control-max-age': String(cors.MaxAge ?? 0),
            }),
      });
      return;
    }
    if (size > REQUEST_LIMIT_BYTES) {
      message(413, 'Request Entity Too Large');
      return;
    }
    const found = table
      .map((entry) => ({ entry, match: entry.method === method ? entry.pattern.exec(url.pathname) : null }))
      .find(({ match }) => match !== null);
    if (found?.match == null) {
      message(404, 'Not Found');
      return;
    }
    const { entry, match } = found;
    const pathParameters = Object.fromEntries(
      entry.names.map((name, i) => [name, decodeURIComponent(match[i + 1] ?? '')]),
    );
    const body = Buffer.concat(chunks);
    const text = TEXT_TYPES.test(headers['content-type'] ?? '');
    // Payload 2.0 hands cookies over apart, as a list.
    const cookies = headers.cookie?.split(/;\s*/);
    const eventHeaders = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'cookie'));
    const now = new Date();
    const query = url.search.slice(1);
    const event: APIGatewayProxyEventV2 = {
      version: '2.0',
      routeKey: entry.route.routeKey,
      rawPath: url.pathname,
      rawQueryString: query,
      ...(cookies === undefined ? {} : { cookies }),
      headers: eventHeaders,
      ...(query === ''
        ? {}
        : {
            queryStringParameters: Object.fromEntries(
              [...url.searchParams.keys()].map((key) => [key, url.searchParams.getAll(key).join(',')]),
            ),
          }),
      requestContext: {
        accountId: '123456789012',
        apiId: 'fleet',
        domainName: headers.host ?? 'localhost',
        domainPrefix: (headers.host ?? 'localhost').split('.')[0] ?? 'localhost',
        http: {
          method,
          path: url.pathname,
          protocol: `HTTP/${incoming.httpVersion}`,
          sourceIp: incoming.socket.remoteAddress ?? '127.0.0.1',
          userAgent: headers['user-agent'] ?? '',
        },
        requestId: randomUUID(),
        routeKey: entry.route.routeKey,
        stage: '$default',
        time: clfTime(now),
        timeEpoch: now.getTime(),
      },
      ...(entry.names.length > 0 ? { pathParameters } : {}),
      ...(body.length > 0 ? { body: text ? body.toString('utf8') : body.toString('base64') } : {}),
      isBase64Encoded: body.length > 0 && !text,
    };

    const invocation = await entry.route.invoke(event);
    if (!invocation.ok) {
      records.push({
        routeKey: entry.route.routeKey,
        status: 500,
        integrationError: `${invocation.errorType}: ${invocation.errorMessage}`,
      });
      message(500, 'Internal Server Error');
      return;
    }
    const serialized = JSON.stringify(invocation.result ?? null);
    const responseBytes = Buffer.byteLength(serialized);
    if (responseBytes > RESPONSE_LIMIT_BYTES) {
      records.push({
        routeKey: entry.route.routeKey,
        status: 500,
        responseBytes,
        integrationError: `Function.ResponseSizeTooLarge: ${responseBytes} bytes`,
      });
      message(500, 'Internal Server Error');
      return;
    }
    const result = invocation.result;
    if (typeof result !== 'object' || result === null || !('statusCode' in result)) {
      records.push({ routeKey: entry.route.routeKey, status: 200, responseBytes });
      send(200, serialized, { 'content-type': 'application/json' });
      return;
    }
    const structured = result as {
      statusCode: number;
      headers?: Record<string, string | number | boolean>;
      body?: string;
      isBase64Encoded?: boolean;
      cookies?: string[];
    };
    records.push({ routeKey: entry.route.routeKey, status: structured.statusCode, responseBytes });
    const responseHeaders = Object.fromEntries(
      Object.entries(structured.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]),
    );
    const responseBody = Buffer.from(structured.body ?? '', structured.isBase64Encoded ? 'base64' : 'utf8');
    answer.writeHead(structured.statusCode, {
      'apigw-requestid': event.requestContext.requestId,
      ...corsHeaders(origin),
      ...responseHeaders,
      'content-length': String(responseBody.length),
      ...(structured.cookies?.length ? { 'set-cookie': structured.cookies } : {}),
    });
    answer.end(responseBody);
  }

  const server = createServer((incoming, answer) => {
    handle(incoming, answer).catch((error: unknown) => {
      if (!answer.headersSent) answer.writeHead(500, { 'content-type': 'application/json' });
      answer.end(JSON.stringify({ message: 'Internal Server Error', gatewayFault: String(error) }));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    records,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
