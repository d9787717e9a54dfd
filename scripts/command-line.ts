/**
 * The command lines of the project's own tools (`npm run smoke`, `npm run info`, `npm run logs`):
 * Node's parseArgs, plus what it lacks for a person typing. `--help` and `-h` ask for the tool's
 * usage text, where parseArgs would refuse them as unknown, advising `-- "--help"`; and an unknown
 * option is answered with the closest known one, as a mistyped function name is (`didYouMean`).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closest } from 'fastest-levenshtein';

type Options = NonNullable<ParseArgsConfig['options']>;

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
    throw new CommandLineError(`Unknown option "${unknown.rawName}" for ${tool}: ${hint} (${tool} -- --help)`);
  }
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true });
  } catch (error) {
    // parseArgs' own messages (a string option without its value, a value given to a switch)
    // are one line each; its advice about "--" is not for this command line.
    const message = error instanceof Error ? error.message : String(error);
    throw new CommandLineError(`${message.split('\n')[0] ?? message} (${tool} -- --help)`);
  }
}
