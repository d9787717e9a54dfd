import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../harness/project';
import stageParams from '../../serverless/plugins/stage-params.cjs';

/**
 * serverless/plugins/stage-params.cjs: every stage parameter and variable a command takes, checked
 * before the framework resolves or builds anything (the local workflow plugin stops the command with
 * these lines; test/system/debug-and-config.test.ts shows it does).
 */

const { settingProblems } = stageParams;
const cli = (...params: string[]) => settingProblems({ cli: params, file: {}, env: {} });

/** A parameter, values it takes, a value it refuses, and the line that refuses it. */
const CASES: [string, string[], string, string][] = [
  ['store', ['memory', 'dynamodb'], 'mysql', '--param=store must be memory or dynamodb, not "mysql"'],
  ['sourcemaps', ['on', 'off'], 'yes', '--param=sourcemaps must be on or off, not "yes"'],
  ['mode', ['start', 'dev'], 'foo', '--param=mode must be start or dev, not "foo"'],
  ['tracing', ['on', 'off'], 'yes', '--param=tracing must be on or off, not "yes"'],
  ['listVersion', ['read', 'written'], 'trusted', '--param=listVersion must be read or written, not "trusted"'],
  ['alarms', ['on', 'off'], 'true', '--param=alarms must be on or off, not "true"'],
  ['concurrencyCaps', ['on', 'off'], '0', '--param=concurrencyCaps must be on or off, not "0"'],
  ['alarmEmail', ['ops@example.com'], 'ops', '--param=alarmEmail must be an email address, not "ops"'],
  ['throttleRate', ['1', '50', '10000'], 'abc', '--param=throttleRate must be a number from 1 to 10000, not "abc"'],
  ['throttleRate', ['2.5'], '10001', '--param=throttleRate must be a number from 1 to 10000, not "10001"'],
  ['throttleBurst', ['1', '5000'], '2.5', '--param=throttleBurst must be a whole number from 1 to 5000, not "2.5"'],
  ['throttleBurst', ['100'], '0', '--param=throttleBurst must be a whole number from 1 to 5000, not "0"'],
  [
    'reservedConcurrency',
    ['1', '1000'],
    '0',
    '--param=reservedConcurrency must be a whole number from 1 to 1000, not "0"',
  ],
  ...['listTodos', 'getTodo', 'createTodo', 'updateTodo', 'deleteTodo'].map(
    (fn): [string, string[], string, string] => [
      `${fn}Concurrency`,
      ['1', '64', '1000'],
      '1001',
      `--param=${fn}Concurrency must be a whole number from 1 to 1000, not "1001"`,
    ],
  ),
  [
    'logRetentionDays',
    ['14', '365', '3653'],
    '10',
    '--param=logRetentionDays must be one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653, not "10"',
  ],
  [
    'table',
    ['todos', 'my-app_prod.todos'],
    'my todos',
    '--param=table must be a DynamoDB table name: 3 to 255 letters, digits, _, . or -, not "my todos"',
  ],
];

describe('each stage parameter', () => {
  it.each(CASES)('%s takes %j and refuses %j in one line', (name, good, bad, message) => {
    for (const value of good) expect(cli(`${name}=${value}`)).toEqual([]);
    expect(cli(`${name}=${bad}`)).toEqual([message]);
  });

  it('has a test above, and a use in serverless.yml or the plugins, for every parameter it knows', () => {
    const tested = new Set(CASES.map(([name]) => name));
    const known = Object.keys(stageParams.PARAMS);
    expect(known.filter((name) => !tested.has(name))).toEqual([]);
    const config = readFileSync(join(PROJECT_ROOT, 'serverless.yml'), 'utf8');
    // A parameter is read first in its variable, or as another's fallback: `${param:a, param:b}`.
    const used = new Set([...config.matchAll(/\bparam:(\w+)/g)].map((match) => match[1]));
    // store and sourcemaps have defaults that depend on the command: the local workflow plugin reads them.
    const plugin = readFileSync(join(PROJECT_ROOT, 'serverless/plugins/local-workflow/variables.cjs'), 'utf8');
    for (const name of ['store', 'sourcemaps']) expect(plugin).toContain(`'${name}'`);
    expect([...used].filter((name) => name !== undefined && !known.includes(name))).toEqual([]);
    expect(known.filter((name) => !used.has(name) && !['store', 'sourcemaps'].includes(name))).toEqual([]);
  });
});

describe('a name it does not know', () => {
  it('is refused with the closest known name', () => {
    expect(cli('stroe=memory')).toEqual([
      expect.stringMatching(
        /^Unknown stage parameter "stroe" \(--param=stroe=memory\): did you mean "store"\? Known: /,
      ),
    ]);
    expect(cli('throttlerate=5')).toEqual([expect.stringContaining('did you mean "throttleRate"?')]);
  });

  it('is refused in serverless.yml’s params too', () => {
    expect(settingProblems({ cli: [], file: { tracng: 'on' }, env: {} })).toEqual([
      expect.stringMatching(
        /^Unknown stage parameter "tracng" \(params in serverless\.yml\): did you mean "tracing"\?/,
      ),
    ]);
  });

  it('is refused without a value, saying how to give one', () => {
    expect(cli('store')).toEqual(['--param=store needs a value: --param=store=<value>']);
  });
});

describe('serverless.yml’s own params', () => {
  it('are checked where they are plain values, and left to the framework where they are built from variables', () => {
    expect(
      settingProblems({ cli: [], file: { throttleRate: 50, table: '${self:service}-${sls:stage}-todos' }, env: {} }),
    ).toEqual([]);
    expect(settingProblems({ cli: [], file: { throttleRate: 'fast' }, env: {} })).toEqual([
      '--param=throttleRate must be a number from 1 to 10000, not "fast" (params in serverless.yml)',
    ]);
  });

  it('as this checkout has them, are all well', () => {
    // CloudFormation's own tags (!GetAtt) are not YAML's; what they hold does not matter here.
    const config = parse(readFileSync(join(PROJECT_ROOT, 'serverless.yml'), 'utf8'), { logLevel: 'error' }) as {
      params: { default: Record<string, unknown> };
    };
    expect(Object.keys(config.params.default).length).toBeGreaterThan(5);
    expect(settingProblems({ cli: [], file: config.params.default, env: {} })).toEqual([]);
  });
});

describe('the environment variables the local commands read', () => {
  it.each([
    ['PORT', '3000', 'abc', 'PORT must be a whole number from 1 to 65535, not "abc"'],
    ['PORT', '65535', '70000', 'PORT must be a whole number from 1 to 65535, not "70000"'],
    ['LAMBDA_PORT', '3002', '-1', 'LAMBDA_PORT must be a whole number from 1 to 65535, not "-1"'],
    ['LOG_LEVEL', 'DEBUG', 'verbose', 'LOG_LEVEL must be one of debug, info, warn, error, silent, not "verbose"'],
  ])('%s takes %j and refuses %j in one line', (name, good, bad, message) => {
    expect(settingProblems({ cli: [], file: {}, env: { [name]: good } })).toEqual([]);
    expect(settingProblems({ cli: [], file: {}, env: { [name]: bad } })).toEqual([message]);
  });

  it('are unset or empty without a word', () => {
    expect(settingProblems({ cli: [], file: {}, env: { PORT: '', LOG_LEVEL: undefined } })).toEqual([]);
  });
});
