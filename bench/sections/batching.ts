import { awsDynamoDb } from '../../harness/aws-dynamodb/dynamodb';
import { startFaultProxy } from '../../harness/fault-proxy';
import { openLoop, type PostAnswer } from '../../harness/load';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import { dynamoDb } from '../../lib/dynamodb/client';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  ensureTable,
  localClient,
  startDynamoDbLocal,
} from '../../test/support/dynamodb-local-process';
import { round, type Row } from '../lib';
import { fleetCpuMs, machineCpuMs } from '../proc';
import { PACING } from '../../lib/dynamodb/pacing';

/**
 * The POSTs of one process gathered into one transaction while another is in flight
 * (lib/dynamodb/store.ts), measured where it applies: one process taking every request, as
 * serverless-offline does, on DynamoDB as AWS runs it. The same offered rates as the fleet's,
 * with it and without it (each POST written on its own), the two taking turns point by point.
 */

const OFFERED_RATES = [25, 50, 100];
const SECONDS = 8;
/** Above this share of both cores busy, a point measures the machine. */
const SATURATED = 0.9;

async function point(store: DynamoDbTodoStore, rate: number, tag: string) {
  const cpu = { ...fleetCpuMs(), own: process.cpuUsage(), machine: machineCpuMs() };
  const answers: PostAnswer[] = await openLoop(rate, SECONDS, async (n) => {
    try {
      await store.create({ title: `${tag} ${n}` });
      return 201;
    } catch (error) {
      return (error as { status?: number }).status ?? 500;
    }
  });
  const own = process.cpuUsage(cpu.own);
  const machine = machineCpuMs();
  const created = answers.filter((answer) => answer.status === 201).length;
  const latencies = answers.map((answer) => answer.ms).sort((a, b) => a - b);
  const statuses: Record<number, number> = {};
  for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
  return {
    created,
    statuses,
    p50: latencies[Math.floor(latencies.length * 0.5)] ?? NaN,
    p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? NaN,
    cpuMs: (own.user + own.system) / 1000 + (fleetCpuMs().dynamoDbLocal - cpu.dynamoDbLocal),
    busy: (machine.busy - cpu.machine.busy) / Math.max(1, machine.total - cpu.machine.total),
  };
}

export async function batching(): Promise<Row[]> {
  const local = await startDynamoDbLocal();
  const dynamodb = awsDynamoDb(local.endpoint);
  const proxy = await startFaultProxy(dynamodb);
  const admin = localClient(local.endpoint);
  const rows: Row[] = [];
  try {
    const stores = await Promise.all(
      [true, false].map(async (batchPosts) => {
        const table = `batching-${String(batchPosts)}-${Date.now()}`;
        await ensureTable(admin, table);
        const store = new DynamoDbTodoStore(
          dynamoDb({ endpoint: proxy.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }),
          table,
          // A pacing of the bench's own for the design it measures against: each POST in a transaction of its own.
          { pacing: { ...PACING, batchPosts } },
        );
        await store.readList();
        return { name: batchPosts ? 'batched' : 'each on its own', store };
      }),
    );
    for (const [i, rate] of OFFERED_RATES.entries()) {
      for (const { name, store } of i % 2 === 0 ? stores : [...stores].reverse()) {
        const before = Object.values(dynamodb.stats.requests).reduce((sum, n) => sum + n, 0);
        const measured = await point(store, rate, `${name} ${rate}`);
        const sent = Object.values(dynamodb.stats.requests).reduce((sum, n) => sum + n, 0) - before;
        const failed = Object.entries(measured.statuses).filter(([status]) => status !== '201');
        rows.push({
          section: 'batching',
          name: `one process, POSTs ${name}, offered at ${rate}/s`,
          value: round(measured.created / SECONDS, 1),
          unit: 'POSTs/s',
          budget: `holds ${rate}/s: every POST 201, p99 < 1000 ms`,
          met: failed.length === 0 && measured.p99 < 1000,
          note:
            (measured.busy >= SATURATED ? 'CPU SATURATED (measures the machine); ' : '') +
            `machine ${round(measured.busy * 100, 0)} % busy; answers ${JSON.stringify(measured.statuses)}; ` +
            `p50 ${round(measured.p50, 0)} ms, p99 ${round(measured.p99, 0)} ms; ` +
            `${round(sent / Math.max(1, measured.created))} DynamoDB requests and ` +
            `${round(measured.cpuMs / Math.max(1, measured.created))} ms of CPU (this process and DynamoDB Local) a POST`,
        });
      }
    }
  } finally {
    await proxy.close();
    dynamodb.close();
    admin.destroy();
    await local.close();
  }
  return rows;
}
