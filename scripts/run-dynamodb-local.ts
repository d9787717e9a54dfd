/**
 * `npm run dynamodb [-- --port 8000] [-- --path .dynamodb]`: DynamoDB Local on its own, for
 * `DYNAMODB_ENDPOINT=http://127.0.0.1:8000 npm run start:dynamodb`. With `--path` it keeps its
 * data in that folder, so it outlives restarts of both; without, in memory. It needs Java 17 or
 * newer. Stop it with Ctrl-C.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { startDynamoDbLocal } from './dynamodb-local-process';

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1] : undefined;
}

async function main(): Promise<void> {
  const port = Number(option('port') ?? '8000');
  const path = option('path');
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
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
