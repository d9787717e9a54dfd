import { createServer, type Server, type Socket } from 'node:net';

/**
 * A port the local workflow suggests when one is busy (serverless/plugins/local-workflow/ports.cjs):
 * the first port after the busy one that was free when it checked, and not the other setting's. A
 * test cannot know which ports other processes held at that moment, so it reads the suggestion
 * from the line and holds it to what it must be: after the busy port, within the few next, and not
 * the one it would clash with.
 */
export function suggestedPort(line: string, setting: 'PORT' | 'LAMBDA_PORT', after: number, notAlso?: number): number {
  const match = new RegExp(`e\\.g\\. ${setting}=(\\d+)`).exec(line);
  if (match === null) throw new Error(`no ${setting} suggested in: ${line}`);
  const port = Number(match[1]);
  // A few in a row may be busy on a machine running other tests; past that, the suggestion is wrong.
  if (port <= after || port > after + 20 || port === notAlso) {
    throw new Error(`${setting}=${port} suggested after ${after}${notAlso === undefined ? '' : ` (not ${notAlso})`}`);
  }
  return port;
}

/**
 * The ports a user's own servers take when nothing else is said: `npm start`'s API (PORT's
 * default) and `npm run dynamodb`'s DynamoDB Local. `npm test` must pass beside them.
 */
export const USER_PORTS = [3000, 8000] as const;

/** Ports held for a test, each by a server of its own or by another process already. */
export interface HeldPorts {
  readonly ports: readonly number[];
  /** Closes the servers this holder started; a port another process held stays as it was. */
  release(): Promise<void>;
}

/**
 * Makes `ports` busy as a user's servers would, for a test that must pass beside them: each is
 * listened on, on every interface (which also takes localhost, where serverless-offline
 * listens), unless another process already does, which is the same for the test.
 */
export async function holdPorts(ports: readonly number[]): Promise<HeldPorts> {
  const servers: Server[] = [];
  // A user's client may connect to a held port meanwhile (a curl at localhost:3000): closed with the server, so that
  // the release does not wait for it.
  const sockets = new Set<Socket>();
  for (const port of ports) {
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    const listening = await new Promise<boolean>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'EADDRINUSE') resolve(false);
        else reject(error);
      });
      server.listen(port, () => {
        resolve(true);
      });
    });
    if (listening) servers.push(server);
  }
  return {
    ports,
    release: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => {
                resolve();
              });
            }),
        ),
      );
    },
  };
}
