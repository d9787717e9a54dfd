/**
 * `npm run smoke -- <base-url> [--json <file>]`: checks that a running stage answers as
 * openapi.yaml says, whether deployed (`npm run info` prints its URL), `npm start`, or the test
 * fleet's gateway. One line per check as it ends, a summary, and the exit status: 0 when every
 * check passed, 1 when one failed or the stage could not be reached, 130 when interrupted
 * (Ctrl-C), 2 for a wrong command line. `--json <file>` also writes the report there.
 *
 * It creates the records it checks and deletes them at the end, even after a failed check or a
 * Ctrl-C: the request in flight is answered first, so that no record it makes is missed.
 *
 * package.json runs it with `node --import tsx`, not the `tsx` command: that one runs the script
 * in a child process, passes a Ctrl-C on to it, and kills it outright when it does not say within
 * 30 ms that it got the signal, which a busy machine misses; the records would then stay.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CHECKS } from './checks';
import { Contract } from './contract';
import { runSmoke, type Outcome, type Printer } from './run';
import { Stage } from './stage';

const USAGE = 'Usage: npm run smoke -- <base-url> [--json <file>]   e.g. npm run smoke -- http://localhost:3000';

const EXIT_CODES: Record<Outcome, number> = { passed: 0, failed: 1, unreachable: 1, interrupted: 130 };

/** Prints one line on stderr and ends with `code`. */
function stop(line: string, code: number): never {
  process.stderr.write(`${line}\n`);
  process.exit(code);
}

/**
 * The stage's base URL from what the user typed: an http(s) URL, with or without a trailing
 * slash; a path is kept (an API under a prefix), a query or fragment is not one.
 */
export function baseUrl(given: string): string {
  if (!URL.canParse(given))
    throw new Error(`Not a URL: "${given}"; give the stage's address, e.g. http://localhost:3000`);
  const url = new URL(given);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`Not an http:// or https:// URL: "${given}"`);
  }
  if (url.search !== '' || url.hash !== '') throw new Error(`A base URL has no query or fragment: "${given}"`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function commandLine(argv: string[]): { url: string; jsonFile: string | undefined } {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: 'string' } } });
  } catch (error) {
    stop(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`, 2);
  }
  const [given, ...more] = parsed.positionals;
  if (given === undefined || more.length > 0) stop(USAGE, 2);
  try {
    return { url: baseUrl(given), jsonFile: parsed.values.json };
  } catch (error) {
    stop(error instanceof Error ? error.message : String(error), 2);
  }
}

async function main(): Promise<void> {
  const { url, jsonFile } = commandLine(process.argv.slice(2));
  const contract = new Contract();
  const stage = new Stage(url, contract, randomBytes(4).toString('hex'));
  const print: Printer = {
    line: (text) => process.stdout.write(`${text}\n`),
    problem: (text) => process.stderr.write(`${text}\n`),
  };
  // Every Ctrl-C asks for the same: npm and the shell may pass one press on to this process a
  // second time, so a second signal cannot mean "stop now, leave the records".
  function interrupt() {
    if (stage.interrupted) return;
    stage.interrupt();
    print.problem('Interrupted: deleting the records this run created, then stopping');
  }
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  const report = await runSmoke(stage, contract, CHECKS, print);
  if (jsonFile !== undefined) writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  process.exit(EXIT_CODES[report.result]);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    stop(error instanceof Error ? error.message : String(error), 1);
  });
}
