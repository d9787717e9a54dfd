import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { event } from '../../harness/event';
import { functionCode, servicePackage } from '../../harness/package';
import { PROJECT_ROOT } from '../../harness/project';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  ensureTable,
  localClient,
  startDynamoDbLocal,
} from '../../scripts/dynamodb-local-process';
import { median, round, type Row } from '../lib';

const PROCESSES = 15;
const TABLE = 'cold-start';

/**
 * Run in a fresh Node process: load the module and run its first invocation (the floor: one
 * GetItem), as a Lambda cold start does after the runtime is up. Prints milliseconds.
 */
const CHILD = `
const { performance } = require('node:perf_hooks');
const [file, eventJson] = process.argv.slice(2);
const started = performance.now();
const { handler } = require(file);
Promise.resolve(handler(JSON.parse(eventJson), { awsRequestId: 'cold', getRemainingTimeInMillis: () => 10000 }))
  .then((response) => {
    if (response.statusCode !== 200) throw new Error(JSON.stringify(response));
    process.stderr.write(String(performance.now() - started));
  });
`;

/** The floor: a handler that makes one SDK client and one strongly consistent GetItem. */
const FLOOR = `
const { DynamoDBClient, GetItemCommand } = require('@aws-sdk/client-dynamodb');
exports.handler = async () => {
  const client = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
  await client.send(new GetItemCommand({
    TableName: process.env.TODOS_TABLE,
    Key: { pk: { S: 'TODO' }, id: { N: '1' } },
    ConsistentRead: true,
  }));
  return { statusCode: 200 };
};
`;

interface Subject {
  name: string;
  file: string;
}

/**
 * Load plus first answer of a DynamoDB-store function (getTodo, on a seeded table) in a fresh
 * process, against DynamoDB Local, with the AWS SDK bundled into the function (as shipped) and
 * with the SDK left out and required from node_modules (as the Lambda runtime's copy would be);
 * beside a floor of one SDK client making one GetItem, in the same two forms. Medians of
 * PROCESSES processes each, the subjects taking turns.
 */
export async function dynamodbColdStart(): Promise<Row[]> {
  const dynamodb = await startDynamoDbLocal();
  const dir = mkdtempSync(join(tmpdir(), 'todo-dynamodb-cold-'));
  try {
    await ensureTable(localClient(dynamodb.endpoint), TABLE);
    const packages = {
      bundled: await servicePackage(['store=dynamodb', 'sdk=bundled']),
      runtime: await servicePackage(['store=dynamodb', 'sdk=runtime']),
    };
    const child = join(dir, 'child.js');
    writeFileSync(child, CHILD);
    const floorSource = join(dir, 'floor-source.js');
    writeFileSync(floorSource, FLOOR);
    // Bundled as serverless.yml bundles (the SDK's ES modules, so unused code is dropped), and
    // from its CommonJS files, as esbuild does by default, to show what that choice is worth.
    for (const [variant, mainFields] of [
      ['bundled', ['module', 'main']],
      ['bundled-cjs', ['main']],
    ] as const) {
      await build({
        entryPoints: [floorSource],
        bundle: true,
        minify: true,
        platform: 'node',
        target: 'node22',
        mainFields: [...mainFields],
        nodePaths: [join(PROJECT_ROOT, 'node_modules')],
        outfile: join(dir, `floor-${variant}.js`),
      });
    }
    const subjects: Subject[] = [
      { name: 'floor: one GetItem, SDK from node_modules', file: floorSource },
      { name: 'floor: one GetItem, SDK bundled', file: join(dir, 'floor-bundled.js') },
      { name: 'floor: one GetItem, SDK bundled from its CommonJS files', file: join(dir, 'floor-bundled-cjs.js') },
    ];
    for (const [sdk, packaged] of Object.entries(packages)) {
      const file = join(dir, `getTodo-${sdk}.js`);
      writeFileSync(file, functionCode(packaged, 'getTodo'));
      subjects.push({
        name: sdk === 'bundled' ? 'getTodo, SDK bundled (shipped)' : 'getTodo, SDK from node_modules (runtime copy)',
        file,
      });
    }
    const env = {
      ...process.env,
      // As on Lambda, where the runtime's SDK is on NODE_PATH.
      NODE_PATH: join(PROJECT_ROOT, 'node_modules'),
      DYNAMODB_ENDPOINT: dynamodb.endpoint,
      TODOS_TABLE: TABLE,
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      // Lambda runs Node 22, where the SDK has no notice to print.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      LOG_LEVEL: 'info',
    };
    const first = JSON.stringify(event({ id: '1' }));
    // One untimed run each: seeds the table, and warms DynamoDB Local and the disk cache.
    for (const { file } of subjects) timeFirstAnswer(child, file, first, env);
    const times = subjects.map((): number[] => []);
    for (let round = 0; round < PROCESSES; round++) {
      subjects.forEach(({ file }, i) => times[i]?.push(timeFirstAnswer(child, file, first, env)));
    }
    const medians = times.map(median);
    const rows: Row[] = subjects.map(({ name }, i) => ({
      section: 'dynamodbColdStart',
      name,
      value: round(medians[i] ?? NaN, 1),
      unit: 'ms',
      note: `median of ${PROCESSES} processes; runs ${(times[i] ?? []).map((t) => Math.round(t)).join(', ')}`,
    }));
    const [floorRuntime = NaN, floorBundled = NaN, floorCjs = NaN, bundled = NaN, runtime = NaN] = medians;
    rows.push(
      {
        section: 'dynamodbColdStart',
        name: 'floor: bundled / node_modules',
        value: round(floorBundled / floorRuntime, 2),
        unit: 'ratio',
      },
      {
        section: 'dynamodbColdStart',
        name: 'floor: bundled from CommonJS / node_modules',
        value: round(floorCjs / floorRuntime, 2),
        unit: 'ratio',
      },
      {
        section: 'dynamodbColdStart',
        name: 'getTodo: bundled / node_modules',
        value: round(bundled / runtime, 2),
        unit: 'ratio',
      },
      {
        section: 'dynamodbColdStart',
        name: 'getTodo (bundled) over its floor',
        value: round(bundled - floorBundled, 1),
        unit: 'ms',
        note: 'our code, the seed check (a second GetItem) and logging',
      },
    );
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await dynamodb.close();
  }
}

function timeFirstAnswer(child: string, file: string, firstEvent: string, env: NodeJS.ProcessEnv): number {
  const run = spawnSync(process.execPath, [child, file, firstEvent], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const output = run.stderr.toString();
  if (run.status !== 0 || Number.isNaN(Number(output))) throw new Error(`${file}: ${output}`);
  return Number(output);
}
