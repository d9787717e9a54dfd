import { readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOffline } from '../../harness/offline';
import { scratchCopy } from '../../harness/scratch';
import { sleep } from '../../harness/wait';
import { median, round, type BenchOptions, type Row } from '../lib';
import { treesFor } from '../trees';

const EDITS = 5;
const RENAMES = 50;
const MESSAGE = "'Todo not found'";

/**
 * `npm run dev`, in a scratch copy of each tree (`--baseline` adds an older one):
 * - from saving an edit to lib/ in place to the first response that shows it, median of 5;
 * - of 50 saves by a temporary file renamed over the old one (vim, sed -i, JetBrains' safe
 *   write), how many the very next request serves.
 */
export async function reload(options: BenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  for (const tree of treesFor(options.baseline)) {
    const scratch = scratchCopy(tree.dir);
    const dev = await startOffline({ script: 'dev', cwd: scratch.dir, env: { LOG_LEVEL: 'silent' } });
    try {
      // The message's home moved between revisions: the file of lib/ that has it.
      const name = readdirSync(join(scratch.dir, 'lib')).find((file) =>
        readFileSync(join(scratch.dir, 'lib', file), 'utf8').includes(MESSAGE),
      );
      if (name === undefined) throw new Error(`no file of lib/ says ${MESSAGE}`);
      const file = join(scratch.dir, 'lib', name);
      const original = readFileSync(file, 'utf8');
      function marked(marker: string) {
        return original.replace(MESSAGE, `'${marker}'`);
      }
      async function served(marker: string) {
        return (await (await fetch(`${dev.url}/todos/999`)).text()).includes(marker);
      }

      const times: number[] = [];
      for (let edit = 1; edit <= EDITS; edit++) {
        const marker = `Todo not found (edit ${edit})`;
        const saved = performance.now();
        writeFileSync(file, marked(marker));
        while (!(await served(marker))) {
          if (performance.now() - saved > 20_000) throw new Error(`edit ${edit} was not served within 20 s`);
          await sleep(5);
        }
        times.push(performance.now() - saved);
        await sleep(300);
      }
      const ms = median(times);
      rows.push({
        section: 'reload',
        name: `${tree.name}: npm run dev: saved edit → served`,
        value: round(ms, 0),
        unit: 'ms',
        budget: '≈ 2000 ms',
        met: ms <= 2000,
        note: `edits: ${times.map((t) => Math.round(t)).join(', ')}`,
      });

      let next = 0;
      for (let save = 1; save <= RENAMES; save++) {
        const marker = `Todo not found (rename ${save})`;
        const temporary = join(scratch.dir, 'lib', `.${name}.swp`);
        writeFileSync(temporary, marked(marker));
        renameSync(temporary, file);
        if (await served(marker)) next++;
      }
      rows.push({
        section: 'reload',
        name: `${tree.name}: npm run dev: saves by rename served by the very next request, of ${RENAMES}`,
        value: next,
        unit: 'saves',
        budget: `${RENAMES}`,
        met: next === RENAMES,
      });
    } finally {
      await dev.stop();
      scratch.remove();
    }
  }
  return rows;
}
