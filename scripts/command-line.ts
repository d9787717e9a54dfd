/**
 * The command lines of the project's own tools (`npm run smoke`, `info`, `logs`, `bench`, `load`,
 * `simulate`, `dynamodb`, `start:dynamodb`): Node's parseArgs, plus what it lacks for a person
 * typing. `--help` and `-h` ask for the tool's usage text, where parseArgs would refuse them as
 * unknown, advising `-- "--help"`; and an unknown option, or a name that is not one of a list (a
 * bench section, a scenario), is answered with the closest known one, as a mistyped function name
 * is (`didYouMean`). The convention every tool keeps: help printed, exit 0, nothing else done; a
 * wrong command line is one line on stderr and exit 2, before any work, with no stack (`runTool`).
 *
 * This file imports nothing of the project's: test/system/info-url.test.ts runs aws-command.ts
 * with only this file beside it.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closest } from 'fastest-levenshtein';

/** The options a tool takes, as parseArgs describes them. */
export type Options = NonNullable<ParseArgsConfig['options']>;

/** What parseArgs makes of `args` with these options and positionals allowed. */
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true }>>;

/** A command line the tool cannot run: the one line that says why. */
export class CommandLineError extends Error {
  override readonly name = 'CommandLineError';
}

/** `did you mean "createTodo"?`: the one of `known` closest to `given`. */
export function didYouMean(given: string, known: readonly string[]): string {
  return `did you mean "${closest(given, [...known])}"?`;
}

/**
 * `args` read with `options`; `help` when they ask for the usage text. Throws a CommandLineError
 * for an option the tool does not take, or one without its value. `--help` wins over any mistake
 * beside it: who asks for help may not know the rest yet.
 */
export function parseCommandLine<const O extends Options>(
  args: readonly string[],
  options: O,
  tool: string,
): Parsed<O> | 'help' {
  const { tokens } = parseArgs({
    args: [...args],
    options: { ...options, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const given = tokens.filter((token) => token.kind === 'option');
  if (given.some((token) => token.name === 'help')) return 'help';
  const known = Object.keys(options).map((name) => `--${name}`);
  const unknown = given.find((token) => !(token.name in options));
  if (unknown !== undefined) {
    const hint =
      known.length === 0 ? 'it takes none' : `${didYouMean(unknown.rawName, known)} Options: ${known.join(', ')}`;
    throw new CommandLineError(withHelp(`Unknown option "${unknown.rawName}" for ${tool}: ${hint}`, tool));
  }
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true });
  } catch (error) {
    // parseArgs' own messages (a string option without its value, a value given to a switch)
    // are one line each; its advice about "--" is not for this command line.
    const message = error instanceof Error ? error.message : String(error);
    throw new CommandLineError(withHelp(message.split('\n')[0] ?? message, tool));
  }
}

/** `text`, then how to see what the tool takes: the end of every CommandLineError's line. */
function withHelp(text: string, tool: string): string {
  return `${text} (${tool} -- --help)`;
}

/**
 * `given` when it is one of `choices`; else a CommandLineError naming the closest, e.g.
 * `Unknown section "wram" for npm run bench: did you mean "warm"? Sections: …`. `what` is the
 * singular noun for a choice; its plural takes an s.
 */
export function oneOf<const C extends string>(given: string, choices: readonly C[], what: string, tool: string): C {
  const chosen = choices.find((choice) => choice === given);
  if (chosen !== undefined) return chosen;
  // Some choices hold commas themselves (the simulator's "PUT, keyed"): a comma would not separate them.
  const separator = choices.some((choice) => choice.includes(',')) ? '; ' : ', ';
  const plural = `${what.charAt(0).toUpperCase()}${what.slice(1)}s`;
  throw new CommandLineError(
    withHelp(
      `Unknown ${what} "${given}" for ${tool}: ${didYouMean(given, choices)} ${plural}: ${choices.join(separator)}`,
      tool,
    ),
  );
}

/** What a number option accepts: its bounds, and whether a fraction is one. */
export interface NumberRule {
  readonly min: number;
  readonly max?: number;
  readonly whole: boolean;
}

/**
 * `--option`'s value as a number within `rule`; a CommandLineError when it is not one. Digits
 * only, with a decimal point where a fraction is allowed: Number() would also take "", " 5",
 * "0x10" and "1e3", none of which a person means as a count.
 */
export function numberOption(given: string, option: string, rule: NumberRule, tool: string): number {
  const form = rule.whole ? /^\d+$/ : /^\d+(?:\.\d+)?$/;
  const value = Number(given);
  const max = rule.max ?? Number.MAX_SAFE_INTEGER;
  if (form.test(given) && value >= rule.min && value <= max) return value;
  const kind = rule.whole ? 'a whole number' : 'a number';
  const range = rule.max === undefined ? `${rule.min} or more` : `from ${rule.min} to ${rule.max}`;
  throw new CommandLineError(withHelp(`--${option} must be ${kind}, ${range}, not "${given}"`, tool));
}

/** Throws a CommandLineError for a tool that takes options only, when something else was typed. */
export function noPositionals(positionals: readonly string[], tool: string): void {
  const [first] = positionals;
  if (first === undefined) return;
  throw new CommandLineError(withHelp(`Unexpected argument "${first}" for ${tool}: it takes options only`, tool));
}

/** Prints a failure that is not the command line's: a tool's error, with its stack to find it by. */
function printWhole(error: unknown): void {
  console.error(error);
}

/**
 * Runs a tool's `main`, which resolves with its exit status (or sets process.exitCode itself and
 * resolves with nothing). A CommandLineError ends the process with its one line and status 2;
 * any other failure is printed by `printFailure` and ends it with status 1. A main that leaves
 * a server running resolves and the process stays up; a failure ends it even then.
 */
export function runTool(
  main: () => Promise<number | undefined>,
  printFailure: (error: unknown) => void = printWhole,
): void {
  main().then(
    (code) => {
      if (code !== undefined) process.exitCode = code;
    },
    (error: unknown) => {
      if (error instanceof CommandLineError) {
        process.stderr.write(`${error.message}\n`);
        process.exit(2);
      }
      printFailure(error);
      process.exit(1);
    },
  );
}
