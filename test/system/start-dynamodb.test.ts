import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { runCommand } from '../../harness/cli';
import { START_WITHIN_MS, startOffline } from '../../harness/offline';
import { freePort } from '../../harness/project';
import { suggestedPort } from '../support/ports';

/**
 * `npm run start:dynamodb` says what it is doing, a line a step, while it takes its seconds to
 * start; says what to run when the DynamoDB it was pointed at is not there; and does not print
 * the AWS SDK's Node-version notice, as the README says.
 */
describe('npm run start:dynamodb', () => {
  it(
    'prints a line a step: Java found, DynamoDB Local up, table ready, server listening; and no SDK notice',
    async () => {
      const server = await startOffline({ script: 'start:dynamodb', env: { DYNAMODB_ENDPOINT: '' } });
      try {
        const output = server.output();
        const steps = [
          /Java found: .*version "\d+/,
          /DynamoDB Local up at http:\/\/127\.0\.0\.1:\d+, data in memory, in [\d.]+ s/,
          /Table "todos" ready/,
          new RegExp(`Server ready: http://localhost:${server.port}`),
        ].map((step) => output.search(step));
        expect(steps.every((at) => at >= 0)).toBe(true);
        expect([...steps].sort((a, b) => a - b)).toEqual(steps);
        expect(output).not.toMatch(/NodeVersionSupportWarning|will require node >=22/);
      } finally {
        await server.stop();
      }
    },
    START_WITHIN_MS,
  );

  /** `npm run start:dynamodb` as npm runs it, without npm's own notices: its exit code and its output's lines. */
  async function startDynamoDbWith(env: NodeJS.ProcessEnv): Promise<{ code: number | null; lines: string[] }> {
    const result = await runCommand(process.execPath, ['--import', 'tsx', 'scripts/start-dynamodb.ts'], {
      env: { TSX_DISABLE_CACHE: '1', ...env },
    });
    return { code: result.code, lines: `${result.stdout}${result.stderr}`.trim().split('\n') };
  }

  /** With a free PORT: the default, 3000, may be in use on the machine, and that is checked first. */
  async function startDynamoDbAt(endpoint: string): Promise<{ code: number | null; lines: string[] }> {
    return startDynamoDbWith({ DYNAMODB_ENDPOINT: endpoint, PORT: String(await freePort()) });
  }

  it(
    'stops in one line on a busy PORT, before it starts DynamoDB Local or creates a table',
    async () => {
      const busy = createServer();
      await new Promise<void>((resolve) => busy.listen(0, 'localhost', resolve));
      const { port } = busy.address() as AddressInfo;
      try {
        const result = await startDynamoDbWith({ PORT: String(port), DYNAMODB_ENDPOINT: '' });
        const suggested = suggestedPort(result.lines[0] ?? '', 'PORT', port);
        expect(result).toEqual({
          code: 1,
          lines: [
            `Port ${port} (PORT) is in use, so the API cannot listen there: stop what runs on it, or choose another, e.g. PORT=${suggested}`,
          ],
        });
      } finally {
        busy.close();
      }
    },
    START_WITHIN_MS,
  );

  it(
    'stops in one line on a LAMBDA_PORT that is PORT, before it starts DynamoDB Local or creates a table',
    async () => {
      const port = await freePort();
      const result = await startDynamoDbWith({ PORT: String(port), LAMBDA_PORT: String(port), DYNAMODB_ENDPOINT: '' });
      const suggested = suggestedPort(result.lines[0] ?? '', 'LAMBDA_PORT', port);
      expect(result).toEqual({
        code: 1,
        lines: [
          `Port ${port} is both PORT and LAMBDA_PORT, but the API and the Lambda invoke endpoint need one each: choose another, e.g. LAMBDA_PORT=${suggested}`,
        ],
      });
    },
    START_WITHIN_MS,
  );

  it(
    'stops in one line saying what to run when nothing answers at DYNAMODB_ENDPOINT',
    async () => {
      const port = await freePort();
      const endpoint = `http://127.0.0.1:${port}`;
      expect(await startDynamoDbAt(endpoint)).toEqual({
        code: 1,
        lines: [
          `DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT)`,
          `Nothing answers at ${endpoint} (DYNAMODB_ENDPOINT): start DynamoDB Local there with \`npm run dynamodb -- --port ${port}\` in another terminal, or unset DYNAMODB_ENDPOINT and this command starts its own`,
        ],
      });
    },
    START_WITHIN_MS,
  );

  it.each([
    ['https', async () => `https://127.0.0.1:${await freePort()}`],
    ['on a privileged port', () => Promise.resolve('http://127.0.0.1:1')],
  ])(
    'names an http URL on a port of its own when DYNAMODB_ENDPOINT is %s, where DynamoDB Local cannot answer',
    async (_kind, endpointOf) => {
      const endpoint = await endpointOf();
      expect(await startDynamoDbAt(endpoint)).toEqual({
        code: 1,
        lines: [
          `DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT)`,
          `Nothing answers at ${endpoint} (DYNAMODB_ENDPOINT): DynamoDB Local serves plain HTTP on a port of its own: start it with \`npm run dynamodb\` in another terminal and set DYNAMODB_ENDPOINT=http://127.0.0.1:8000, or unset DYNAMODB_ENDPOINT and this command starts its own`,
        ],
      });
    },
    START_WITHIN_MS,
  );

  it(
    'stops in one line when DYNAMODB_ENDPOINT is not a URL',
    async () => {
      expect(await startDynamoDbAt('localhost:8000')).toEqual({
        code: 1,
        lines: ['DYNAMODB_ENDPOINT must be a URL, such as http://127.0.0.1:8000, not "localhost:8000"'],
      });
    },
    START_WITHIN_MS,
  );
});
