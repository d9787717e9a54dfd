/**
 * `npm run bench [-- section ...]`: every section, or the ones named, printed as a table and
 * merged into bench/results.json. Sections: bundle, coldInit, warm, memory, startup, emulator,
 * reload. No timing is asserted anywhere in `npm test`; the budgets are checked here, and a
 * missed one is marked, not failed. bench/README.md says what each measures.
 */
import { cpus, totalmem } from 'node:os';
import { saveResults, type Row } from './lib';

// Before any project module loads: handlers read LOG_LEVEL once, when they load.
process.env.LOG_LEVEL = 'silent';

type Section = () => Promise<Row[]> | Row[];

const SECTIONS: Record<string, () => Promise<Section>> = {
  bundle: async () => (await import('./sections/bundle')).bundle,
  coldInit: async () => (await import('./sections/cold-init')).coldInit,
  warm: async () => (await import('./sections/warm')).warm,
  memory: async () => (await import('./sections/memory')).memory,
  startup: async () => (await import('./sections/startup')).startup,
  emulator: async () => (await import('./sections/emulator')).emulator,
  reload: async () => (await import('./sections/reload')).reload,
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !(name in SECTIONS));
  if (unknown.length > 0)
    throw new Error(`unknown sections: ${unknown.join(', ')}; known: ${Object.keys(SECTIONS).join(', ')}`);
  const names = wanted.length > 0 ? wanted : Object.keys(SECTIONS);
  const machine = {
    cpus: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
  console.log(`bench on ${machine.cores} × ${machine.cpus}, ${machine.memoryGiB} GiB, Node ${machine.node}`);
  const results: Record<string, Row[]> = {};
  for (const name of names) {
    const started = performance.now();
    const section = await SECTIONS[name]?.();
    if (section === undefined) continue;
    const rows = await section();
    results[name] = rows;
    console.log(`\n${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
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
  saveResults(results, machine);
  console.log('\nwritten: bench/results.json');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
