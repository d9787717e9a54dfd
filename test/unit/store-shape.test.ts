import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import { PROJECT_ROOT } from '../../harness/project';
import * as CONDITIONS from '../../lib/dynamodb/conditions';
import { codeOf, linesOfCode } from '../support/source-code';

/**
 * What docs/design.md says of the DynamoDB store's shape, held to the code (issue 49): every loop in lib/ names its
 * bound, the store asserts its invariants where it relies on them, every condition it sends is named once in
 * lib/dynamodb/conditions.ts, and no function of it is longer than a reader can hold.
 */

/** The longest a function of the store may be, in lines of code (comments and blank lines not counted). */
const MAX_FUNCTION_LINES = 60;
/** The fewest invariants the store asserts in code, each by its own name (issue 49). */
const MIN_INVARIANTS = 5;

/** The TypeScript files under `dir` (relative to the project), recursively. */
function scripts(dir: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name).slice(PROJECT_ROOT.length + 1))
    .sort();
}

/** A file's syntax tree, parsed from its code without comments (so that a comment's example never counts). */
function parsed(file: string): ts.SourceFile {
  return ts.createSourceFile(file, codeOf(PROJECT_ROOT, file), ts.ScriptTarget.Latest, true);
}

/** `root` and every node under it, depth first. */
function nodes(root: ts.Node): ts.Node[] {
  const found: ts.Node[] = [];
  const visit = (node: ts.Node): void => {
    found.push(node);
    ts.forEachChild(node, visit);
  };
  visit(root);
  return found;
}

/** Text written in place: a string or a template. */
function isText(node: ts.Node): boolean {
  return ts.isStringLiteral(node) || ts.isTemplateExpression(node) || ts.isNoSubstitutionTemplateLiteral(node);
}

/** Where a node is, for a failure's message. */
function at(source: ts.SourceFile, node: ts.Node): string {
  return `${source.fileName}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
}

const STORE = scripts('lib/dynamodb');

describe("the DynamoDB store's shape", () => {
  it('has no loop in lib/ that ends only when something else stops it: no for (;;), no while (true)', () => {
    const unbounded = scripts('lib').flatMap((file) => {
      const source = parsed(file);
      return nodes(source)
        .filter(
          (node) =>
            (ts.isForStatement(node) && node.condition === undefined) ||
            ((ts.isWhileStatement(node) || ts.isDoStatement(node)) &&
              node.expression.kind === ts.SyntaxKind.TrueKeyword),
        )
        .map((node) => at(source, node));
    });
    expect(unbounded).toEqual([]);
  });

  it(`asserts at least ${MIN_INVARIANTS} invariants in code, each by a name of its own`, () => {
    const names = STORE.flatMap((file) =>
      nodes(parsed(file)).flatMap((node) => {
        if (!ts.isCallExpression(node) || node.expression.getText() !== 'invariant') return [];
        const [, name] = node.arguments;
        return name !== undefined && ts.isStringLiteral(name) ? [name.text] : [`(unnamed) ${node.getText()}`];
      }),
    );
    expect(names.filter((name) => name.startsWith('(unnamed)'))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThanOrEqual(MIN_INVARIANTS);
  });

  it('sends every condition by its name in lib/dynamodb/conditions.ts, never as text written where it is sent', () => {
    const inline = STORE.flatMap((file) => {
      const source = parsed(file);
      return nodes(source)
        .filter((node) => ts.isPropertyAssignment(node) && node.name.getText() === 'ConditionExpression')
        .filter((node) => nodes(node).some(isText))
        .map((node) => `${at(source, node)} ${node.getText()}`);
    });
    expect(inline).toEqual([]);
    // Each named condition is sent from somewhere in the store: none is kept for nothing.
    const code = STORE.filter((file) => !file.endsWith('conditions.ts'))
      .map((file) => codeOf(PROJECT_ROOT, file))
      .join('\n');
    expect(Object.keys(CONDITIONS).filter((name) => !new RegExp(`\\b${name}\\b`).test(code))).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines of code`, () => {
    const long = STORE.flatMap((file) => {
      const source = parsed(file);
      return nodes(source)
        .filter((node): node is ts.FunctionLikeDeclaration => ts.isFunctionLike(node) && 'body' in node)
        .filter((node) => node.body !== undefined && linesOfCode(node.getText()) > MAX_FUNCTION_LINES)
        .map((node) => `${at(source, node)} ${linesOfCode(node.getText())} lines`);
    });
    expect(long).toEqual([]);
  });
});
