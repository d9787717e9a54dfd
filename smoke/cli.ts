/**
 * `npm run smoke -- <base-url> [--json <file>]`: checks that a running stage answers as
 * openapi.yaml says, whether deployed (`npm run info` prints its URL), `npm start`, or the test
 * fleet's gateway. One line per check as it ends, a summary, and the exit status: 0 when every
 * check passed, 1 when one failed or the stage could not be reached, 130 when interrupted
 * (Ctrl-C), 2 for a wrong command line. `--json <file>` also writes the report there.
 *
 * It creates the records it checks and deletes them at the end, even after a failed check or a
 * Ctrl-C. Ctrl-C gives up the request in flight at once (a create given up may still make its
 * record: the cleanup looks for it by its title, and says so when it is not there yet); a second
 * Ctrl-C gives up the cleanup too, and says which records are left.
 *
 * package.json runs it with `node --import tsx`, not the `tsx` command: that one runs the script
 * in a child process, passes a Ctrl-C on to it, and kills it outright when it does not say within
 * 30 ms that it got the signal, which a busy machine misses; the records would then stay.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { CommandLineError, parseCommandLine } from '../scripts/command-line';
import { CHECKS } from './checks';
import { Contract } from './contract';
import { MisdirectedUrl, runSmoke, type Outcome, type Printer } from './run';
import { CHECKS_WITHIN_MS, CLEANUP_WITHIN_MS, REQUEST_WITHIN_MS, Stage } from './stage';

const USAGE = 'Usage: npm run smoke -- <base-url> [--json <file>]   e.g. npm run smoke -- http://localhost:3000';

/** What `--help` prints. */
export const HELP = `${USAGE}

Checks that a running stage answers as openapi.yaml says: a line per check as it ends (pass, or
FAIL and what broke), then a summary. It works only on records it creates, titled
"smoke <run id> …", and deletes them at the end.

  <base-url>     the stage's address, without /todos: http://localhost:3000 for npm start, or
                 the HttpApiUrl that npm run info prints for a deployed stage
  --json <file>  also write the report there: each check's result and error, the statuses it
                 cannot cause without harming the stage, the records it created, deleted and left
  -h, --help     print this text

Each answer may take ${REQUEST_WITHIN_MS / 1000} s, the checks ${CHECKS_WITHIN_MS / 1000} s, the cleanup ${CLEANUP_WITHIN_MS / 1000} s more. Ctrl-C gives up the
request in flight and deletes the records; a second Ctrl-C stops at once and names those left.

Exit status: 0 every check passed; 1 one failed, or the stage gave no answer; 130 after Ctrl-C;
2 a wrong command line.
`;

/**
 * One press of Ctrl-C may come as two signals: the terminal signals npm and this process
 * together, and npm passes its own on (@npmcli/run-script's signal-manager). Signals within this
 * time of the first are that press; after it, the run says that another stops it at once.
 */
const SAME_PRESS_MS = 1_000;

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
    parsed = parseCommandLine(argv, { json: { type: 'string' } }, 'npm run smoke');
  } catch (error) {
    if (error instanceof CommandLineError) stop(error.message, 2);
    throw error;
  }
  if (parsed === 'help') {
    process.stdout.write(HELP);
    process.exit(0);
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
  let pressedAgainStops = false;
  function interrupt() {
    if (!stage.interrupted) {
      stage.interrupt();
      print.problem('Interrupted: deleting the records this run created, then stopping');
      // Said only when the cleanup is still running by then: the process ends with it.
      setTimeout(() => {
        pressedAgainStops = true;
        print.problem('Still deleting them: Ctrl-C again to stop now and leave them on the stage');
      }, SAME_PRESS_MS).unref();
    } else if (pressedAgainStops) {
      stage.stop();
    }
  }
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  let report;
  try {
    report = await runSmoke(stage, contract, CHECKS, print);
  } catch (error) {
    if (error instanceof MisdirectedUrl) stop(error.message, 2);
    throw error;
  }
  if (jsonFile !== undefined) writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  process.exit(EXIT_CODES[report.result]);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    stop(error instanceof Error ? error.message : String(error), 1);
  });
}
