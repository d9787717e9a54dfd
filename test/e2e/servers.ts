import { basename } from 'node:path';

export const SERVERS_ENV = 'TODO_E2E_SERVERS';

/** The base URL of the server global-setup.ts started for this test file. */
export function serverFor(testFile: string): string {
  const urls = JSON.parse(process.env[SERVERS_ENV] ?? '{}') as Record<string, string | undefined>;
  const url = urls[basename(testFile)];
  if (url === undefined) throw new Error(`no e2e server was started for ${testFile}`);
  return url;
}
