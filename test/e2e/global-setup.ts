import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { killGroup, PROJECT_ROOT, startOffline, type OfflineServer } from '../support/offline';
import { E2E_STORES, SERVERS_ENV, serverKey } from './servers';

declare global {
  // Read by global-teardown.ts: jest runs both in the same context.
  var e2eServers: OfflineServer[] | undefined;
}

/**
 * One real server per e2e test file and store, each on its own free port: `npm start` for
 * the memory store, `npm run start:dynamodb` (with its own embedded dynalite) for DynamoDB.
 * Every file so starts from the seeded store (records 1 and 2, next id 3), and files run in parallel.
 */
export default async function globalSetup(): Promise<void> {
  const files = readdirSync(join(PROJECT_ROOT, 'test/e2e')).filter((name) => name.endsWith('.test.ts'));
  const wanted = files.flatMap((file) =>
    E2E_STORES.map(({ store, script }) => ({ key: serverKey(file, store), script })),
  );
  const started = await Promise.allSettled(wanted.map(({ script }) => startOffline({ script })));
  const servers = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  globalThis.e2eServers = servers;
  // Even if jest itself is killed or crashes, the servers go with it.
  process.once('exit', () => {
    for (const server of servers) killGroup(server.pid, 'SIGKILL');
  });
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) {
    await Promise.all(servers.map((server) => server.stop()));
    throw failed.reason;
  }
  const urls = Object.fromEntries(
    wanted.map(({ key }, i) => {
      const result = started[i];
      return [key, result?.status === 'fulfilled' ? result.value.url : undefined];
    }),
  );
  process.env[SERVERS_ENV] = JSON.stringify(urls);
}
