/**
 * `npm run bench [-- section ...] [--save] [--baseline <git ref>]`: every default section, or the ones named, each printed
 * as a table and written to bench/latest.json (ignored by git) as soon as it finishes, so a
 * section that fails later loses nothing. `--save` also writes them into bench/results.json, the
 * committed figures that README.md and bench/README.md quote. No timing is asserted anywhere in
 * `npm test`; the budgets are checked here. A missed one is marked NO; one measured with its noise
 * (bench/budget.ts: what ships) also makes the run exit 1. bench/README.md says what each section measures.
 * A wrong command line (an unknown section or option) stops it with one line and exit 2 before any
 * section runs; `--help` prints what it takes.
 */
import '../scripts/quiet-sdk';
import { oneOf, parseCommandLine, runTool } from '../scripts/command-line';
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
  listReads: async () => (await import('./sections/list-reads')).listReads,
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
  // npm install, the quick check and npm test in a fresh clone, idle and beside three busy loops: about 45 minutes.
  suite: async () => (await import('./sections/suite')).suite,
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

const TOOL = 'npm run bench';

const HELP = `Usage: ${TOOL} [-- <section> ...] [--save] [--baseline <git revision>]

Runs every default section, or the ones named, each printed as a table and written to
bench/latest.json as soon as it finishes. bench/README.md says what each section measures.

  <section>                   default: ${Object.keys(SECTIONS).join(', ')}
                              optional, run only when named: ${Object.keys(OPTIONAL_SECTIONS).join(', ')}
  --save                      also write the figures into bench/results.json (committed)
  --baseline <git revision>   sections that compare revisions also measure this one, in the same run
  -h, --help                  print this text

Exit status: 0 every section ran and met its gated budgets; 1 a section failed or a budget on what
ships was missed by more than its noise; 2 a wrong command line.
`;

const OPTIONS = { save: { type: 'boolean' }, baseline: { type: 'string' } } as const;

async function main(): Promise<number> {
  const parsed = parseCommandLine(process.argv.slice(2), OPTIONS, TOOL);
  if (parsed === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const save = parsed.values.save === true;
  const { baseline } = parsed.values;
  const options: BenchOptions = baseline === undefined ? {} : { baseline };
  const known = { ...SECTIONS, ...OPTIONAL_SECTIONS };
  // Every name is checked before the first section starts: a typo found after minutes of others would cost them.
  const wanted = parsed.positionals.map((name) => oneOf(name, Object.keys(known), 'section', TOOL));
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
  }
  if (missed.length > 0) {
    const over = missed.map(
      (row) => `${row.section}: ${row.name} ${row.value} ${row.unit}, budget ${row.budget ?? ''}`,
    );
    console.error(`over budget by more than the noise:\n  ${over.join('\n  ')}`);
  }
  return failed.length > 0 || missed.length > 0 ? 1 : 0;
}

runTool(main);
