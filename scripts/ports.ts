import { once } from 'node:events';
import { createServer } from 'node:net';

/** A port the OS says is free on loopback right now. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port from the OS');
  return address.port;
}
