import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOffline } from '../../harness/offline';
import { scratchCopy } from '../../harness/scratch';
import { sleep } from '../../harness/wait';
import { median, round, type Row } from '../lib';

const EDITS = 5;

/** `npm run dev`: from saving an edit to lib/ to the first response that shows it, median of 5. */
export async function reload(): Promise<Row[]> {
  const scratch = scratchCopy();
  const dev = await startOffline({ script: 'dev', cwd: scratch.dir, env: { LOG_LEVEL: 'silent' } });
  try {
    const file = join(scratch.dir, 'lib/http.ts');
    const original = readFileSync(file, 'utf8');
    const times: number[] = [];
    for (let edit = 1; edit <= EDITS; edit++) {
      const marker = `Todo not found (edit ${edit})`;
      const saved = performance.now();
      writeFileSync(file, original.replace("'Todo not found'", `'${marker}'`));
      for (;;) {
        const body = await (await fetch(`${dev.url}/todos/999`)).text();
        if (body.includes(marker)) break;
        if (performance.now() - saved > 20_000) throw new Error(`edit ${edit} was not served within 20 s`);
        await sleep(5);
      }
      times.push(performance.now() - saved);
      await sleep(300);
    }
    const ms = median(times);
    return [
      {
        section: 'reload',
        name: 'npm run dev: saved edit → served',
        value: round(ms, 0),
        unit: 'ms',
        budget: '≈ 2000 ms',
        met: ms <= 2000,
        note: `edits: ${times.map((t) => Math.round(t)).join(', ')}`,
      },
    ];
  } finally {
    await dev.stop();
    scratch.remove();
  }
}
