/**
 * `npm run load`: interleaved concurrent creates, updates, reads and deletes against a live
 * `npm start` on a free loopback port, bounded in count and time; then it checks from GET /todos
 * that nothing was lost (harness/load.ts, which the e2e suite also runs, smaller).
 *
 *   npm run load                      # 20,000 requests, 32 connections, memory store
 *   npm run load -- --store dynamodb  # the same through start:dynamodb
 *   npm run load -- --amount 5000 --connections 8 --seconds 60 --heap-mb 256
 *   npm run load -- --amount 60000 --keep-timeout  # the emulator's own timeout timers kept (README, Limits)
 */
import { runLoad, type LoadOptions } from '../harness/load';
import { startOffline } from '../harness/offline';
import { rssMb, serverlessPid } from './proc';

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

async function main(): Promise<void> {
  const store = option('store', 'memory');
  const options: LoadOptions = {
    amount: Number(option('amount', '20000')),
    connections: Number(option('connections', '32')),
    maxSeconds: Number(option('seconds', '120')),
  };
  // A heap cap makes "memory stays bounded" testable: V8 otherwise grows its heap lazily toward
  // gigabytes on a large machine before it collects, and RSS would say nothing about leaks.
  const heapMb = Number(option('heap-mb', '256'));
  const server = await startOffline({
    script: store === 'dynamodb' ? 'start:dynamodb' : 'start',
    // serverless-offline keeps every invocation's timeout timer running after the invocation
    // ends (LambdaFunction#timeoutAndTerminate), which holds its response for the function
    // timeout (10 s): at thousands of requests a second that is hundreds of MB of the emulator's,
    // not ours. --noTimeout drops that timer, so the figures are the service's. README, Limits.
    // --keep-timeout runs the emulator as `npm start` does, to see that for yourself.
    args: process.argv.includes('--keep-timeout') ? [] : ['--noTimeout'],
    env: { LOG_LEVEL: 'silent', NODE_OPTIONS: `--max-old-space-size=${heapMb}` },
  });
  try {
    // One request so every function is loaded before the first reading.
    await fetch(`${server.url}/todos`);
    const pid = serverlessPid(server.pid);
    const rssBefore = rssMb(pid);
    const report = await runLoad(server.url, options).catch((error: unknown) => {
      console.error(server.output().split('\n').slice(-30).join('\n'));
      throw error;
    });
    const rssAfter = rssMb(pid);
    console.log(
      `load: ${store} store, ${options.connections} connections, ${options.amount} requests at most, ` +
        `${options.maxSeconds} s at most, server heap capped at ${heapMb} MB`,
    );
    console.table({
      requests: report.requests,
      'errors (connection)': report.errors,
      timeouts: report.timeouts,
      'p50 latency (ms)': report.latencyMs.p50,
      'p99 latency (ms)': report.latencyMs.p99,
      'max latency (ms)': report.latencyMs.max,
      'throughput (req/s)': Math.round(report.requestsPerSecond),
      'acknowledged creates': report.created,
      'acknowledged deletes': report.deleted,
      'records listed after': report.listed,
      'server RSS before (MB)': rssBefore,
      'server RSS after (MB)': rssAfter,
    });
    console.log('statuses:', JSON.stringify(report.statuses));
    if (report.problems.length > 0) {
      console.error(`FAILED:\n- ${report.problems.join('\n- ')}`);
      process.exitCode = 1;
    } else {
      console.log('verified: 0 lost records, 0 revived deletes, ids distinct and increasing, 0 5xx');
    }
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
