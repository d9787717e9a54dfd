import { runLoad, type LoadOptions, type LoadReport } from '../../harness/load';
import { startOffline } from '../../harness/offline';
import type { Row } from '../lib';
import { rssMb, serverlessPid } from '../proc';

export interface LoadRun extends LoadOptions {
  store: 'memory' | 'dynamodb';
  /** The server's heap cap: V8 otherwise grows its heap lazily toward gigabytes before it collects, and RSS would say nothing about leaks. */
  heapMb: number;
  /** Keep serverless-offline's own timeout timers, as `npm start` does (README, Limits). */
  keepTimeout: boolean;
}

export interface LoadMeasurement {
  report: LoadReport;
  rssBeforeMb: number;
  rssAfterMb: number;
}

export const DEFAULT_LOAD: Omit<LoadRun, 'store'> = {
  amount: 20_000,
  connections: 32,
  maxSeconds: 120,
  heapMb: 256,
  keepTimeout: false,
};

/** `npm start` (or start:dynamodb) on a free port, loaded by harness/load.ts, with its RSS before and after. */
export async function measureLoad(run: LoadRun): Promise<LoadMeasurement> {
  const server = await startOffline({
    script: run.store === 'dynamodb' ? 'start:dynamodb' : 'start',
    // serverless-offline keeps every invocation's timeout timer running after the invocation
    // ends (LambdaFunction#timeoutAndTerminate), which holds its response for the function
    // timeout (10 s): at thousands of requests a second that is hundreds of MB of the emulator's,
    // not ours. --noTimeout drops that timer, so the figures are the service's.
    args: run.keepTimeout ? [] : ['--noTimeout'],
    env: { LOG_LEVEL: 'silent', NODE_OPTIONS: `--max-old-space-size=${run.heapMb}` },
  });
  try {
    // One request so every function is loaded before the first reading.
    await fetch(`${server.url}/todos`);
    const pid = serverlessPid(server.pid);
    const rssBeforeMb = rssMb(pid);
    const report = await runLoad(server.url, run).catch((error: unknown) => {
      console.error(server.output().split('\n').slice(-30).join('\n'));
      throw error;
    });
    return { report, rssBeforeMb, rssAfterMb: rssMb(pid) };
  } finally {
    await server.stop();
  }
}

/** `npm run load` for each store, as rows: throughput, latency, what was checked, RSS. */
export async function load(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const store of ['memory', 'dynamodb'] as const) {
    const { report, rssBeforeMb, rssAfterMb } = await measureLoad({ store, ...DEFAULT_LOAD });
    if (report.problems.length > 0) throw new Error(`${store}: ${report.problems.join('; ')}`);
    rows.push({
      section: 'load',
      name: `${store} store: ${report.requests} requests, ${DEFAULT_LOAD.connections} connections`,
      value: Math.round(report.requestsPerSecond),
      unit: 'req/s',
      note:
        `p50 ${report.latencyMs.p50} ms, p99 ${report.latencyMs.p99} ms, max ${report.latencyMs.max} ms; ` +
        `${report.created} creates and ${report.deleted} deletes acknowledged, ${report.listed} listed after: ` +
        `0 lost, 0 5xx; RSS ${rssBeforeMb} → ${rssAfterMb} MB (heap capped at ${DEFAULT_LOAD.heapMb} MB)`,
    });
  }
  return rows;
}
