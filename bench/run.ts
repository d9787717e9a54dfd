/**
 * `npm run bench [-- section ...] [--save] [--baseline <git ref>]`: every default section, or the ones named, each printed
 * as a table and written to bench/latest.json (ignored by git) as soon as it finishes, so a
 * section that fails later loses nothing. `--save` also writes them into bench/results.json, the
 * committed figures that README.md and bench/README.md quote. No timing is asserted anywhere in
 * `npm test`; the budgets are checked here. A missed one is marked NO; one measured with its noise
 * (bench/budget.ts: what ships) also makes the run exit 1. bench/README.md says what each section measures.
 */
import '../scripts/quiet-sdk';
import { LATEST_PATH, SNAPSHOT_PATH, recordSection, thisMachine, type BenchOptions, type Row } from './lib';

type Section = (options: BenchOptions) => Promise<Row[]> | Row[];

/** The sections that measure the service, run by default. */
const SECTIONS: Record<string, () => Promise<Section>> = {
  bundle: async () => (await import('./sections/bundle')).bundle,
  coldInit: async () => (await import('./sections/cold-init')).coldInit,
  warm: async () => (await import('./sections/warm')).warm,
  memory: async () => (await import('./sections/memory')).memory,
  startup: async () => (await import('./sections/startup')).startup,
  reload: async () => (await import('./sections/reload')).reload,
  dynamodbColdStart: async () => (await import('./sections/dynamodb-cold-start')).dynamodbColdStart,
  dynamodbPressure: async () => (await import('./sections/dynamodb-pressure')).dynamodbPressure,
  fleet: async () => (await import('./sections/fleet')).fleet,
  fleetList: async () => (await import('./sections/fleet')).fleetList,
  batching: async () => (await import('./sections/batching')).batching,
  exactlyOnce: async () => (await import('./sections/exactly-once')).exactlyOnce,
};

/** Sections run only when named: the emulator rather than the service, or long runs. */
const OPTIONAL_SECTIONS: Record<string, () => Promise<Section>> = {
  emulator: async () => (await import('./sections/emulator')).emulator,
  // `npm run load` for both stores (2 minutes): the figures of the README's Limits.
  load: async () => (await import('./sections/load')).load,
  // `npm ci` of each tree into an empty folder: what `npm install` costs a new user.
  install: async () => (await import('./sections/install')).install,
  // The scale model (docs/scale.md): the store in simulated time at AWS's scale, a few minutes.
  scale: async () => (await import('./sections/scale')).scale,
  // The scale model against the fleet at the points this machine can run (1–4 containers, 25 POSTs/s).
  scaleCheck: async () => (await import('./sections/scale-check')).scaleCheck,
};

function printTable(rows: Row[]): void {
  console.table(
    rows.map(({ name: figure, value, unit, budget, met, note }) => ({
      figure,
      value,
      unit,
      budget: budget ?? '',
      met: met === undefined ? '' : met ? 'yes' : 'NO',
      note: note ?? '',
    })),
  );
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const save = args.includes('--save');
  const baselineAt = args.indexOf('--baseline');
  const baseline = baselineAt >= 0 ? args[baselineAt + 1] : undefined;
  if (baselineAt >= 0 && baseline === undefined) throw new Error('--baseline needs a git revision');
  const options: BenchOptions = baseline === undefined ? {} : { baseline };
  const wanted = args.filter((arg, i) => !arg.startsWith('--') && (baselineAt < 0 || i !== baselineAt + 1));
  const known = { ...SECTIONS, ...OPTIONAL_SECTIONS };
  const unknown = wanted.filter((name) => !(name in known));
  if (unknown.length > 0) {
    throw new Error(
      `unknown sections: ${unknown.join(', ')}; default: ${Object.keys(SECTIONS).join(', ')}; ` +
        `optional: ${Object.keys(OPTIONAL_SECTIONS).join(', ')}`,
    );
  }
  const names = wanted.length > 0 ? wanted : Object.keys(SECTIONS);
  const machine = thisMachine();
  console.log(`bench on ${machine.cores} × ${machine.cpus}, ${machine.memoryGiB} GiB, Node ${machine.node}`);
  const failed: string[] = [];
  const missed: Row[] = [];
  for (const name of names) {
    const started = performance.now();
    try {
      const section = await known[name]?.();
      if (section === undefined) continue;
      const rows = await section(options);
      console.log(`\n${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
      printTable(rows);
      recordSection(LATEST_PATH, name, rows, machine);
      missed.push(...rows.filter((row) => row.gate === true && row.met === false));
      if (save) recordSection(SNAPSHOT_PATH, name, rows, machine);
    } catch (error) {
      failed.push(name);
      console.error(`\n${name} FAILED after ${((performance.now() - started) / 1000).toFixed(1)} s:`, error);
    }
  }
  const kept = names.filter((name) => !failed.includes(name));
  console.log(
    `\nwritten to bench/latest.json${save ? ' and bench/results.json' : ''}: ${kept.join(', ') || 'nothing'}`,
  );
  if (failed.length > 0) {
    console.error(`failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
  if (missed.length > 0) {
    const over = missed.map(
      (row) => `${row.section}: ${row.name} ${row.value} ${row.unit}, budget ${row.budget ?? ''}`,
    );
    console.error(`over budget by more than the noise:\n  ${over.join('\n  ')}`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
