/**
 * The five handlers mounted on a bare node:http server, with no emulator: what serving them
 * costs without serverless-offline. Used by the optional emulator section of `npm run bench`.
 * Prints "listening <port>" once ready.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, event, invoke, type Method } from '../test/support/event';
import { functionFor, handlersOn } from '../test/support/routes';
import { memoryStore } from '../lib/memory-store';

const handlers = handlersOn(memoryStore);
const lambdaContext = context({ timeoutMs: 24 * 60 * 60 * 1000 });

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8');
}

const server = createServer((request, response) => {
  void (async () => {
    const method = (request.method ?? 'GET') as Method;
    const [pathname = '/'] = (request.url ?? '/').split('?');
    const [, id] = /^\/todos(?:\/([^/]+))?$/.exec(pathname) ?? [];
    const name = /^\/todos(\/[^/]+)?$/.test(pathname) ? functionFor(method, id !== undefined) : undefined;
    if (name === undefined) {
      response.writeHead(404).end();
      return;
    }
    const body = await readBody(request);
    const lambdaEvent = event({
      method,
      ...(id === undefined ? {} : { id: decodeURIComponent(id) }),
      ...(body === undefined ? {} : { rawBody: body }),
      requestId: randomUUID(),
    });
    const result = await invoke(handlers[name], lambdaEvent, lambdaContext);
    response.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>).end(result.body);
  })();
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
});
