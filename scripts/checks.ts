/**
 * `npm test`, `npm run lint` and `npm run format`: each runs a list of commands in order and stops at the
 * first that fails, with its exit status, as the chains of `&&` in package.json did. They were chains
 * until issue 50: npm adds a user's arguments to the end of a script, so `npm test -- --help` ran the
 * typecheck and the whole lint before jest printed its usage, and `npm run format -- --help` rewrote the
 * tree before eslint printed its own. Here `-- --help` prints what runs, from the same lists, and runs
 * none of it; a wrong command line is one line and exit 2 before any of it (scripts/command-line.ts).
 *
 * `npm test` runs the jest command package.json gives it as one argument (its projects stay there, beside
 * test:unit's and test:simulation's), after the typecheck and the lint. A user's arguments go to jest, as
 * they did, but now right after `jest`: at the end, after `--selectProjects a b`, a test path was read as
 * one more project's name, and jest ran every test of the others. They are checked against jest's own
 * options first, so a mistyped one is answered at once, not after minutes of tsc and lint. lint and
 * format take no arguments.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CommandLineError, didYouMean, parseCommandLine, runTool } from './command-line';

/** A program and its arguments, as typed in a shell at the project's root. */
type Command = readonly [string, ...string[]];

const PROJECT_ROOT = resolve(__dirname, '..');

const TYPECHECK: Command = ['tsc', '--noEmit'];

/** `npm run lint`: the code, then the API description (openapi.yaml), each by every tool that checks it. */
export const LINT: readonly Command[] = [
  ['eslint', '.'],
  ['prettier', '--check', '.'],
  ['validate-api', 'openapi.yaml'],
  // Without the box Redocly prints at every start on Node 20 (quiet-redocly.mjs says why).
  [
    'node',
    '--import',
    './scripts/quiet-redocly.mjs',
    'node_modules/.bin/redocly',
    'lint',
    '--format=stylish',
    'openapi.yaml',
  ],
  ['spectral', 'lint', '--fail-severity=warn', 'openapi.yaml'],
];

/** `npm run format`: Prettier's style first, then what ESLint can fix. */
export const FORMAT: readonly Command[] = [
  ['prettier', '--write', '.'],
  ['eslint', '--fix', '.'],
];

/** `npm test`'s commands before jest's: the typecheck, then the lint. */
export const BEFORE_TESTS: readonly Command[] = [TYPECHECK, ...LINT];

const HELP_OPTION = '  -h, --help   print this text, and run nothing';

function steps(commands: readonly Command[]): string {
  return commands.map((command) => `  ${command.join(' ')}\n`).join('');
}

function testHelp(jest: Command): string {
  return `Usage: npm test [-- <jest arguments>]

Typechecks, lints, and runs every test project but external (several minutes; DynamoDB Local needs
Java 17), stopping at the first command that fails:
${steps(BEFORE_TESTS)}  ${jest[0]} [<jest arguments>] ${jest.slice(1).join(' ')}

Jest arguments are checked against jest's options before anything runs:
  <path pattern>                only the test files whose paths match, e.g. test/unit/http
  -t, --testNamePattern <re>    only the tests whose names match
  --selectProjects <project>    one more project, e.g. external
  and every other option of jest's (npx jest --help)
The quick check alone, without the typecheck and the lint: npm run test:unit.

${HELP_OPTION}
`;
}

const LINT_HELP = `Usage: npm run lint

Checks the code and the API description (openapi.yaml), writing nothing, and stops at the first
command that fails:
${steps(LINT)}
It takes no arguments. Some files alone: npx eslint <files>, npx prettier --check <files>.
npm run format fixes what these tools can fix.

${HELP_OPTION}
`;

const FORMAT_HELP = `Usage: npm run format

Rewrites every file in place to the project's style, then applies what ESLint can fix, stopping at
the first command that fails:
${steps(FORMAT)}
It takes no arguments. Some files alone: npx prettier --write <files>, npx eslint --fix <files>.
npm run lint checks without writing.

${HELP_OPTION}
`;

/**
 * Runs `commands` one after the other at the project's root, each with the terminal, and stops at the
 * first that fails, as `&&` did: its exit status, or 1 when a signal ended it.
 */
function runInTurn(commands: readonly Command[]): number {
  for (const [program, ...args] of commands) {
    const ran = spawnSync(program, args, { cwd: PROJECT_ROOT, stdio: 'inherit' });
    if (ran.error !== undefined) throw ran.error;
    if (ran.status !== 0) return ran.status ?? 1;
  }
  return 0;
}

function isHelp(arg: string): boolean {
  return arg === '--help' || arg === '-h';
}

/** `npm run lint` or `npm run format`: `--help`, or nothing at all. */
function runWithoutArguments(
  tool: string,
  commands: readonly Command[],
  help: string,
  args: readonly string[],
): number {
  const parsed = parseCommandLine(args, {}, tool);
  if (parsed === 'help') {
    process.stdout.write(help);
    return 0;
  }
  const [first] = parsed.positionals;
  if (first !== undefined) {
    throw new CommandLineError(`Unexpected argument "${first}" for ${tool}: it takes none (${tool} -- --help)`);
  }
  return runInTurn(commands);
}

/** What a jest option may be called: jest-cli's declared options (the names and aliases jest validates). */
interface JestOption {
  readonly alias?: string | readonly string[];
}

/** jest's options, as its command line declares them: jest-cli, the package the `jest` command runs. */
function jestOptions(): Readonly<Record<string, JestOption>> {
  // jest-cli is jest's own dependency, at jest's version: found from jest, wherever npm put it.
  const fromJest = createRequire(require.resolve('jest'));
  return (fromJest('jest-cli') as { yargsOptions: Record<string, JestOption> }).yargsOptions;
}

/**
 * Throws a CommandLineError for the first option in `args` that jest would refuse. jest takes an
 * option by its name, its alias, its name in kebab case (`--select-projects`) or, for a switch,
 * `--no-<name>`; yargs, which reads them, adds `--version`.
 */
function checkJestArguments(args: readonly string[]): void {
  const options = jestOptions();
  const names = new Set(['version']);
  const known = ['--version'];
  for (const [name, option] of Object.entries(options)) {
    names.add(name);
    known.push(`--${name}`);
    for (const alias of [option.alias ?? []].flat()) {
      names.add(alias);
      known.push(alias.length === 1 ? `-${alias}` : `--${alias}`);
    }
  }
  function takes(name: string): boolean {
    const camelCase = name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
    return names.has(name) || names.has(camelCase) || (name.startsWith('no-') && takes(name.slice(3)));
  }
  const { tokens } = parseArgs({ args: [...args], allowPositionals: true, strict: false, tokens: true });
  const unknown = tokens.flatMap((token) => (token.kind === 'option' && !takes(token.name) ? [token] : []))[0];
  if (unknown === undefined) return;
  throw new CommandLineError(
    `Unknown option "${unknown.rawName}" for npm test, which passes it to jest: ` +
      `${didYouMean(unknown.rawName, known)} (npm test -- --help)`,
  );
}

/** `npm test`: package.json's jest command, as one argument, then the user's arguments. */
function runTests([command, ...userArgs]: readonly string[]): number {
  const [program, ...scriptArgs] = (command ?? '').split(' ');
  if (program !== 'jest') {
    throw new Error(`package.json's test script gives scripts/checks.ts "${command ?? ''}", not a jest command`);
  }
  if (userArgs.some(isHelp)) {
    process.stdout.write(testHelp([program, ...scriptArgs]));
    return 0;
  }
  checkJestArguments(userArgs);
  return runInTurn([...BEFORE_TESTS, [program, ...userArgs, ...scriptArgs]]);
}

/** Runs the check `args` name, with what follows it on the command line. */
function runCheck([check, ...args]: readonly string[]): number {
  switch (check) {
    case 'test':
      return runTests(args);
    case 'lint':
      return runWithoutArguments('npm run lint', LINT, LINT_HELP, args);
    case 'format':
      return runWithoutArguments('npm run format', FORMAT, FORMAT_HELP, args);
    default:
      throw new Error(`scripts/checks.ts runs test, lint or format, not "${check ?? ''}" (package.json)`);
  }
}

function main(): Promise<number> {
  return Promise.resolve().then(() => runCheck(process.argv.slice(2)));
}

// Run by package.json's scripts; imported by the tests, for the lists.
if (require.main === module) runTool(main);
