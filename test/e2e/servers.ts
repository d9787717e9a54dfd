import { basename } from 'node:path';

export const SERVERS_ENV = 'TODO_E2E_SERVERS';

/** The e2e suites run once per store, each against its own server. */
export const E2E_STORES = [
  { store: 'memory', script: 'start' },
  { store: 'dynamodb', script: 'start:dynamodb' },
] as const;

export type E2eStore = (typeof E2E_STORES)[number]['store'];

export function serverKey(testFile: string, store: E2eStore): string {
  return `${basename(testFile)}:${store}`;
}

/** The base URL of the server global-setup.ts started for this test file and store. */
export function serverFor(testFile: string, store: E2eStore): string {
  const urls = JSON.parse(process.env[SERVERS_ENV] ?? '{}') as Record<string, string | undefined>;
  const url = urls[serverKey(testFile, store)];
  if (url === undefined) throw new Error(`no e2e server was started for ${testFile} (${store})`);
  return url;
}
