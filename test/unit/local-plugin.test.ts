import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../harness/project';
import { LEVELS } from '../../lib/log';
import stageParams from '../../serverless/plugins/stage-params.cjs';

/**
 * The local workflow plugin (serverless/plugins/local-workflow.cjs) checks LOG_LEVEL and
 * `--param=store` before a command goes any further; the values it allows are the ones the service
 * and serverless.yml know.
 */
describe('the local workflow plugin', () => {
  it('allows the log levels lib/log.ts knows', () => {
    expect(stageParams.LOG_LEVELS).toEqual([...LEVELS]);
  });

  it('allows the stores serverless.yml knows', () => {
    // CloudFormation's own tags (!GetAtt) are not YAML's; what they hold does not matter here.
    const config = parse(readFileSync(join(PROJECT_ROOT, 'serverless.yml'), 'utf8'), { logLevel: 'error' }) as {
      custom: { stores: Record<string, unknown> };
    };
    expect(stageParams.STORES).toEqual(Object.keys(config.custom.stores));
  });
});
