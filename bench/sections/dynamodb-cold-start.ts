import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { event, type EventOptions } from '../../test/support/event';
import { lambdaNode } from '../../harness/lambda-node';
import { functionCode } from '../../harness/package';
import { PROJECT_ROOT } from '../../harness/project';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  ensureTable,
  localClient,
  startDynamoDbLocal,
} from '../../test/support/dynamodb-local-process';
import { median, round, type BenchOptions, type Row } from '../lib';
import { packagedAt, treesFor } from '../trees';

const PROCESSES = 15;
const TABLE = 'cold-start';

/**
 * Run in a fresh Node process: load the module and run its first invocation, as a Lambda cold
 * start does once the runtime is up. Prints milliseconds from the require to the answer.
 */
const CHILD = `
const { performance } = require('node:perf_hooks');
const [file, eventJson] = process.argv.slice(2);
const started = performance.now();
const { handler } = require(file);
Promise.resolve(handler(JSON.parse(eventJson), { awsRequestId: 'cold', getRemainingTimeInMillis: () => 10000 }))
  .then((response) => {
    if (response.statusCode >= 500) throw new Error(JSON.stringify(response));
    process.stderr.write(String(performance.now() - started));
  });
`;

/**
 * A floor: a handler that makes one DynamoDB client and one strongly consistent GetItem, and nothing
 * else. Beside the AWS SDK and the store's own client, aws4fetch (a SigV4 signer over fetch), one of
 * the two light clients issue 27 named, with util-dynamodb's marshalling as the store's client has.
 * The other, aws-lite, was measured in commit c73e5cc (docs/performance.md) and then removed: its
 * client refuses Node 20, so installing it warned on every `npm install` here.
 */
const FLOORS = {
  'the AWS SDK': `
const { DynamoDBClient, GetItemCommand } = require('@aws-sdk/client-dynamodb');
exports.handler = async () => {
  const client = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
  await client.send(new GetItemCommand({ TableName: process.env.TODOS_TABLE, Key: { pk: { S: 'TODO' }, id: { N: '1' } }, ConsistentRead: true }));
  return { statusCode: 200 };
};
`,
  'aws4fetch and util-dynamodb': `
const { AwsClient } = require('aws4fetch');
const { marshall, unmarshall } = require('@aws-sdk/util-dynamodb');
exports.handler = async () => {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_REGION: region } = process.env;
  const client = new AwsClient({ accessKeyId, secretAccessKey, region, service: 'dynamodb' });
  const answer = await client.fetch(process.env.DYNAMODB_ENDPOINT, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.GetItem' },
    body: JSON.stringify({ TableName: process.env.TODOS_TABLE, Key: marshall({ pk: 'TODO', id: 1 }), ConsistentRead: true }),
  });
  if (!answer.ok) throw new Error(await answer.text());
  const { Item } = await answer.json();
  if (Item) unmarshall(Item);
  return { statusCode: 200 };
};
`,
  'the store’s client (lib/dynamodb/client.ts)': `
const { dynamoDb } = require(${JSON.stringify(join(PROJECT_ROOT, 'lib/dynamodb/client.ts'))});
exports.handler = async () => {
  const client = dynamoDb({ endpoint: process.env.DYNAMODB_ENDPOINT });
  await client.getItem({ TableName: process.env.TODOS_TABLE, Key: { pk: 'TODO', id: 1 }, ConsistentRead: true }, new AbortController().signal);
  return { statusCode: 200 };
};
`,
};

/** Each shipped function, and the request its first invocation answers. */
const FUNCTIONS: Record<string, EventOptions> = {
  getTodo: { id: '1' },
  listTodos: {},
  createTodo: { method: 'POST', body: { title: 'cold' } },
  updateTodo: { method: 'PUT', id: '1', body: { title: 'cold' } },
  deleteTodo: { method: 'DELETE', id: '2' },
};

interface Subject {
  readonly name: string;
  readonly file: string;
  readonly event: string;
}

/**
 * Load plus first answer of each DynamoDB-store function, as `serverless package` ships it, in a
 * fresh process on Lambda's Node (22), against DynamoDB Local; and the whole process, start to
 * exit. With `--baseline <ref>`, that revision's functions too, in the same run; beside the
 * floors, one GetItem with each client of FLOORS. Medians of PROCESSES processes each, the
 * subjects taking turns round after round; each row says how many bytes of code it loaded.
 */
export async function dynamodbColdStart(options: BenchOptions): Promise<Row[]> {
  const dynamodb = await startDynamoDbLocal();
  const node = await lambdaNode();
  const dir = mkdtempSync(join(tmpdir(), 'todo-dynamodb-cold-'));
  try {
    await ensureTable(localClient(dynamodb.endpoint), TABLE);
    const subjects = [...(await floors(dir)), ...(await shippedFunctions(dir, options))];
    const child = join(dir, 'child.js');
    writeFileSync(child, CHILD);
    const env = {
      ...process.env,
      NODE_PATH: join(PROJECT_ROOT, 'node_modules'),
      DYNAMODB_ENDPOINT: dynamodb.endpoint,
      TODOS_TABLE: TABLE,
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      LOG_LEVEL: 'info',
    };
    // One untimed run each: seeds the table, and warms DynamoDB Local and the disk cache.
    for (const subject of subjects) timeColdStart(node.path, child, subject, env);
    const times = subjects.map(() => ({ firstAnswer: [] as number[], process: [] as number[] }));
    for (let round = 0; round < PROCESSES; round++) {
      subjects.forEach((subject, i) => {
        const measured = timeColdStart(node.path, child, subject, env);
        times[i]?.firstAnswer.push(measured.firstAnswer);
        times[i]?.process.push(measured.process);
      });
    }
    return rowsOf(subjects, times, node.version);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await dynamodb.close();
  }
}

/** The floors, each bundled as serverless.yml bundles (minified, ES modules where a package has them). */
async function floors(dir: string): Promise<Subject[]> {
  const subjects: Subject[] = [];
  for (const [client, source] of Object.entries(FLOORS)) {
    const entry = join(dir, `floor-${subjects.length}.js`);
    writeFileSync(entry, source);
    const file = join(dir, `floor-${subjects.length}.bundle.js`);
    await build({
      entryPoints: [entry],
      bundle: true,
      minify: true,
      platform: 'node',
      target: 'node22',
      mainFields: ['module', 'main'],
      nodePaths: [join(PROJECT_ROOT, 'node_modules')],
      external: ['@aws-sdk/credential-provider-node'],
      outfile: file,
    });
    subjects.push({ name: `floor: one GetItem with ${client}`, file, event: '{}' });
  }
  return subjects;
}

/** Each shipped function of each tree (the baseline first). */
async function shippedFunctions(dir: string, options: BenchOptions): Promise<Subject[]> {
  const subjects: Subject[] = [];
  for (const tree of treesFor(options.baseline)) {
    const packaged = await packagedAt(tree, ['store=dynamodb']);
    for (const [name, request] of Object.entries(FUNCTIONS)) {
      const file = join(dir, `${name}-${subjects.length}.js`);
      writeFileSync(file, functionCode(packaged, name));
      subjects.push({ name: `${tree.name}: ${name}`, file, event: JSON.stringify(event(request)) });
    }
  }
  return subjects;
}

function rowsOf(
  subjects: readonly Subject[],
  times: readonly { firstAnswer: number[]; process: number[] }[],
  nodeVersion: string,
): Row[] {
  const medians = times.map(({ firstAnswer, process }) => ({
    firstAnswer: median(firstAnswer),
    process: median(process),
  }));
  const rows: Row[] = subjects.map(({ name, file }, i) => ({
    section: 'dynamodbColdStart',
    name,
    value: round(medians[i]?.firstAnswer ?? NaN, 1),
    unit: 'ms',
    note: `load and first answer; the whole process ${round(medians[i]?.process ?? NaN, 0)} ms; ${statSync(file).size} bytes of code; median of ${PROCESSES}, Node ${nodeVersion}`,
  }));
  // This tree's functions against the baseline's, function by function.
  const half = (subjects.length - Object.keys(FLOORS).length) / 2;
  if (half === Object.keys(FUNCTIONS).length) {
    Object.keys(FUNCTIONS).forEach((name, i) => {
      const before = medians[Object.keys(FLOORS).length + i];
      const after = medians[Object.keys(FLOORS).length + half + i];
      if (before === undefined || after === undefined) return;
      const ratio = after.firstAnswer / before.firstAnswer;
      rows.push({
        section: 'dynamodbColdStart',
        name: `${name}: this tree / baseline`,
        value: round(ratio, 2),
        unit: 'ratio',
        budget: '≤ 0.7',
        met: ratio <= 0.7,
        note: `the whole process: ${round(after.process / before.process, 2)}`,
      });
    });
  }
  return rows;
}

function timeColdStart(
  node: string,
  child: string,
  subject: Subject,
  env: NodeJS.ProcessEnv,
): { firstAnswer: number; process: number } {
  const started = performance.now();
  const run = spawnSync(node, [child, subject.file, subject.event], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const processMs = performance.now() - started;
  const output = run.stderr.toString();
  if (run.status !== 0 || Number.isNaN(Number(output))) throw new Error(`${subject.name}: ${output}`);
  return { firstAnswer: Number(output), process: processMs };
}
