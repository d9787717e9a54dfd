import { spawn, type ChildProcess } from 'node:child_process';
import { PROJECT_ROOT, freePort } from './project';
import { eventually } from './wait';

/** A running `serverless offline`, started the way the README says: `PORT=<n> npm start`. */
export interface OfflineServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Everything the server printed so far. */
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
  /** A port to use rather than a free one. */
  port?: number;
}

/**
 * How long a server may take to say "Server ready": loading the framework and its plugins and
 * bundling take about 2 s on an idle 2-core machine, and several times that when it is busy.
 */
export const START_WITHIN_MS = 60_000;

/** Starts `npm run <script>` on a free port and resolves once it answers requests. */
export async function startOffline({
  script = 'start',
  args = [],
  cwd = PROJECT_ROOT,
  env = {},
  port,
}: StartOptions = {}): Promise<OfflineServer> {
  const httpPort = port ?? (await freePort());
  // Its own process group, so stop() ends npm, the shell and serverless together.
  const child = spawn('npm', ['run', '--silent', script, ...(args.length > 0 ? ['--', ...args] : [])], {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env, PORT: String(httpPort), FORCE_COLOR: '0' },
  });
  let log = '';
  function collect(chunk: Buffer) {
    log += chunk.toString();
  }
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not spawn npm run ${script}`);
  const server: OfflineServer = {
    url: `http://localhost:${httpPort}`,
    port: httpPort,
    pid,
    output: () => log,
    // SIGTERM lets serverless remove its own esbuild work folder as it exits (serverless/plugins/local-workflow/work-folders.cjs).
    stop: () => stopGroup(child),
  };
  try {
    await eventually(
      () => {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`exited with ${child.exitCode ?? child.signalCode}`);
        return log.includes('Server ready:');
      },
      { within: START_WITHIN_MS, what: `npm run ${script} saying "Server ready"` },
    );
  } catch (error) {
    await server.stop();
    throw new Error(`npm run ${script} on port ${httpPort} did not start:\n${log}`, { cause: error });
  }
  return server;
}

/** How long a group has to go after SIGTERM: serverless-offline stops its servers in well under a second. */
const STOP_WITHIN_MS = 5_000;

/**
 * SIGTERM to the whole group, then SIGKILL to whatever of it has not gone within STOP_WITHIN_MS.
 * It waits for the whole group, not just npm: npm may exit before serverless, which is still
 * stopping its servers and removing its work folder.
 */
export async function stopGroup(child: ChildProcess): Promise<void> {
  const { pid } = child;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  killGroup(pid, 'SIGTERM');
  await eventually(() => !groupAlive(pid), { within: STOP_WITHIN_MS, what: `process group ${pid} exiting` }).catch(
    () => undefined,
  );
  killGroup(pid, 'SIGKILL');
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
