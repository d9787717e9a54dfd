import { dirname, normalize } from 'node:path';
import type { Broken, Source } from './doc-links';

/**
 * A doc's "Project layout" is the tree as it is: test/unit/docs-layout.test.ts holds docs/tour.md's
 * and docs/design.md's to the repository in `npm test`, and README.md's list of docs to docs/.
 *
 * A layout is the first code block under a `## Project layout` heading, one entry a line: a name
 * indented under its folder's (`lib/`, then `  dynamodb/`, then `    store.ts`), then its
 * description; a description may run on over lines indented to where it started, and may name
 * more files (`https.ts`, `queue-plan.ts`, `redocly.yaml`): each is a file of the entry's folder
 * (or the entry's own, for a folder), or else of the root. Every name a layout gives must be in
 * the repository, and every file of the folders it must cover (`lib/`, `functions/`, the docs in
 * `docs/`) must be named, so a new file fails here until the layout says what it is.
 */

/** What a layout must name: every file in these folders. */
export const COVERED = /^(?:lib|functions)\/|^docs\/[^/]+\.md$/;

/** A file's name with an extension, as a description names one: `queue-plan.ts`, `.spectral.yaml`. */
const FILE_NAME = /(?<![\w/.-])((?:\.?[\w-]+)(?:\.[\w-]+)*\.(?:ts|cjs|mjs|js|json|md|ya?ml|http))(?![\w/-])/g;

/** The first code block of a doc's section with this heading, and the line it starts on; undefined without one. */
export function sectionBlock(markdown: string, heading: string): { line: number; lines: string[] } | undefined {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => new RegExp(`^#{1,6}\\s+${heading}\\s*$`).test(line));
  if (start < 0) return undefined;
  const open = lines.findIndex((line, index) => index > start && /^\s*```/.test(line));
  const nextHeading = lines.findIndex((line, index) => index > start && /^#{1,6}\s/.test(line));
  if (open < 0 || (nextHeading >= 0 && nextHeading < open)) return undefined;
  const close = lines.findIndex((line, index) => index > open && /^\s*```/.test(line));
  return { line: open + 2, lines: lines.slice(open + 1, close < 0 ? undefined : close) };
}

/** One name a layout gives: where, and the path it names (a folder's ends with a slash). */
interface Named {
  readonly line: number;
  readonly path: string;
  /** A name in a description, which may name a file of the root instead of the entry's folder. */
  readonly orAtRoot?: string;
}

/** Every name a layout block gives, each with its line. */
export function layoutNames(block: { line: number; lines: readonly string[] }): Named[] {
  const named: Named[] = [];
  const folders: { indent: number; path: string }[] = [];
  let described = { column: 0, folder: '' };
  block.lines.forEach((text, index) => {
    const line = block.line + index;
    if (text.trim() === '') return;
    const indent = text.length - text.trimStart().length;
    let description = text;
    if (named.length === 0 || indent < described.column) {
      const entry = /^(\s*)(\S+)(\s+|$)/.exec(text);
      const name = entry?.[2] ?? '';
      while ((folders.at(-1)?.indent ?? -1) >= indent) folders.pop();
      const path = `${folders.at(-1)?.path ?? ''}${name}`;
      named.push({ line, path });
      if (name.endsWith('/')) folders.push({ indent, path });
      const column = entry?.[0].length ?? text.length;
      // An entry without a description has no continuation: the next line is an entry.
      const continues = column > indent + name.length;
      described = { column: continues ? column : Infinity, folder: name.endsWith('/') ? path : dirname(path) };
      description = text.slice(column);
    }
    for (const [, file = ''] of description.matchAll(FILE_NAME)) {
      const folder = described.folder === '.' ? '' : described.folder.replace(/\/?$/, '/');
      named.push({ line, path: normalize(`${folder}${file}`), orAtRoot: file });
    }
  });
  return named;
}

/**
 * What is wrong with a doc's layout: a name not in the repository, a file it must name and does
 * not. `exists` answers for files and folders alike.
 */
export function brokenLayout(source: Source, files: readonly string[], exists: (path: string) => boolean): Broken[] {
  const block = sectionBlock(source.text, 'Project layout');
  if (block === undefined) return [`${source.path}: no "## Project layout" with its code block`];
  const broken: Broken[] = [];
  const listed = new Set<string>();
  for (const { line, path, orAtRoot } of layoutNames(block)) {
    const found = [path.replace(/\/$/, ''), orAtRoot].find((candidate) => candidate !== undefined && exists(candidate));
    if (found === undefined) broken.push(`${source.path}:${line}: ${path} is not in the repository`);
    else listed.add(found);
  }
  for (const file of files) {
    if (COVERED.test(file) && !listed.has(file)) {
      broken.push(`${source.path}:${block.line}: the layout does not name ${file}`);
    }
  }
  return broken;
}

/** What README.md's "Docs" list lacks: a link to every doc of docs/. */
export function brokenDocsList(readme: Source, files: readonly string[]): Broken[] {
  const heading = /^## Docs[ \t]*$/m.exec(readme.text);
  if (heading === null) return [`${readme.path}: no "## Docs" list`];
  const rest = readme.text.slice(heading.index + heading[0].length);
  const end = rest.search(/^#{1,2}\s/m);
  const list = end < 0 ? rest : rest.slice(0, end);
  const linked = new Set([...list.matchAll(/\]\(\.?\/?(docs\/[^)#\s]+\.md)/g)].map(([, path = '']) => path));
  return files
    .filter((file) => /^docs\/[^/]+\.md$/.test(file) && !linked.has(file))
    .map((file) => `${readme.path}: the "Docs" list does not link ${file}`);
}
