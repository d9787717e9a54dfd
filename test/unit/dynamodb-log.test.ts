import { describe, expect, it } from '@jest/globals';
import { event, invoke } from '../support/event';
import { getTodo } from '../support/routes';
import { logLines, withLogLevel } from '../support/logs';
import { dynamoDbStore, freshTable } from '../support/stores';
import { recordsOf } from '../support/records';

/** LOG_LEVEL=debug on the DynamoDB store: a line for each request to DynamoDB (test/unit/log.test.ts has the rest). */
describe('LOG_LEVEL=debug', () => {
  it('adds a line for each DynamoDB request, with how many attempts and how long it took', async () => {
    const store = dynamoDbStore(await freshTable());
    await recordsOf(store);
    const handler = getTodo(store);
    const debug = await withLogLevel('debug', () => logLines(() => invoke(handler, event({ id: '1' }))));
    expect(debug).toEqual([
      expect.objectContaining({ level: 'debug', message: 'dynamodb', operation: 'GetItem', attempts: 1 }),
      expect.objectContaining({ level: 'info', message: 'request', status: 200 }),
    ]);
    expect(debug[0]).toHaveProperty('durationMs', expect.any(Number));
    const info = await withLogLevel('info', () => logLines(() => invoke(handler, event({ id: '1' }))));
    expect(info).toEqual([expect.objectContaining({ level: 'info', message: 'request' })]);
  });
});
