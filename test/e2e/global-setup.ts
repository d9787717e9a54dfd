import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { killGroup, PROJECT_ROOT, startOffline, type OfflineServer } from '../support/offline';
import { SERVERS_ENV } from './servers';

declare global {
  // Read by global-teardown.ts: jest runs both in the same context.
  var e2eServers: OfflineServer[] | undefined;
}

/**
 * One real `npm start` per e2e test file, each on its own free port, so every file
 * starts from the seeded store (records 1 and 2, next id 3) and files can run in parallel.
 */
export default async function globalSetup(): Promise<void> {
  const files = readdirSync(join(PROJECT_ROOT, 'test/e2e')).filter((name) => name.endsWith('.test.ts'));
  const started = await Promise.allSettled(files.map(() => startOffline()));
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
  const urls = Object.fromEntries(files.map((file, i) => [file, servers[i]?.url]));
  process.env[SERVERS_ENV] = JSON.stringify(urls);
}
