import { existsSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCommand } from '../../harness/cli';
import { withScratchCopy } from '../../harness/scratch';
import { suggestedPort } from '../support/ports';

/**
 * Launch to exit with the port busy: 1.7 s idle (2.5-3 s through npm), 4.3-5.2 s with the load
 * average at 15 on 2 cores. Generous for a busy machine; building and starting the server, which
 * the check comes before, would take longer.
 */
const STOP_WITHIN_MS = 20_000;

/**
 * `npm start` on a port something already listens on (issue 40): the project's line that says so,
 * alone and before anything else, where the framework printed its footer first; and before
 * anything is built.
 */
describe('npm start on a port in use', () => {
  let busy: Server;
  let port: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, 'localhost', resolve));
    port = (busy.address() as AddressInfo).port;
  });
  afterAll(() => {
    busy.close();
  });

  it(
    'stops with the project’s one line, first and alone, exit 1, having built nothing',
    async () => {
      await withScratchCopy(async (dir) => {
        const launched = Date.now();
        const result = await runCommand('npm', ['run', '--silent', 'start'], { cwd: dir, env: { PORT: String(port) } });
        const elapsed = Date.now() - launched;
        const suggested = suggestedPort(result.stderr, 'PORT', port);
        expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
          code: 1,
          stdout: '',
          stderr:
            `Port ${port} (PORT) is in use, so the API cannot listen there: stop what runs on it, ` +
            `or choose another, e.g. PORT=${suggested}\n`,
        });
        // Stopped before esbuild made its work folder.
        expect(existsSync(join(dir, '.esbuild'))).toBe(false);
        expect(elapsed).toBeLessThan(STOP_WITHIN_MS);
      });
    },
    2 * STOP_WITHIN_MS,
  );
});
