import { describe, expect, it } from '@jest/globals';
import commandLine from '../../serverless/plugins/local-workflow/command-line.cjs';

/**
 * How the local workflow plugin answers a framework command's line (local-workflow/command-line.cjs);
 * test/system/debug-and-config.test.ts runs `npm start`, `npm run dev`, `npm run package` and
 * `npm run deploy` with it.
 */
describe('the name a command is answered by', () => {
  it.each([
    [['offline'], { npm_lifecycle_event: 'start', npm_lifecycle_script: 'serverless offline' }, 'npm start'],
    [
      ['offline'],
      { npm_lifecycle_event: 'dev', npm_lifecycle_script: 'exec serverless offline --param=mode=dev' },
      'npm run dev',
    ],
    [
      ['offline'],
      {
        npm_lifecycle_event: 'debug',
        npm_lifecycle_script: 'node --inspect=${INSPECT_PORT:-9229} node_modules/serverless/bin/serverless.js offline',
      },
      'npm run debug',
    ],
    [['deploy'], { npm_lifecycle_event: 'deploy', npm_lifecycle_script: 'serverless deploy' }, 'npm run deploy'],
    // A test that `npm test` started, which runs the framework in its turn; and a command typed without npm.
    [
      ['package'],
      { npm_lifecycle_event: 'test', npm_lifecycle_script: 'node scripts/checks.ts test' },
      'serverless package',
    ],
    [
      ['offline'],
      { npm_lifecycle_event: 'start', npm_lifecycle_script: 'serverless offline-other' },
      'serverless offline',
    ],
    [['invoke', 'local'], {}, 'serverless invoke local'],
  ])('%j with %j is %s', (commands, env, tool) => {
    expect(commandLine.toolName(commands, env)).toBe(tool);
  });
});

describe('an option the command does not take', () => {
  const accepted = {
    stage: { shortcut: 's' },
    region: { shortcut: 'r' },
    'aws-profile': {},
    httpPort: {},
    lambdaPort: {},
  };

  it.each([
    [{ stgae: 'prod' }, false, 'Unknown option "--stgae" for npm run x: did you mean "--stage"? (npm run x -- --help)'],
    [{ 'aws-porfile': 'work' }, false, 'did you mean "--aws-profile"?'],
    // Compared without case, dashes or underscores.
    [{ httpport: '4000' }, true, 'did you mean "--httpPort"?'],
    // For the local server, the variables that set its ports are among the names, with the value given.
    [{ prot: '4000' }, true, 'did you mean "PORT=4000 npm run x"?'],
    [{ lambda_port: true }, true, 'did you mean "LAMBDA_PORT=<port> npm run x"?'],
    // One letter: a shortcut.
    [{ S: 'prod' }, false, 'Unknown option "-S" for npm run x: did you mean "-s"?'],
  ])('%j (the local server: %s) is answered: %s', (options, localServer, answer) => {
    expect(commandLine.unknownOptionLine({ options, accepted, tool: 'npm run x', localServer })).toContain(answer);
  });

  it('is none when every option is taken, and names none when the command takes none', () => {
    const taken = { stage: 'prod', region: 'eu-west-1' };
    expect(commandLine.unknownOptionLine({ options: taken, accepted, tool: 'npm run x', localServer: false })).toBe(
      undefined,
    );
    expect(
      commandLine.unknownOptionLine({
        options: { x: true },
        accepted: {},
        tool: 'serverless print',
        localServer: false,
      }),
    ).toBe('Unknown option "-x" for serverless print: it takes none (serverless print --help)');
  });
});

describe('the local server’s usage', () => {
  const accepted = {
    httpPort: { usage: 'HTTP port to listen on. Default: 3000.' },
    lambdaPort: { usage: 'Lambda http port to listen on. Default: 3002.' },
    noTimeout: { usage: 'Disables the timeout feature.', shortcut: 't' },
  };

  it.each([
    ['npm start', false, /^Usage: npm start \[-- <option> \.\.\.\]\n\nServes the API with serverless offline/],
    ['npm run dev', true, /^Usage: npm run dev \[-- <option> \.\.\.\]\n\nServes the API as npm start does/],
    ['serverless offline', false, /^Usage: serverless offline \[<option> \.\.\.\]\n/],
  ])('for %s (dev: %s) says how to call it and what it does', (tool, dev, usage) => {
    expect(commandLine.localServerHelp({ tool, dev, accepted })).toMatch(usage);
  });

  it('lists every option it is given, the ports as the variables that set them', () => {
    const help = commandLine.localServerHelp({ tool: 'npm start', dev: false, accepted });
    expect(help).toMatch(/\n {2}--httpPort +The API's port: set PORT instead/);
    expect(help).toMatch(/\n {2}--lambdaPort +The Lambda invoke endpoint's port: set LAMBDA_PORT instead/);
    expect(help).toMatch(/\n {2}--noTimeout, -t +Disables the timeout feature\.\n/);
    expect(help).not.toContain('3002');
  });
});
