/**
 * `npm run dynamodb [-- --port 8000] [--path .dynamodb]`: DynamoDB Local on its own, for
 * `DYNAMODB_ENDPOINT=http://127.0.0.1:8000 npm run start:dynamodb`. With `--path` it keeps its
 * data in that folder, so it outlives restarts of both; without, in memory. It needs Java 17 or
 * newer. Stop it with Ctrl-C. `--help` prints this without starting anything; a wrong command
 * line stops it with one line and exit 2, before Java is looked for.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { noPositionals, numberOption, parseCommandLine, runTool } from './command-line';
import { startDynamoDbLocal } from '../test/support/dynamodb-local-process';

const TOOL = 'npm run dynamodb';

const HELP = `Usage: ${TOOL} [-- --port <port>] [--path <folder>]

Runs DynamoDB Local (it needs Java 17 or newer) until Ctrl-C, for
DYNAMODB_ENDPOINT=http://127.0.0.1:<port> npm run start:dynamodb in another terminal.

  --port <port>     the port to listen on, on every interface (default 8000)
  --path <folder>   keep the data in this folder, created if missing, so that it outlives restarts
                    (default: in memory, gone when it stops)
  -h, --help        print this text

Exit status: 0 stopped by Ctrl-C; 1 it could not start; 2 a wrong command line.
`;

const OPTIONS = { port: { type: 'string', default: '8000' }, path: { type: 'string' } } as const;

/** DynamoDB Local is given the port itself: it cannot be asked for a free one (0). */
const PORT = { min: 1, max: 65_535, whole: true } as const;

async function main(): Promise<number | undefined> {
  const parsed = parseCommandLine(process.argv.slice(2), OPTIONS, TOOL);
  if (parsed === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  noPositionals(parsed.positionals, TOOL);
  const port = numberOption(parsed.values.port, 'port', PORT, TOOL);
  const { path } = parsed.values;
  if (path !== undefined) mkdirSync(path, { recursive: true });
  const dynamodb = await startDynamoDbLocal({
    port,
    ...(path === undefined ? {} : { dbPath: resolve(path) }),
    progress: (line) => {
      console.log(line);
    },
  });
  console.log(
    `It listens on every interface. Use it with DYNAMODB_ENDPOINT=${dynamodb.endpoint} npm run start:dynamodb; ` +
      'Ctrl-C stops it.',
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void dynamodb.close().then(() => process.exit(0));
    });
  }
  // It runs on until a signal: no status yet.
  return undefined;
}

runTool(main, (error) => {
  console.error(error instanceof Error ? error.message : error);
});
