import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

/** A running `serverless offline`, started the way the README says: `PORT=<n> npm start`. */
export interface OfflineServer {
  readonly url: string;
  readonly pid: number;
  /** Everything the server printed so far, for a failure message. */
  output(): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** The npm script to run: `start` by default. */
  script?: string;
  /** Extra arguments for serverless offline (after `--`). */
  args?: string[];
  /** The project folder; this checkout by default. */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** How long to wait for "Server ready". Bundling and plugin loading take a few seconds. */
  timeoutMs?: number;
}

export const PROJECT_ROOT = resolve(__dirname, '../..');

/** A port the OS says is free on loopback right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port from the OS');
  return address.port;
}

/** Starts `npm run <script>` on a free port and resolves once it answers requests. */
export async function startOffline({
  script = 'start',
  args = [],
  cwd = PROJECT_ROOT,
  env = {},
  timeoutMs = 60_000,
}: StartOptions = {}): Promise<OfflineServer> {
  const port = await freePort();
  // Its own process group, so stop() ends npm, the shell and serverless together.
  const child = spawn('npm', ['run', '--silent', script, ...(args.length > 0 ? ['--', ...args] : [])], {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env, PORT: String(port), FORCE_COLOR: '0' },
  });
  let log = '';
  const collect = (chunk: Buffer) => {
    log += chunk.toString();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not spawn npm run ${script}`);
  const server: OfflineServer = {
    url: `http://localhost:${port}`,
    pid,
    output: () => log,
    stop: async () => {
      await stopGroup(child);
      // serverless.yml gives each PORT its own esbuild work folder; offline leaves it behind.
      rmSync(join(cwd, '.esbuild', String(port)), { recursive: true, force: true });
    },
  };
  try {
    await waitForReady(child, () => log, timeoutMs);
  } catch (error) {
    await server.stop();
    throw new Error(`npm run ${script} on port ${port} did not start:\n${log}`, { cause: error });
  }
  return server;
}

async function waitForReady(child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!output().includes('Server ready:')) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`exited with ${child.exitCode ?? child.signalCode}`);
    if (Date.now() > deadline) throw new Error(`no "Server ready" within ${timeoutMs} ms`);
    await sleep(50);
  }
}

const sleep = (ms: number) =>
  new Promise((done) => {
    setTimeout(done, ms);
  });

/** SIGTERM to the whole group, then SIGKILL if it has not gone within 5 s. */
async function stopGroup(child: ChildProcess): Promise<void> {
  const { pid } = child;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  killGroup(pid, 'SIGTERM');
  const timer = setTimeout(() => {
    killGroup(pid, 'SIGKILL');
  }, 5_000);
  await exited;
  clearTimeout(timer);
  // npm may go before serverless does; make sure nothing of the group is left.
  killGroup(pid, 'SIGKILL');
}

export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
