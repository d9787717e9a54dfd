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
import { noPositionals, numberOption, oneOf, parseCommandLine, runTool } from '../scripts/command-line';
import { DEFAULT_LOAD, measureLoad, type LoadRun } from './sections/load';

const TOOL = 'npm run load';

const STORES = ['memory', 'dynamodb'] as const;

const HELP = `Usage: ${TOOL} [-- --store memory|dynamodb] [--amount <n>] [--connections <n>] [--seconds <n>] [--heap-mb <n>] [--keep-timeout]

Starts the API on a free loopback port, sends interleaved creates, updates, reads and deletes,
then checks from GET /todos that nothing was lost.

  --store <store>      memory (npm start, the default) or dynamodb (npm run start:dynamodb)
  --amount <n>         requests at most (default ${DEFAULT_LOAD.amount})
  --connections <n>    concurrent connections (default ${DEFAULT_LOAD.connections})
  --seconds <n>        seconds at most (default ${DEFAULT_LOAD.maxSeconds})
  --heap-mb <n>        the server's heap cap in MB (default ${DEFAULT_LOAD.heapMb})
  --keep-timeout       keep the emulator's own timeout timers, as npm start does (bench/README.md)
  -h, --help           print this text

Exit status: 0 nothing lost; 1 a check failed or the server did not start; 2 a wrong command line.
`;

const OPTIONS = {
  store: { type: 'string', default: 'memory' },
  amount: { type: 'string', default: String(DEFAULT_LOAD.amount) },
  connections: { type: 'string', default: String(DEFAULT_LOAD.connections) },
  seconds: { type: 'string', default: String(DEFAULT_LOAD.maxSeconds) },
  'heap-mb': { type: 'string', default: String(DEFAULT_LOAD.heapMb) },
  'keep-timeout': { type: 'boolean', default: false },
} as const;

/** Each count takes at least one: none of them means anything at 0. */
const COUNT = { min: 1, whole: true } as const;

async function main(): Promise<number> {
  const parsed = parseCommandLine(process.argv.slice(2), OPTIONS, TOOL);
  if (parsed === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const { values } = parsed;
  noPositionals(parsed.positionals, TOOL);
  const run: LoadRun = {
    store: oneOf(values.store, STORES, 'store', TOOL),
    amount: numberOption(values.amount, 'amount', COUNT, TOOL),
    connections: numberOption(values.connections, 'connections', COUNT, TOOL),
    maxSeconds: numberOption(values.seconds, 'seconds', COUNT, TOOL),
    heapMb: numberOption(values['heap-mb'], 'heap-mb', COUNT, TOOL),
    keepTimeout: values['keep-timeout'],
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
    return 1;
  }
  console.log('verified: 0 lost records, 0 revived deletes, ids distinct and increasing, 0 5xx');
  return 0;
}

runTool(main);
