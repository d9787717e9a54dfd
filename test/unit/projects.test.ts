import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { DYNAMODB_ONLY, EVERY_STORE } from '../../jest.config';
import { PROJECT_ROOT } from '../../harness/project';

/**
 * `npm run test:unit` runs without DynamoDB Local, and the `dynamodb` project runs every unit test
 * that needs it: a new test file on the DynamoDB store that jest.config.ts does not name would
 * otherwise not run at all in `npm test`, or fail `npm run test:unit` for want of Java.
 */
describe('the unit and dynamodb projects', () => {
  const dir = join(PROJECT_ROOT, 'test/unit');
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => ({ name: file.replace('.test.ts', ''), source: readFileSync(join(dir, file), 'utf8') }));

  it('name every unit test file that uses the DynamoDB store, and no file that is not there', () => {
    const named = [...EVERY_STORE, ...DYNAMODB_ONLY];
    const usesDynamoDb = files.filter(({ source }) => / from '\.\.\/support\/stores';$/m.test(source));
    expect(usesDynamoDb.map(({ name }) => name).filter((name) => !named.includes(name))).toEqual([]);
    expect(named.filter((name) => !files.some((file) => file.name === name))).toEqual([]);
  });

  it('run the tests of every store in both, and those of DynamoDB alone in dynamodb', () => {
    for (const { name, source } of files) {
      if (EVERY_STORE.includes(name))
        expect({ name, eachStore: source.includes('STORES') }).toEqual({ name, eachStore: true });
    }
    for (const name of DYNAMODB_ONLY) expect(files.find((file) => file.name === name)?.source).not.toContain('STORES');
  });
});
