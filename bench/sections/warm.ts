import { Bench, hrtimeNow } from 'tinybench';
import type { APIGatewayProxyEventV2, APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { createTodo } from '../../test/support/routes';
import { deleteTodo } from '../../test/support/routes';
import { getTodo } from '../../test/support/routes';
import { listTodos } from '../../test/support/routes';
import { updateTodo } from '../../test/support/routes';
import { readLogLevel } from '../../lib/log';
import { memoryStore, resetMemoryStore } from '../../lib/memory-store';
import { context, event } from '../../test/support/event';
import { round, type Row } from '../lib';

/**
 * Up to the largest list of these titles that the size limit (lib/list-size.ts) lets a store
 * hold: about 85,000 records of 20 characters.
 */
export const SIZES = [1_000, 10_000, 80_000] as const;
const LARGEST = SIZES[SIZES.length - 1] ?? 0;
const TITLE = 'twenty characters!!!';
function noop() {
  return undefined;
}

async function fill(size: number): Promise<void> {
  resetMemoryStore();
  const { todos = [] } = await memoryStore.readList();
  for (let i = todos.length; i < size; i++) await memoryStore.create({ title: TITLE });
}

// A context that does not run out during the run: a deadline is not what this measures.
const lambdaContext = context({ timeoutMs: 24 * 60 * 60 * 1000 });
function call(handler: APIGatewayProxyHandlerV2, request: APIGatewayProxyEventV2) {
  return handler(request, lambdaContext, noop);
}

/**
 * Per-invocation cost of each handler called directly with a prebuilt event, on the memory store
 * at each size, measured by tinybench (per-call hrtime samples, warm-up excluded). Logging is
 * off (LOG_LEVEL=silent, set here) so that the figure is the handler's; one info line
 * costs a few µs more, mostly the write to stdout.
 */
export async function warm(): Promise<Row[]> {
  process.env.LOG_LEVEL = 'silent';
  readLogLevel();
  const handlers = {
    get: getTodo(memoryStore),
    put: updateTodo(memoryStore),
    del: deleteTodo(memoryStore),
    post: createTodo(memoryStore),
    list: listTodos(memoryStore),
  };
  const rows: Row[] = [];
  const byIdAt = new Map<string, Map<number, number>>();

  for (const size of SIZES) {
    await fill(size);
    const middle = String(Math.floor(size / 2));
    const getEvent = event({ id: middle });
    const postEvent = event({ method: 'POST', body: { title: TITLE } });
    const listEvent = event();
    const toggles = [true, false].map((completed) => event({ method: 'PUT', id: middle, body: { completed } }));
    let toggle = 0;
    let doomed = event({ method: 'DELETE', id: '0' });
    let nextPostId = 0;
    const bench = new Bench({ time: 400, warmupTime: 100, now: hrtimeNow, throws: true });
    bench
      .add('GET /todos/{id}', () => call(handlers.get, getEvent))
      .add('PUT /todos/{id}', () => call(handlers.put, toggles[toggle++ % 2] ?? event()))
      .add('DELETE /todos/{id}', () => call(handlers.del, doomed), {
        // Untimed: a record to delete, so the store keeps its size.
        beforeEach: async () => {
          doomed = event({ method: 'DELETE', id: String((await memoryStore.create({ title: TITLE })).value.id) });
        },
      })
      .add('POST /todos', () => call(handlers.post, postEvent), {
        // Untimed: delete what the call created (ids come in order), so the store keeps its size.
        beforeAll: async () => {
          const { value: probe } = await memoryStore.create({ title: TITLE });
          await memoryStore.remove(probe.id);
          nextPostId = probe.id + 1;
        },
        afterEach: async () => {
          await memoryStore.remove(nextPostId++);
        },
      });
    bench.add('GET /todos', () => call(handlers.list, listEvent));
    await bench.run();

    for (const task of bench.tasks) {
      const result = task.result;
      if (!('latency' in result)) throw new Error(`${task.name} at ${size}: ${JSON.stringify(result)}`);
      const ns = result.latency.mean * 1e6;
      if (task.name !== 'GET /todos') {
        const series = byIdAt.get(task.name) ?? new Map<number, number>();
        series.set(size, ns);
        byIdAt.set(task.name, series);
      }
      const isById = task.name.includes('{id}');
      rows.push({
        section: 'warm',
        name: `${task.name} @ ${size.toLocaleString('en')}`,
        value: round(ns, 0),
        unit: 'ns/op',
        note: `${Math.round(result.throughput.mean).toLocaleString('en')} ops/s`,
        ...(isById && size === LARGEST ? { budget: '< 2000 ns', met: ns < 2000 } : {}),
      });
    }
  }

  for (const [name, series] of byIdAt) {
    const ratio = (series.get(LARGEST) ?? NaN) / (series.get(1_000) ?? NaN);
    rows.push({
      section: 'warm',
      name: `${name}: ${LARGEST.toLocaleString('en')} / 1,000 records`,
      value: round(ratio, 2),
      unit: 'ratio',
      ...(name.includes('{id}') ? { budget: '≤ 1.5', met: ratio <= 1.5 } : {}),
    });
  }
  resetMemoryStore();
  return rows;
}
