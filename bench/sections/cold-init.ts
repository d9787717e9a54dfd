import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { event } from '../../harness/event';
import { functionZips, servicePackage } from '../../harness/package';
import { median, round, type Row } from '../lib';

const PROCESSES = 40;

/** Which event each function's first invocation gets. */
const FIRST_EVENTS = {
  listTodos: event(),
  getTodo: event({ id: '1' }),
  createTodo: event({ method: 'POST', body: { title: 'cold' } }),
  updateTodo: event({ method: 'PUT', id: '1', body: { completed: true } }),
  deleteTodo: event({ method: 'DELETE', id: '1' }),
};

/**
 * Run in a fresh Node process: load the module and run its first invocation, as a Lambda cold
 * start does after the runtime is up. Prints milliseconds.
 */
const CHILD = `
const { performance } = require('node:perf_hooks');
const [file, eventJson] = process.argv.slice(2);
const event = JSON.parse(eventJson);
const context = { awsRequestId: 'cold', getRemainingTimeInMillis: () => 10000 };
const started = performance.now();
const { handler } = require(file);
Promise.resolve(handler(event, context, () => {})).then(() => {
  process.stderr.write(String(performance.now() - started));
});
`;

function timeFirstInvocation(child: string, file: string, firstEvent: unknown): number {
  const run = spawnSync(process.execPath, [child, file, JSON.stringify(firstEvent)], {
    // As deployed: info logging, to stdout (discarded here, shipped to CloudWatch there).
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const output = run.stderr.toString();
  if (run.status !== 0 || Number.isNaN(Number(output))) throw new Error(`${file}: ${output}`);
  return Number(output);
}

/**
 * Median load-plus-first-invocation time of each packaged bundle, beside an empty handler's.
 * The bundles take turns, round after round, so that drift on a noisy machine hits all alike.
 */
export async function coldInit(): Promise<Row[]> {
  const packaged = await servicePackage(['store=memory']);
  const dir = mkdtempSync(join(tmpdir(), 'todo-cold-'));
  try {
    // A script file, not `node -e`: under -e the first require() alone costs about 2 ms.
    const child = join(dir, 'child.js');
    writeFileSync(child, CHILD);
    const empty = join(dir, 'empty.js');
    writeFileSync(empty, 'exports.handler = async () => ({ statusCode: 200, body: "" });\n');
    const subjects = [{ name: 'empty handler (floor)', file: empty, firstEvent: FIRST_EVENTS.listTodos as unknown }];
    for (const [fn, files] of functionZips(packaged)) {
      const file = join(dir, `${fn}.js`);
      writeFileSync(file, files[`functions/${fn}.js`] ?? new Uint8Array());
      subjects.push({ name: fn, file, firstEvent: FIRST_EVENTS[fn as keyof typeof FIRST_EVENTS] });
    }
    const times = subjects.map((): number[] => []);
    for (let round = 0; round < PROCESSES; round++) {
      subjects.forEach(({ file, firstEvent }, i) => times[i]?.push(timeFirstInvocation(child, file, firstEvent)));
    }
    const [floor = NaN, ...medians] = times.map(median);
    const rows: Row[] = [{ section: 'coldInit', name: 'empty handler (floor)', value: round(floor, 3), unit: 'ms' }];
    subjects.slice(1).forEach(({ name }, i) => {
      const ms = medians[i] ?? NaN;
      rows.push({
        section: 'coldInit',
        name,
        value: round(ms, 3),
        unit: 'ms',
        budget: '≤ floor + 1 ms',
        met: ms - floor <= 1,
        note: `floor + ${round(ms - floor, 3)} ms`,
      });
    });
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
