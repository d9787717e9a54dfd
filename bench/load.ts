/**
 * `npm run load`: interleaved concurrent creates, updates, reads and deletes against a live
 * `npm start` on a free loopback port, bounded in count and time; then it checks from GET /todos
 * that nothing was lost (harness/load.ts, which the e2e suite also runs, smaller).
 * `npm run bench -- load` runs the defaults for both stores and keeps the figures.
 *
 *   npm run load                      # 20,000 requests, 32 connections, memory store
 *   npm run load -- --store dynamodb  # the same through start:dynamodb
 *   npm run load -- --amount 5000 --connections 8 --seconds 60 --heap-mb 256
 *   npm run load -- --amount 60000 --keep-timeout  # the emulator's own timeout timers kept (README, Limits)
 */
import { DEFAULT_LOAD, measureLoad, type LoadRun } from './sections/load';

function option(name: string, fallback: number | string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? (process.argv[index + 1] ?? String(fallback)) : String(fallback);
}

async function main(): Promise<void> {
  const run: LoadRun = {
    store: option('store', 'memory') === 'dynamodb' ? 'dynamodb' : 'memory',
    amount: Number(option('amount', DEFAULT_LOAD.amount)),
    connections: Number(option('connections', DEFAULT_LOAD.connections)),
    maxSeconds: Number(option('seconds', DEFAULT_LOAD.maxSeconds)),
    heapMb: Number(option('heap-mb', DEFAULT_LOAD.heapMb)),
    keepTimeout: process.argv.includes('--keep-timeout'),
  };
  const { report, rssBeforeMb, rssAfterMb } = await measureLoad(run);
  console.log(
    `load: ${run.store} store, ${run.connections} connections, ${run.amount} requests at most, ` +
      `${run.maxSeconds} s at most, server heap capped at ${run.heapMb} MB`,
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
    'server RSS before (MB)': rssBeforeMb,
    'server RSS after (MB)': rssAfterMb,
  });
  console.log('statuses:', JSON.stringify(report.statuses));
  if (report.problems.length > 0) {
    console.error(`FAILED:\n- ${report.problems.join('\n- ')}`);
    process.exitCode = 1;
  } else {
    console.log('verified: 0 lost records, 0 revived deletes, ids distinct and increasing, 0 5xx');
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
