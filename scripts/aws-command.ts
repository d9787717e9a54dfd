/**
 * `npm run logs -- <function>` (the framework's `logs --tail`: follows a deployed function's log)
 * and `npm run info` (`info --verbose`: the stage's URL, functions, and its stack's outputs, the
 * dashboard's address among them, then the command that checks the stage, `npm run smoke -- <its
 * URL>`), after checks that need no AWS: the function is one of serverless.yml's (else the
 * closest name is offered), the stage a name the framework takes, and there are AWS credentials
 * to call AWS with. Without these the framework would load and resolve the whole service, ask
 * AWS, and then stop with a paragraph, or with the credentials' error for a mistyped name; this
 * stops at once with one line that says what is wrong.
 *
 * --stage, --region and --aws-profile go through to the framework (dev, us-east-1 and the SDK's
 * usual chain when not given: AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws, SSO,
 * a container's or an instance's role); so do `logs`' --startTime and --filter.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { parse } from 'yaml';
import { CommandLineError, didYouMean, parseCommandLine } from './command-line';

/** The options of both commands, each a value for the framework. */
const STAGE_OPTIONS = {
  stage: { type: 'string' },
  region: { type: 'string' },
  'aws-profile': { type: 'string' },
} as const;

const STAGE_HELP = `  --stage <stage>          the stage (default dev)
  --region <region>        its region (default us-east-1; a profile's region and AWS_REGION are not used)
  --aws-profile <profile>  a profile of ~/.aws/config (default AWS_PROFILE, else the AWS SDK's usual
                           chain: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the default profile, a role)
  -h, --help               print this text

It checks the function's name, the stage's and the credentials before it asks AWS; a mistake stops
it with one line and exit status 2 (1 for missing credentials). More: docs/operations.md.
`;

const COMMANDS = {
  logs: {
    usage: 'npm run logs -- <function> [--stage <stage>] [--region <region>] [--aws-profile <profile>]',
    // A function: serverless.yml is read only when the text is asked for.
    about: () => `Follows a deployed function's log, from 10 seconds back, until Ctrl-C (the framework's logs --tail).

  <function>               one of serverless.yml's: ${functionNames().join(', ')}
  --startTime <time>       start further back: 1h, 30m, 2d, or a date
  --filter <pattern>       only the lines that match a CloudWatch Logs filter pattern,
                           e.g. --filter '{ $.status >= 500 }'
`,
    options: { ...STAGE_OPTIONS, startTime: { type: 'string' }, filter: { type: 'string' } },
    takesFunction: true,
    serverless: (fn: string) => ['logs', '--function', fn, '--tail'],
  },
  info: {
    usage: 'npm run info [-- --stage <stage>] [--region <region>] [--aws-profile <profile>]',
    about: () => `Prints a deployed stage's URL, functions and outputs (its dashboard, its alarm topic), then the
command that checks the stage, npm run smoke -- <its URL> (the framework's info --verbose).

`,
    options: STAGE_OPTIONS,
    takesFunction: false,
    serverless: () => ['info', '--verbose'],
  },
} as const;
type Command = keyof typeof COMMANDS;

/** Prints one line on stderr and ends with `code`. */
function stop(line: string, code: number): never {
  process.stderr.write(`${line}\n`);
  process.exit(code);
}

/** The framework's arguments for this command line, or a line saying how to call it. */
function serverlessArgs(argv: string[]): { args: string[]; profile: string | undefined } {
  // package.json's scripts put the command first: `npm run info -- <what the user typed>`.
  const [name = '', ...given] = argv;
  if (!(name in COMMANDS)) stop(`Unknown command "${name}": logs or info`, 2);
  const command = COMMANDS[name as Command];
  let parsed;
  try {
    parsed = parseCommandLine(given, command.options, `npm run ${name}`);
  } catch (error) {
    if (error instanceof CommandLineError) stop(error.message, 2);
    throw error;
  }
  if (parsed === 'help') {
    process.stdout.write(`Usage: ${command.usage}\n\n${command.about()}${STAGE_HELP}`);
    process.exit(0);
  }
  const rest = parsed.positionals;
  const [fn] = rest;
  if (rest.length !== (command.takesFunction ? 1 : 0)) {
    stop(`Usage: ${command.usage}`, 2);
  }
  const problem = (fn === undefined ? undefined : functionProblem(fn)) ?? stageProblem(parsed.values.stage);
  if (problem !== undefined) stop(problem, 2);
  const options = Object.entries(parsed.values).flatMap(([option, value]) =>
    typeof value === 'string' ? [`--${option}`, value] : [],
  );
  return { args: [...command.serverless(fn ?? ''), ...options], profile: parsed.values['aws-profile'] };
}

/** The functions serverless.yml declares, in its order. */
function functionNames(): string[] {
  // CloudFormation's own tags (!GetAtt) are not YAML's; what they hold does not matter here.
  const config = parse(readFileSync(resolve(__dirname, '../serverless.yml'), 'utf8'), { logLevel: 'error' }) as {
    functions?: Record<string, unknown>;
  };
  return Object.keys(config.functions ?? {});
}

/** Why `name` is not a function of serverless.yml, in one line; undefined when it is one. */
function functionProblem(name: string): string | undefined {
  const known = functionNames();
  if (known.includes(name)) return undefined;
  return `No function "${name}" in serverless.yml: ${didYouMean(name, known)} Functions: ${known.join(', ')}`;
}

/** The framework's rule for a stage's name: osls checks the same pattern (its stage-pattern module). */
const STAGE_NAME = /^[A-Za-z0-9-]+$/;

/** Why `stage` is not a name the framework takes, in one line; undefined when it is, or not given (dev). */
function stageProblem(stage: string | undefined): string | undefined {
  if (stage === undefined || STAGE_NAME.test(stage)) return undefined;
  return `--stage must be letters, digits and hyphens, as the framework's stage names are, not "${stage}"`;
}

/** Why the SDK finds no credentials, in one line; undefined when it finds some. */
async function missingCredentials(given: string | undefined): Promise<string | undefined> {
  try {
    await defaultProvider(given === undefined ? {} : { profile: given })();
    return undefined;
  } catch (error) {
    // An empty AWS_PROFILE is none, for the SDK too.
    const profile = given ?? (process.env.AWS_PROFILE === '' ? undefined : process.env.AWS_PROFILE);
    if (profile === undefined) {
      return (
        'No AWS credentials: set AWS_PROFILE (or --aws-profile) to a profile of ~/.aws/config, or ' +
        'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (aws configure, or aws sso login)'
      );
    }
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
    // The SDK's message when the profile is not there at all says only that no provider answered.
    return reason.includes('from any providers')
      ? `No AWS credentials for profile "${profile}": add it to ~/.aws/config (aws configure --profile ${profile}) or sign in (aws sso login --profile ${profile})`
      : `No AWS credentials for profile "${profile}": ${reason}`;
  }
}

/** The stage's base URL in what `info --verbose` printed: its stack's HttpApiUrl output. */
function stageUrl(printed: string): string | undefined {
  // eslint-disable-next-line no-control-regex -- the framework may colour what it prints
  const plain = printed.replace(/\u001b\[[0-9;]*m/g, '');
  return /^\s*HttpApiUrl: (https?:\/\/\S+)\s*$/m.exec(plain)?.[1];
}

async function main(): Promise<void> {
  const { args, profile } = serverlessArgs(process.argv.slice(2));
  const missing = await missingCredentials(profile);
  if (missing !== undefined) stop(missing, 1);
  // `info`'s output is read for the stage's URL as it passes through. (The framework then shows
  // no spinner on stderr while it asks AWS, as for any stdout that is not a terminal.)
  const readsOutput = args[0] === 'info';
  const serverless = spawn(
    process.execPath,
    [resolve(__dirname, '../node_modules/serverless/bin/serverless.js'), ...args],
    {
      stdio: ['inherit', readsOutput ? 'pipe' : 'inherit', 'inherit'],
      env: {
        ...process.env,
        // On Node 20 the SDK warns that its releases after January 2027 need Node 22: about
        // deploys, which run nodejs22.x; here it would only come before every answer.
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED:
          process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ?? 'true',
      },
    },
  );
  let printed = '';
  serverless.stdout?.on('data', (chunk: Buffer) => {
    printed += chunk.toString();
    process.stdout.write(chunk);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => serverless.kill(signal));
  }
  const [code] = (await once(serverless, 'close')) as [number | null];
  const url = readsOutput && code === 0 ? stageUrl(printed) : undefined;
  if (url !== undefined) process.stdout.write(`\nCheck the stage: npm run smoke -- ${url}\n`);
  process.exit(code ?? 1);
}

main().catch((error: unknown) => {
  stop(error instanceof Error ? error.message : String(error), 1);
});
