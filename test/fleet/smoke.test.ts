import { afterAll, beforeAll, describe, it } from '@jest/globals';
import { startFleet, type Fleet } from '../../harness/fleet';
import { servicePackage } from '../../harness/package';
import { expectPassingRunThatLeavesTheList, SMOKE_WITHIN_MS } from '../support/smoke-command';
import { testDynamoDbEndpoint } from '../support/stores';

/** Packaging (about 5 s idle) and, on the first run of a machine, installing Node 22 (185 MB). */
const PREPARE_WITHIN_MS = 300_000;

/**
 * `npm run smoke` against the fleet's gateway (harness/fleet.ts): the zips that ship, each
 * function in containers of its own on Lambda's Node, behind API Gateway's rules (its 404 and its
 * CORS, from the packaged template), on DynamoDB Local. The same checks as against npm start.
 */
describe('npm run smoke against the fleet', () => {
  let fleet: Fleet;
  beforeAll(async () => {
    const packaged = await servicePackage([]);
    fleet = await startFleet({ packaged, dynamoDbEndpoint: testDynamoDbEndpoint(), logLevel: 'warn' });
  }, PREPARE_WITHIN_MS);
  afterAll(() => fleet.stop());

  it(
    'passes every check, and leaves the list as it was',
    () => expectPassingRunThatLeavesTheList(fleet.url, async () => (await fetch(`${fleet.url}/todos`)).json()),
    SMOKE_WITHIN_MS,
  );
});
