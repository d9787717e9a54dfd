/**
 * The five handlers mounted on a bare node:http server, with no emulator: what serving them
 * costs without serverless-offline. Used by the emulator section of `npm run bench`.
 * Prints "listening <port>" once ready.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { handler as createTodo } from '../functions/createTodo';
import { handler as deleteTodo } from '../functions/deleteTodo';
import { handler as getTodo } from '../functions/getTodo';
import { handler as listTodos } from '../functions/listTodos';
import { handler as updateTodo } from '../functions/updateTodo';
import { context } from '../test/support/event';

const ROUTES: [string, RegExp, APIGatewayProxyHandlerV2][] = [
  ['GET /todos', /^\/todos$/, listTodos],
  ['POST /todos', /^\/todos$/, createTodo],
  ['GET /todos/{id}', /^\/todos\/([^/]+)$/, getTodo],
  ['PUT /todos/{id}', /^\/todos\/([^/]+)$/, updateTodo],
  ['DELETE /todos/{id}', /^\/todos\/([^/]+)$/, deleteTodo],
];

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8');
}

const server = createServer((request, response) => {
  void (async () => {
    const method = request.method ?? 'GET';
    const [pathname = '/'] = (request.url ?? '/').split('?');
    const route = ROUTES.find(([key, pattern]) => key.startsWith(`${method} `) && pattern.test(pathname));
    if (route === undefined) {
      response.writeHead(404).end();
      return;
    }
    const [routeKey, pattern, handler] = route;
    const id = pattern.exec(pathname)?.[1];
    const body = await readBody(request);
    const now = Date.now();
    const event: APIGatewayProxyEventV2 = {
      version: '2.0',
      routeKey,
      rawPath: pathname,
      rawQueryString: '',
      headers: {},
      isBase64Encoded: false,
      ...(id === undefined ? {} : { pathParameters: { id: decodeURIComponent(id) } }),
      ...(body === undefined ? {} : { body }),
      requestContext: {
        accountId: 'local',
        apiId: 'local',
        domainName: 'localhost',
        domainPrefix: 'localhost',
        http: { method, path: pathname, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: '' },
        requestId: randomUUID(),
        routeKey,
        stage: '$default',
        time: new Date(now).toISOString(),
        timeEpoch: now,
      },
    };
    const result = await handler(event, { ...context, awsRequestId: randomUUID() }, () => undefined);
    if (typeof result !== 'object') throw new Error('handlers answer objects');
    response.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>).end(result.body);
  })();
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
});
