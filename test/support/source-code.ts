import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * The code of a source file without its comments: what the docs' checks read for the names the
 * code defines or uses (test/support/doc-names.ts) and for the lines of code they count
 * (test/support/doc-figures.ts). A comment is blanked to spaces, its line breaks kept, so every
 * line keeps its number.
 */

/** The files whose comments are `//` and `/* … *\/`: TypeScript and JavaScript. */
export const SCRIPT = /\.(?:[cm]?[jt]s)$/;

/** Tokens after which a slash divides; before any other token it starts a regular expression. */
const ENDS_OPERAND = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.Identifier,
  ts.SyntaxKind.PrivateIdentifier,
  ts.SyntaxKind.NumericLiteral,
  ts.SyntaxKind.BigIntLiteral,
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.RegularExpressionLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.CloseParenToken,
  ts.SyntaxKind.CloseBracketToken,
  ts.SyntaxKind.PlusPlusToken,
  ts.SyntaxKind.MinusMinusToken,
  ts.SyntaxKind.ThisKeyword,
  ts.SyntaxKind.SuperKeyword,
  ts.SyntaxKind.TrueKeyword,
  ts.SyntaxKind.FalseKeyword,
  ts.SyntaxKind.NullKeyword,
]);

const COMMENTS = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.SingleLineCommentTrivia,
  ts.SyntaxKind.MultiLineCommentTrivia,
  ts.SyntaxKind.ShebangTrivia,
]);

/** Every character of `text` from `start` to `end` as a space, but line breaks. */
function blank(text: string, start: number, end: number): string {
  return text.slice(0, start) + text.slice(start, end).replace(/[^\n]/g, ' ') + text.slice(end);
}

/**
 * A script without its comments. The scanner alone would take a regular expression's `//` or a
 * template's `}` for something else, so it is told, as the parser would tell it: a slash after an
 * operand divides, anywhere else it starts a regular expression; a `}` at the depth where a
 * template's `${` opened continues the template. Parsing every file would be as exact and slower.
 */
function scriptCode(text: string): string {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const comments: [number, number][] = [];
  const templates: number[] = [];
  let depth = 0;
  let previous = ts.SyntaxKind.Unknown;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (COMMENTS.has(kind)) {
      comments.push([scanner.getTokenStart(), scanner.getTokenEnd()]);
      continue;
    }
    if (kind === ts.SyntaxKind.WhitespaceTrivia || kind === ts.SyntaxKind.NewLineTrivia) continue;
    if (kind === ts.SyntaxKind.OpenBraceToken) depth++;
    else if (kind === ts.SyntaxKind.CloseBraceToken) {
      if (templates.at(-1) === depth) {
        kind = scanner.reScanTemplateToken(false);
        if (kind === ts.SyntaxKind.TemplateTail) templates.pop();
      } else depth--;
    } else if (
      (kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) &&
      !ENDS_OPERAND.has(previous)
    ) {
      kind = scanner.reScanSlashToken();
    }
    if (kind === ts.SyntaxKind.TemplateHead) templates.push(depth);
    previous = kind;
  }
  return comments.reduceRight((code, [start, end]) => blank(code, start, end), text);
}

/** A YAML file or a shell script without its comments: from a `#` that starts a line or follows a space. */
function hashCode(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/(^|\s)#(?!!).*$/, '$1'))
    .join('\n');
}

/** A file's text without its comments, as its kind writes them (JSON has none). */
export function withoutComments(path: string, text: string): string {
  if (SCRIPT.test(path)) return scriptCode(text);
  if (/\.ya?ml$|^\.ci\/run$/.test(path)) return hashCode(text);
  return text;
}

/** Files read and stripped once a run: the names, the constants and the line counts all read them. */
const stripped = new Map<string, string>();

/** A file of the repository at `root` without its comments. */
export function codeOf(root: string, file: string): string {
  const path = join(root, file);
  let code = stripped.get(path);
  if (code === undefined) {
    code = withoutComments(file, readFileSync(path, 'utf8'));
    stripped.set(path, code);
  }
  return code;
}

/**
 * The lines of code of a script without its comments (`withoutComments`): the lines that hold code,
 * not those that are blank or only a comment. A budget or a figure counts these, so an explanation
 * never costs a line.
 */
export function linesOfCode(code: string): number {
  return code.split('\n').filter((line) => line.trim() !== '').length;
}
