import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCommand } from '../../harness/cli';
import { SCENARIOS } from '../../harness/simulation/scenarios';
import { PROJECT_ROOT, freePort } from '../../harness/project';
import { BEFORE_TESTS, FORMAT, LINT } from '../../scripts/checks';
import { CommandLineError, noPositionals, numberOption, oneOf } from '../../scripts/command-line';

/**
 * One command-line convention for every script (issue 40; scripts/command-line.ts): `--help` and
 * `-h` print the usage and exit 0 having done nothing else; an unknown option, section or
 * scenario, or a missing or malformed value, is one line on stderr, with the closest name where
 * there is one, and exit 2, before any work and without a stack. smoke, info and logs have theirs
 * in test/system/smoke.test.ts and aws-commands.test.ts.
 *
 * Each script is run as package.json runs it, `node --import tsx <file> <arguments>`, read from
 * package.json. What would be work is made visible and harmless: `npm`, `java` and every program
 * `npm test`, `npm run lint` and `npm run format` run are stand-ins on the PATH that write their
 * name to a log and fail (the load run starts its server with npm, DynamoDB Local is Java), and
 * DYNAMODB_ENDPOINT is a server that counts the requests it gets.
 */

/** tsx compiles a script and its imports at each start: about 1 s idle, several times that on a busy machine. */
const SCRIPT_WITHIN_MS = 20_000;
/** Scripts run at once: a few keep 2 cores busy without starving what else runs on them. */
const AT_ONCE = 3;

/** How package.json runs a script of its own: `[NAME=value …] node --import tsx <file> [<argument> …]`. */
function packageScript(name: string): { env: Record<string, string>; file: string; args: string[] } {
  const { scripts } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  // Words as a shell splits them: at spaces, but not within single quotes.
  const words = [...(scripts[name] ?? '').matchAll(/'([^']*)'|(\S+)/g)].map(([, quoted, bare]) => quoted ?? bare ?? '');
  // The variables set before the command, as a shell reads them.
  const command = words.findIndex((word) => !/^\w+=/.test(word));
  const env = Object.fromEntries(
    words.splice(0, command).map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
  );
  const [node, flag, loader, file, ...args] = words;
  if (node !== 'node' || flag !== '--import' || loader !== 'tsx' || file === undefined) {
    throw new Error(`package.json's ${name} is not "node --import tsx <file>": ${scripts[name] ?? 'missing'}`);
  }
  return { env, file, args };
}

/** The arguments package.json gives jest in `npm test` (`checks.ts test 'jest <arguments>'`). */
function jestArguments(): string[] {
  const [check, command, ...rest] = packageScript('test').args;
  const [jest, ...args] = (command ?? '').split(' ');
  if (check !== 'test' || jest !== 'jest' || rest.length > 0) throw new Error('npm test runs no jest');
  return args;
}

/** Commands as the checks' usage prints them, one a line. */
function printed(commands: readonly (readonly string[])[]): string[] {
  return commands.map((command) => `  ${command.join(' ')}\n`);
}

/** Every program `npm test`, `npm run lint` and `npm run format` run (scripts/checks.ts). */
const CHECK_PROGRAMS = [...new Set([...BEFORE_TESTS, ...FORMAT].map(([program]) => program)), 'jest'];

interface Script {
  readonly tool: string;
  /** The first line of its help: what it is, and how to call it. */
  readonly usage: RegExp;
  /** Names its help must explain. */
  readonly explains: readonly string[];
}

const SCRIPTS = {
  bench: {
    tool: 'npm run bench',
    usage: /^Usage: npm run bench \[-- <section> \.\.\.\] \[--save\] \[--baseline <git revision>\]\n/,
    explains: ['<section>', '--save', '--baseline', 'warm', 'scaleCheck', '-h, --help'],
  },
  load: {
    tool: 'npm run load',
    usage: /^Usage: npm run load \[-- --store memory\|dynamodb\] \[--amount <n>\]/,
    explains: ['--store', '--amount', '--connections', '--seconds', '--heap-mb', '--keep-timeout', '-h, --help'],
  },
  simulate: {
    tool: 'npm run simulate',
    usage: /^usage: npm run simulate -- \[--scenario NAME\] \[--depth N\]/,
    explains: ['--seeds', '--script', '--rate', '--seed', 'PUT, keyed'],
  },
  dynamodb: {
    tool: 'npm run dynamodb',
    usage: /^Usage: npm run dynamodb \[-- --port <port>\] \[--path <folder>\]\n/,
    explains: ['--port', '--path', '-h, --help'],
  },
  'start:dynamodb': {
    tool: 'npm run start:dynamodb',
    usage: /^Usage: npm run start:dynamodb \[-- <serverless offline options>\]\n/,
    explains: ['DYNAMODB_ENDPOINT', 'TODOS_TABLE', '--noTimeout', '--httpPort', '--param', '-h, --help'],
  },
  mutate: {
    tool: 'npm run mutate',
    usage:
      /^Usage: npm run mutate \[-- --only <mutant> \.\.\.\] \[--jobs <n>\] \[--list\] \[--except <test> \.\.\.\]\n/,
    explains: ['--only', '--jobs', '--list', '--except', 'scripts/mutants.ts', '90 %', '-h, --help'],
  },
  // Each names what it runs, in order, as it runs it.
  test: {
    tool: 'npm test',
    usage: /^Usage: npm test \[-- <jest arguments>\]\n/,
    explains: [
      ...printed(BEFORE_TESTS),
      `  jest [<jest arguments>] ${jestArguments().join(' ')}\n`,
      '<path pattern>',
      '-t, --testNamePattern',
      '--selectProjects <project>',
      'npx jest --help',
      '-h, --help',
    ],
  },
  lint: {
    tool: 'npm run lint',
    usage: /^Usage: npm run lint\n/,
    explains: [...printed(LINT), 'takes no arguments', '-h, --help'],
  },
  format: {
    tool: 'npm run format',
    usage: /^Usage: npm run format\n/,
    explains: [...printed(FORMAT), 'takes no arguments', '-h, --help'],
  },
} as const satisfies Record<string, Script>;
type ScriptName = keyof typeof SCRIPTS;

/** A command line refused: the one line it gets, `(<tool> -- --help)` at its end left out here. */
const MISTAKES: readonly (readonly [ScriptName, readonly string[], string])[] = [
  [
    'bench',
    ['warm', '--sav'],
    'Unknown option "--sav" for npm run bench: did you mean "--save"? Options: --save, --baseline',
  ],
  // coldInit comes first, and would run for minutes, were the names not all checked before it.
  [
    'bench',
    ['coldInit', 'wram'],
    'Unknown section "wram" for npm run bench: did you mean "warm"? Sections: bundle, coldInit, warm, memory, ' +
      'startup, reload, dynamodbColdStart, dynamodbPressure, fleet, fleetList, listReads, batching, exactlyOnce, ' +
      'emulator, load, install, scale, scaleCheck',
  ],
  ['bench', ['warm', '--baseline'], "Option '--baseline <value>' argument missing"],
  [
    'load',
    ['--amout', '500'],
    'Unknown option "--amout" for npm run load: did you mean "--amount"? ' +
      'Options: --store, --amount, --connections, --seconds, --heap-mb, --keep-timeout',
  ],
  // It used to run a memory store for any store but dynamodb.
  [
    'load',
    ['--store', 'dynamo'],
    'Unknown store "dynamo" for npm run load: did you mean "dynamodb"? Stores: memory, dynamodb',
  ],
  ['load', ['--amount', '5k'], '--amount must be a whole number, 1 or more, not "5k"'],
  [
    'simulate',
    ['--scenaro', 'PUT'],
    'Unknown option "--scenaro" for npm run simulate: did you mean "--scenario"? ' +
      'Options: --scenario, --depth, --read-depth, --seeds, --script, --rate, --seed',
  ],
  [
    'simulate',
    ['--scenario', 'PUT, keyd'],
    // Every scenario, as the simulator names them: the list is SCENARIOS', not this test's.
    `Unknown scenario "PUT, keyd" for npm run simulate: did you mean "PUT, keyed"? Scenarios: ${Object.keys(SCENARIOS).join('; ')}`,
  ],
  ['simulate', ['--depth', 'deep'], '--depth must be a whole number, 0 or more, not "deep"'],
  // --rate used to win silently.
  [
    'simulate',
    ['--scenario', 'PUT', '--script', 'lost', '--rate', '0.1'],
    '--script and --rate each choose the faults of a replay: give one or the other',
  ],
  [
    'dynamodb',
    ['--prot', '8001'],
    'Unknown option "--prot" for npm run dynamodb: did you mean "--port"? Options: --port, --path',
  ],
  // It used to start DynamoDB Local on port NaN.
  ['dynamodb', ['--port'], "Option '--port <value>' argument missing"],
  ['dynamodb', ['--port', '80000'], '--port must be a whole number, from 1 to 65535, not "80000"'],
  [
    'start:dynamodb',
    ['--htpPort', '3001'],
    'Unknown option "--htpPort" for npm run start:dynamodb: did you mean "--httpPort"? Options: --albPort,',
  ],
  ['start:dynamodb', ['offline'], 'Unexpected argument "offline" for npm run start:dynamodb: it takes options only'],
  [
    'mutate',
    ['--onyl', 'client-throttle-final'],
    'Unknown option "--onyl" for npm run mutate: did you mean "--only"? Options: --only, --jobs, --list, --except',
  ],
  // Checked before the tree is copied and the tests run, an hour of the machine for the whole list.
  [
    'mutate',
    ['--only', 'client-throttle-final', '--only', 'queue-lease-compared-wrong-wey'],
    'Unknown mutant "queue-lease-compared-wrong-wey" for npm run mutate: did you mean "queue-lease-compared-wrong-way"? ' +
      'Mutants: outcome-500-not-applied, ',
  ],
  ['mutate', ['--jobs', '0'], '--jobs must be a whole number, 1 or more, not "0"'],
  // Checked before the typecheck and the lint, which took two minutes before jest refused it.
  [
    'test',
    ['--selectProject', 'external'],
    'Unknown option "--selectProject" for npm test, which passes it to jest: did you mean "--selectProjects"?',
  ],
  [
    'test',
    ['test/unit/http', '-t', 'parses', '--colour'],
    'Unknown option "--colour" for npm test, which passes it to jest: did you mean "--color"?',
  ],
  // Both used to be added to the end of the last command of their chain.
  ['lint', ['--fix'], 'Unknown option "--fix" for npm run lint: it takes none'],
  ['lint', ['lib/http.ts'], 'Unexpected argument "lib/http.ts" for npm run lint: it takes none'],
  ['format', ['--check'], 'Unknown option "--check" for npm run format: it takes none'],
];

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Killed for running past SCRIPT_WITHIN_MS. */
  readonly overran: boolean;
}

/** Runs a script to its end, or kills it and all it started (its own process group) past its bound. */
function runScript(script: ScriptName, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const asWritten = packageScript(script);
    const child = spawn(process.execPath, ['--import', 'tsx', asWritten.file, ...asWritten.args, ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, FORCE_COLOR: '0', ...asWritten.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let overran = false;
    const timer = setTimeout(() => {
      overran = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, SCRIPT_WITHIN_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, overran });
    });
  });
}

/** `work` for each item, at most `atOnce` at a time. */
async function inTurns<T>(items: readonly T[], atOnce: number, work: (item: T) => Promise<void>): Promise<void> {
  // One iterator for every worker: each takes the next item the others have not.
  const queue = items.values();
  async function worker(): Promise<void> {
    for (const item of queue) await work(item);
  }
  await Promise.all(Array.from({ length: atOnce }, worker));
}

const HELP_FLAGS = ['--help', '-h'] as const;
const RUNS: readonly (readonly [ScriptName, readonly string[]])[] = [
  ...Object.keys(SCRIPTS).flatMap((script) => HELP_FLAGS.map((flag) => [script as ScriptName, [flag]] as const)),
  ...MISTAKES.map(([script, args]) => [script, args] as const),
];

describe('every script’s command line', () => {
  let dir: string;
  let workLog: string;
  let dynamodb: Server;
  let dynamoDbRequests = 0;
  const ran = new Map<string, Ran>();
  const key = (script: ScriptName, args: readonly string[]): string => JSON.stringify([script, ...args]);

  beforeAll(
    async () => {
      dir = mkdtempSync(join(tmpdir(), 'todo-command-lines-'));
      workLog = join(dir, 'work.log');
      for (const program of ['npm', 'java', ...CHECK_PROGRAMS]) {
        writeFileSync(join(dir, program), `#!/bin/sh\necho "${program} $*" >> "${workLog}"\nexit 1\n`);
        chmodSync(join(dir, program), 0o755);
      }
      dynamodb = createServer((_, response) => {
        dynamoDbRequests += 1;
        response.writeHead(500).end();
      });
      await new Promise<void>((resolve) => dynamodb.listen(0, '127.0.0.1', resolve));
      const env = {
        PATH: `${dir}:${process.env.PATH ?? ''}`,
        DYNAMODB_ENDPOINT: `http://127.0.0.1:${(dynamodb.address() as AddressInfo).port}`,
        // start:dynamodb checks its port before anything else: not 3000, which may be in use here.
        PORT: String(await freePort()),
      };
      await inTurns(RUNS, AT_ONCE, async ([script, args]) => {
        ran.set(key(script, args), await runScript(script, args, env));
      });
    },
    Math.ceil(RUNS.length / AT_ONCE) * SCRIPT_WITHIN_MS,
  );
  afterAll(async () => {
    await new Promise((resolve) => dynamodb.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  function result(script: ScriptName, args: readonly string[]): Ran {
    const found = ran.get(key(script, args));
    if (found === undefined) throw new Error(`${key(script, args)} was not run`);
    return found;
  }

  it.each(Object.keys(SCRIPTS) as ScriptName[])(
    '`%s -- --help` prints its usage and what it takes, exits 0, and does nothing else',
    (script) => {
      const { usage, explains } = SCRIPTS[script];
      const help = result(script, ['--help']);
      expect(help).toMatchObject({ code: 0, stderr: '', overran: false });
      expect(help.stdout).toMatch(usage);
      for (const name of explains) expect(help.stdout).toContain(name);
    },
  );

  it.each(Object.keys(SCRIPTS) as ScriptName[])('`%s -- -h` is `--help`', (script) => {
    expect(result(script, ['-h'])).toEqual(result(script, ['--help']));
  });

  it.each(MISTAKES)('`%s -- %j` stops with one line and exit 2, before any work', (script, args, line) => {
    expect(result(script, args)).toEqual({
      code: 2,
      stdout: '',
      stderr: expect.stringMatching(
        new RegExp(`^${escape(line)}.*\\(${escape(SCRIPTS[script].tool)} -- --help\\)\\n$`),
      ),
      overran: false,
    });
    expect(result(script, args).stderr).not.toContain('    at ');
  });

  it('started no server, no DynamoDB Local and sent no request, for any of them', () => {
    expect(ran.size).toBe(RUNS.length);
    expect({ programs: readIfThere(workLog), dynamoDbRequests }).toEqual({ programs: '', dynamoDbRequests: 0 });
  });
});

/** `text` as a regular expression that matches it alone. */
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function readIfThere(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * What `npm test`, `npm run lint` and `npm run format` run when not asked for help: each command of their
 * list (scripts/checks.ts) in order, the user's arguments to jest last, and the first that fails stops
 * them with its exit status, as the chains of `&&` in package.json did. Each program is a stand-in that
 * logs its command line, and fails when FAIL names it.
 */
describe('npm test, npm run lint and npm run format at work', () => {
  let dir: string;
  let log: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'todo-checks-'));
    log = join(dir, 'ran.log');
    for (const program of CHECK_PROGRAMS) {
      writeFileSync(
        join(dir, program),
        `#!/bin/sh\necho "${program} $*" >> "${log}"\nif [ "$FAIL" = "${program}" ]; then exit 3; fi\n`,
      );
      chmodSync(join(dir, program), 0o755);
    }
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** How the script ended, and the command lines it ran, in order. */
  async function run(script: ScriptName, args: readonly string[], fail = '') {
    rmSync(log, { force: true });
    const { code, overran } = await runScript(script, args, { PATH: `${dir}:${process.env.PATH ?? ''}`, FAIL: fail });
    return {
      code,
      overran,
      ran: readIfThere(log)
        .split('\n')
        .filter((line) => line !== ''),
    };
  }

  const lines = (commands: readonly (readonly string[])[]) => commands.map((command) => command.join(' '));

  it(
    '`npm run lint` runs its commands in order',
    async () => {
      expect(await run('lint', [])).toEqual({ code: 0, overran: false, ran: lines(LINT) });
    },
    SCRIPT_WITHIN_MS,
  );

  it(
    '`npm run format` runs its commands in order',
    async () => {
      expect(await run('format', [])).toEqual({ code: 0, overran: false, ran: lines(FORMAT) });
    },
    SCRIPT_WITHIN_MS,
  );

  it(
    '`npm test` runs the typecheck, the lint, then jest with the user’s arguments, and package.json’s after them',
    async () => {
      const args = [
        'test/unit/http',
        '-t',
        'parses',
        '--selectProjects',
        'external',
        '--no-cache',
        '--select-projects',
        'e2e',
      ];
      expect(await run('test', args)).toEqual({
        code: 0,
        overran: false,
        ran: lines([...BEFORE_TESTS, ['jest', ...args, ...jestArguments()]]),
      });
    },
    SCRIPT_WITHIN_MS,
  );

  it(
    'stops at the first command that fails, with its exit status',
    async () => {
      const [first, second] = LINT;
      if (first === undefined || second === undefined) throw new Error('the lint has fewer than two commands');
      expect(await run('lint', [], second[0])).toEqual({ code: 3, overran: false, ran: lines([first, second]) });
    },
    SCRIPT_WITHIN_MS,
  );
});

/**
 * Redocly CLI prints a deprecation box on Node 20 at every start, which package.json's engines accept; the
 * lint runs it with scripts/quiet-redocly.mjs, which drops that one write (it says why).
 */
describe('the lint’s Redocly command', () => {
  /** Redocly loads and lints one small file in about 3 s idle; this allows for a busy 2-core machine. */
  const REDOCLY_WITHIN_MS = 60_000;
  const NOTICE = 'Node.js 20 support is ending';
  const redocly = LINT.find((command) => command.includes('node_modules/.bin/redocly'));
  if (redocly === undefined) throw new Error('the lint runs no Redocly');
  const [program, ...args] = redocly;
  const preload = args.indexOf('--import');
  const withoutPreload = args.filter((_, at) => at !== preload && at !== preload + 1);

  it(
    'prints Redocly’s report of openapi.yaml without the box, which Redocly alone prints on Node 20',
    async () => {
      const [quiet, alone] = await Promise.all([runCommand(program, [...args]), runCommand(program, withoutPreload)]);
      expect(quiet.code).toBe(0);
      expect(quiet.stderr).toContain('Woohoo! Your API description is valid.');
      expect(quiet.stderr).not.toContain(NOTICE);
      expect(alone.code).toBe(0);
      expect(alone.stderr.includes(NOTICE)).toBe(process.versions.node.split('.')[0] === '20');
    },
    REDOCLY_WITHIN_MS,
  );

  it(
    'still prints every problem Redocly finds, and fails',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'todo-redocly-'));
      try {
        const file = join(dir, 'openapi.yaml');
        writeFileSync(file, "openapi: 3.1.0\ninfo:\n  title: t\n  version: '1'\npaths: {}\n");
        // Redocly colours its report whenever FORCE_COLOR is set, even to 0, as runCommand sets it.
        const lint = await runCommand(program, [...args.slice(0, -1), file], { env: { NO_COLOR: '1' } });
        expect(lint.code).toBe(1);
        expect(lint.stdout).toMatch(/error +no-empty-servers +Servers must be present\./);
        expect(lint.stdout).toMatch(/error +info-license +/);
        expect(lint.stderr).toContain('Validation failed with 2 errors.');
        expect(lint.stderr).not.toContain(NOTICE);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    REDOCLY_WITHIN_MS,
  );

  it('drops only a write that holds the box’s title, and calls back as a write does', async () => {
    const source = `
      process.stderr.write('before\\n');
      process.stderr.write('  ${NOTICE}  \\n', () => process.stdout.write('dropped, called back\\n'));
      process.stderr.write(Buffer.from('a buffer\\n'));
      process.stderr.write('after\\n', 'utf8', () => process.stdout.write('written, called back\\n'));
    `;
    const ran = await runCommand(process.execPath, [...args.slice(preload, preload + 2), '-e', source]);
    expect(ran).toEqual({
      code: 0,
      stdout: 'dropped, called back\nwritten, called back\n',
      stderr: 'before\na buffer\nafter\n',
    });
  });
});

describe('the checks the scripts share', () => {
  const TOOL = 'npm run x';

  it('oneOf takes a choice as given, and names the closest when it is not one', () => {
    expect(oneOf('warm', ['bundle', 'warm'], 'section', TOOL)).toBe('warm');
    expect(() => oneOf('Warm', ['bundle', 'warm'], 'section', TOOL)).toThrow(
      new CommandLineError(
        'Unknown section "Warm" for npm run x: did you mean "warm"? Sections: bundle, warm (npm run x -- --help)',
      ),
    );
  });

  it.each([
    ['7', { min: 1, whole: true }, 7],
    ['0', { min: 0, whole: true }, 0],
    ['0.25', { min: 0, max: 1, whole: false }, 0.25],
    ['1', { min: 0, max: 1, whole: false }, 1],
  ])('numberOption reads "%s" within %j as %d', (given, rule, value) => {
    expect(numberOption(given, 'n', rule, TOOL)).toBe(value);
  });

  it.each([
    ['', { min: 0, whole: true }, 'a whole number, 0 or more'],
    [' 5', { min: 0, whole: true }, 'a whole number, 0 or more'],
    ['0x10', { min: 0, whole: true }, 'a whole number, 0 or more'],
    ['1e3', { min: 0, whole: true }, 'a whole number, 0 or more'],
    ['2.5', { min: 0, whole: true }, 'a whole number, 0 or more'],
    ['-1', { min: 0, whole: true }, 'a whole number, 0 or more'],
    ['0', { min: 1, whole: true }, 'a whole number, 1 or more'],
    ['1.5', { min: 0, max: 1, whole: false }, 'a number, from 0 to 1'],
    ['.5', { min: 0, max: 1, whole: false }, 'a number, from 0 to 1'],
  ])('numberOption refuses "%s" within %j, saying what it takes', (given, rule, takes) => {
    expect(() => numberOption(given, 'n', rule, TOOL)).toThrow(
      new CommandLineError(`--n must be ${takes}, not "${given}" (npm run x -- --help)`),
    );
  });

  it('noPositionals refuses the first argument that is not an option', () => {
    expect(() => {
      noPositionals([], TOOL);
    }).not.toThrow();
    expect(() => {
      noPositionals(['a', 'b'], TOOL);
    }).toThrow(
      new CommandLineError('Unexpected argument "a" for npm run x: it takes options only (npm run x -- --help)'),
    );
  });
});
