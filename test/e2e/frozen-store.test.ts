import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FUNCTION_TIMEOUT_MS } from '../support/event';
import { startFaultProxy, type FaultProxy } from '../../harness/fault-proxy';
import { START_WITHIN_MS } from '../../harness/offline';
import { startService, type Service } from '../support/servers';
import { testDynamoDbEndpoint } from '../support/stores';

const CONCURRENT = 50;

/**
 * `npm run start:dynamodb` in front of a DynamoDB that stops answering: every request is our
 * JSON 503 with Retry-After, given before the function's timeout. Past the timeout,
 * serverless-offline (like Lambda) would answer for us, with its own error body and a stack.
 */
describe('npm run start:dynamodb with a frozen DynamoDB', () => {
  let network: FaultProxy;
  let service: Service;
  beforeAll(async () => {
    network = await startFaultProxy(testDynamoDbEndpoint());
    service = await startService('dynamodb', { DYNAMODB_ENDPOINT: network.endpoint });
  }, START_WITHIN_MS);
  afterAll(async () => {
    await service.stop();
    await network.close();
  });

  it(
    `answers each of ${CONCURRENT} concurrent requests a JSON 503 with Retry-After, never the emulator's timeout`,
    async () => {
      // Seeded while it still answers; then it freezes.
      expect((await service.api.get('/todos')).status).toBe(200);
      network.freeze();
      const kinds = [
        () => service.api.get('/todos/1'),
        (i: number) => service.api.post('/todos', { title: `frozen ${i}` }),
        () => service.api.put('/todos/2', { completed: false }),
        () => service.api.delete('/todos/1'),
        () => service.api.get('/todos'),
      ];
      const requests = Array.from(
        { length: CONCURRENT },
        (_, i) => kinds[i % kinds.length]?.(i) ?? Promise.reject(new Error('no request')),
      );
      for (const response of await Promise.all(requests)) {
        expect({
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
          body: response.json(),
        }).toEqual({
          status: 503,
          retryAfter: '1',
          body: { error: 'Service temporarily unavailable, please retry' },
        });
      }
    },
    2 * FUNCTION_TIMEOUT_MS,
  );
});
