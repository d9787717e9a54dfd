import { spawn, type ChildProcess } from 'node:child_process';
import { startFaultProxy } from '../../harness/fault-proxy';
import { startOffline } from '../../harness/offline';
import { startDynamoDbLocal } from '../../test/support/dynamodb-local-process';
import type { BenchOptions, Row } from '../lib';
import { treesFor } from '../trees';

const BURST = 500;
const FROZEN_CONCURRENT = 50;

/** Two processes that keep both cores busy, as other jobs on a shared machine do. */
function busyLoops(): ChildProcess[] {
  return [0, 1].map(() => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
}

type Kind = 'our JSON 503' | "emulator's timeout (HTTP 200, errorMessage)" | 'other';

function kindOf(status: number, text: string): Kind {
  if (status === 503 && text === '{"error":"Service temporarily unavailable, please retry"}') return 'our JSON 503';
  if (status === 200 && text.includes('errorMessage')) return "emulator's timeout (HTTP 200, errorMessage)";
  return 'other';
}

function tally(kinds: string[]): string {
  return Object.entries(
    kinds.reduce<Record<string, number>>((counts, kind) => ({ ...counts, [kind]: (counts[kind] ?? 0) + 1 }), {}),
  )
    .map(([kind, count]) => `${count} × ${kind}`)
    .join(', ');
}

/**
 * `npm run start:dynamodb` against DynamoDB Local under pressure: a burst of 500 concurrent
 * POSTs (how many 503s, whether the ids are consecutive), and 50 concurrent requests while the
 * store is frozen, on an idle machine and with both cores kept busy (the slowest answer, and what
 * the answers were). With `--baseline <git ref>` the same runs go against that revision too, in
 * the same run, on the same DynamoDB Local.
 */
export async function dynamodbPressure(options: BenchOptions): Promise<Row[]> {
  const trees = treesFor(options.baseline);
  const dynamodb = await startDynamoDbLocal();
  const rows: Row[] = [];
  let table = 0;
  try {
    for (const tree of trees) {
      function env(endpoint: string) {
        return { DYNAMODB_ENDPOINT: endpoint, TODOS_TABLE: `pressure-${++table}`, LOG_LEVEL: 'silent' };
      }

      const server = await startOffline({ script: 'start:dynamodb', cwd: tree.dir, env: env(dynamodb.endpoint) });
      try {
        await fetch(`${server.url}/todos`);
        const answers = await Promise.all(
          Array.from({ length: BURST }, async (_, i) => {
            const response = await fetch(`${server.url}/todos`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ title: `burst ${i}` }),
            });
            const text = await response.text();
            return {
              status: response.status,
              id: response.status === 201 ? (JSON.parse(text) as { id: number }).id : 0,
            };
          }),
        );
        const ids = answers.filter((answer) => answer.status === 201).map((answer) => answer.id);
        const listed = ((await (await fetch(`${server.url}/todos`)).json()) as { id: number }[]).map((todo) => todo.id);
        const highest = Math.max(2, ...listed);
        rows.push({
          section: 'dynamodbPressure',
          name: `${tree.name}: ${BURST} concurrent POSTs, answers not 201`,
          value: answers.filter((answer) => answer.status !== 201).length,
          unit: 'answers',
          note:
            `${tally(answers.map((answer) => String(answer.status)))}; ` +
            `ids ${ids.length > 0 ? `${Math.min(...ids)}–${Math.max(...ids)}` : 'none'}, ` +
            `${highest - 2 - listed.filter((id) => id > 2).length} ids skipped`,
        });
      } finally {
        await server.stop();
      }

      for (const load of ['idle', 'both cores busy'] as const) {
        const network = await startFaultProxy(dynamodb.endpoint);
        const frozen = await startOffline({ script: 'start:dynamodb', cwd: tree.dir, env: env(network.endpoint) });
        const loops = load === 'idle' ? [] : busyLoops();
        try {
          await fetch(`${frozen.url}/todos`);
          network.freeze();
          const answers = await Promise.all(
            Array.from({ length: FROZEN_CONCURRENT }, async () => {
              const started = performance.now();
              const response = await fetch(`${frozen.url}/todos/1`);
              const text = await response.text();
              return { ms: performance.now() - started, kind: kindOf(response.status, text) };
            }),
          );
          rows.push({
            section: 'dynamodbPressure',
            name: `${tree.name}: frozen store, ${FROZEN_CONCURRENT} concurrent requests, ${load}: slowest answer`,
            value: Math.round(Math.max(...answers.map((answer) => answer.ms))),
            unit: 'ms',
            note: tally(answers.map((answer) => answer.kind)),
          });
        } finally {
          for (const loop of loops) loop.kill('SIGKILL');
          await frozen.stop();
          await network.close();
        }
      }
    }
  } finally {
    await dynamodb.close();
  }
  return rows;
}
