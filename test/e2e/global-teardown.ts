/** Stops every server from global-setup.ts; jest runs this even when tests fail. */
export default async function globalTeardown(): Promise<void> {
  await Promise.all((globalThis.e2eServers ?? []).map((server) => server.stop()));
}
