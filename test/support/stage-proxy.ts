import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The network between a client and a stage, for the tests of `npm run smoke`: it passes every
 * request on as it is, except those a test picks, which it holds until released (a slow
 * network, so that a test can act while a request is in flight), or whose answer it loses (the
 * stage did the work; the client never hears of it).
 */

/** Picks requests by method and path; called once per request, in the order they arrive. */
export type Pick = (method: string, path: string) => boolean;

export interface StageProxyOptions {
  readonly hold?: Pick;
  readonly loseAnswer?: Pick;
}

export interface StageProxy {
  readonly url: string;
  /** Resolves once a request to hold has arrived (and is held). */
  readonly holding: Promise<void>;
  /** Passes the held requests on. */
  release(): void;
  close(): Promise<void>;
}

export async function startStageProxy(target: string, { hold, loseAnswer }: StageProxyOptions): Promise<StageProxy> {
  let arrived: () => void = () => undefined;
  const holding = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  let released: () => void = () => undefined;
  const release = new Promise<void>((resolve) => {
    released = resolve;
  });

  async function pass(incoming: IncomingMessage, answer: ServerResponse): Promise<void> {
    const method = incoming.method ?? 'GET';
    const path = incoming.url ?? '/';
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    if (hold?.(method, path) === true) {
      arrived();
      await release;
    }
    const lose = loseAnswer?.(method, path) === true;
    // Host names the proxy; the stage gets its own, as a client that called it directly sends.
    const headers = { ...incoming.headers, host: new URL(target).host };
    const upstream = httpRequest(new URL(path, target), { method, headers }, (response) => {
      const body: Buffer[] = [];
      response.on('data', (chunk: Buffer) => body.push(chunk));
      response.on('end', () => {
        if (lose) {
          incoming.socket.destroy();
          return;
        }
        answer.writeHead(response.statusCode ?? 502, response.headers).end(Buffer.concat(body));
      });
    });
    upstream.on('error', () => incoming.socket.destroy());
    upstream.end(Buffer.concat(chunks));
  }

  const server = createServer((incoming, answer) => {
    pass(incoming, answer).catch(() => incoming.socket.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    holding,
    release: () => {
      released();
    },
    async close() {
      released();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
