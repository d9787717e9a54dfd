import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join, normalize } from 'node:path';
import ts from 'typescript';

/**
 * What the docs and the code cite must be in the repository (docs/contributing.md, "Conventions"):
 * a relative link in a markdown file, the `#anchor` of one, and a repository file named in the
 * docs or in a code comment (`lib/http.ts`, docs/spec.md). test/unit/docs-links.test.ts runs this
 * over the repository in `npm test`.
 *
 * What names a file:
 * - a word that starts with a top-level folder of the repository and a slash (`lib/http.ts`,
 *   smoke/cli.ts), in prose, a code span or a comment; or a markdown file's name (`README.md`);
 * - in a markdown code span also a file's name with a known extension (`queue-plan.ts`) or a
 *   folder's with its slash (`local-workflow/`): it resolves from the root, from the citing file's
 *   folder, or as the last parts of a path of the repository (`queue-plan.ts` is
 *   lib/dynamodb/queue-plan.ts), so it names a file that is there, wherever;
 * - with or without a position (`lib/input.ts:71:23`) or an anchor (`docs/spec.md#4-endpoints`).
 * A web address, a placeholder or a pattern (`events/<function>.json`, `lib/dynamodb/*.ts`), an
 * absolute path (`/todos/{id}`) and a media type (`application/json`) name no file.
 */

/** One citation that names nothing: `file:line: what is wrong`. */
export type Broken = string;

/** A file of the repository, by its path from the root, and its text. */
export interface Source {
  readonly path: string;
  readonly text: string;
}

/** What a check may look up in the tree: its files, whether a path exists, and a markdown file's text. */
export interface Tree {
  /** Every file, by its path from the root. */
  readonly files: readonly string[];
  exists(path: string): boolean;
  /** Paths the repository ignores (bench/latest.json, .esbuild/…): written by a command, cited as such. */
  ignored(path: string): boolean;
  read(path: string): string | undefined;
}

/**
 * The top-level folders of the repository: a word that starts with one of them and a slash names a
 * file in it (`lib/http.ts`), where `application/json` or `todo-api/local` names none.
 */
function topFolders(tree: Tree): Set<string> {
  return new Set(tree.files.filter((file) => file.includes('/')).map((file) => file.slice(0, file.indexOf('/'))));
}

/** Characters of a placeholder or a pattern, not of a path: `events/<function>.json`, `lib/dynamodb-*.ts`. */
const PATTERN = /[<>*{}$…|]/;

/** A path as cited, less a position or an anchor after it: `lib/input.ts:71:23`, `lib/http.ts(18,7)`, `README.md#start`. */
function withoutPosition(cited: string): string {
  return cited.replace(/(?::\d+)+$|\(\d+,\d+\)$|#[\w-]*$/, '');
}

/** The kinds of file the repository holds; `functions/getTodo.handler` names a function, not a file. */
const FILE_TYPES = new Set(['', '.cjs', '.http', '.js', '.json', '.md', '.mjs', '.ts', '.yaml', '.yml']);

/** The repository path a word names, if it names one: a top-level folder's file, or a markdown file. */
function citedPath(word: string, folders: Set<string>): string | undefined {
  const cited = withoutPosition(word.replace(/^\.\//, '').replace(/[.,:;!?]+$/, ''));
  if (PATTERN.test(cited) || !/^[\w.@/-]+$/.test(cited) || !FILE_TYPES.has(extname(cited))) return undefined;
  if ([...folders].some((folder) => cited.startsWith(`${folder}/`))) return cited;
  if (!cited.includes('/') && extname(cited) === '.md') return cited;
  return undefined;
}

/** Every word of a piece of prose that names a repository path, with the path. */
function pathsIn(prose: string, folders: Set<string>): string[] {
  return prose
    .split(/[\s`'"()[\],;]+/)
    .map((word) => citedPath(word, folders))
    .filter((path): path is string => path !== undefined);
}

/**
 * The path a whole code span names, if it names one the words of prose would not: a file's name
 * with a known extension (`queue-plan.ts`), a relative path (`local-workflow/ports.cjs`), a folder
 * with its slash (`operations/`). A span with a space is a command or a phrase, not a path.
 */
export function spanPath(span: string): string | undefined {
  const cited = withoutPosition(span.trim().replace(/^\.\//, ''));
  if (PATTERN.test(cited) || !/^[\w.@/-]+$/.test(cited) || cited.startsWith('/')) return undefined;
  if (cited.endsWith('/')) return /^[\w.@-]+(\/[\w.@-]+)*\/$/.test(cited) ? cited : undefined;
  return extname(cited) !== '' && FILE_TYPES.has(extname(cited)) ? cited : undefined;
}

/** Whether a path is the last parts of a path of the repository: `queue-plan.ts`, `operations/alarms.cjs`. */
function endsSomePath(tree: Tree, path: string): boolean {
  const tail = `/${path.replace(/\/$/, '')}`;
  return tree.files.some((file) => `/${file}`.endsWith(tail) || `/${file}`.includes(`${tail}/`));
}

/**
 * GitHub's anchor for a heading: lower case, without punctuation (backticks, colons, periods),
 * spaces as hyphens. A second heading of the same text gets `-1`, a third `-2`.
 */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** A markdown file's lines outside code blocks, numbered from 1: code in a block cites nothing. */
export function proseLines(markdown: string): { line: number; text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const marker = /^\s*(```|~~~)/.exec(text)?.[1];
    if (marker !== undefined && (fence === undefined || fence === marker)) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) lines.push({ line: index + 1, text });
  });
  return lines;
}

/** A cited path resolves from the repository's root, or else from the citing file's folder. */
function resolves(tree: Tree, from: string, path: string): boolean {
  const candidates = [normalize(path), normalize(join(dirname(from), path))];
  return (
    candidates.some((candidate) => tree.exists(candidate.replace(/\/$/, ''))) ||
    candidates.some((candidate) => tree.ignored(candidate))
  );
}

/** The code spans of a line of markdown, without their backticks. */
export function codeSpans(line: string): string[] {
  return [...line.matchAll(/(`+)(.+?)\1/g)].map(([, , code = '']) => code.trim());
}

/** The broken links, anchors and cited paths of one markdown file. */
export function brokenInMarkdown(source: Source, tree: Tree): Broken[] {
  const broken: Broken[] = [];
  const folders = topFolders(tree);
  for (const { line, text } of proseLines(source.text)) {
    const where = `${source.path}:${line}`;
    // Code spans cite paths; with them blanked out, what is left is prose and links.
    for (const code of codeSpans(text)) {
      const whole = spanPath(code);
      const paths = pathsIn(code, folders);
      if (whole !== undefined && !paths.includes(whole)) {
        // The tree's own paths first: `resolves` asks git about ignored ones, a process each.
        if (!endsSomePath(tree, whole) && !resolves(tree, source.path, whole)) {
          broken.push(`${where}: \`${whole}\` is not in the repository`);
        }
      }
      for (const path of paths) {
        if (!resolves(tree, source.path, path)) broken.push(`${where}: \`${path}\` is not in the repository`);
      }
    }
    const prose = text.replace(/(`+).+?\1/g, ' ');
    for (const [, target = ''] of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const problem = brokenLink(source, target, tree);
      if (problem !== undefined) broken.push(`${where}: ${problem}`);
    }
    for (const path of pathsIn(prose.replace(/\]\([^)]*\)/g, ' '), folders)) {
      if (!resolves(tree, source.path, path)) broken.push(`${where}: ${path} is not in the repository`);
    }
  }
  return broken;
}

/** What is wrong with a link from a markdown file, if anything: a web address is not checked. */
function brokenLink(from: Source, target: string, tree: Tree): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [pathPart = '', anchor] = target.split('#', 2);
  const path = pathPart === '' ? from.path : normalize(join(dirname(from.path), decodeURIComponent(pathPart)));
  if (path.startsWith('..')) return `link ${target} leaves the repository`;
  if (path !== from.path && !tree.exists(path.replace(/\/$/, ''))) {
    return `link ${target}: ${path} is not in the repository`;
  }
  if (anchor === undefined || extname(path) !== '.md') return undefined;
  const text = path === from.path ? from.text : (tree.read(path) ?? '');
  if (anchorsOf(text).has(anchor)) return undefined;
  return `link ${target}: ${path} has no heading #${anchor}`;
}

/**
 * The comments of a TypeScript or JavaScript file, each with the line it starts on: the trivia
 * before and after every token of the parsed file (a scanner alone misreads template literals
 * and regular expressions).
 */
function scriptComments(source: Source): { line: number; text: string }[] {
  const file = ts.createSourceFile(source.path, source.text, ts.ScriptTarget.Latest, true);
  const ranges = new Map<number, ts.CommentRange>();
  const visit = (node: ts.Node): void => {
    for (const range of [
      ...(ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? []),
      ...(ts.getTrailingCommentRanges(source.text, node.getEnd()) ?? []),
    ]) {
      ranges.set(range.pos, range);
    }
    node.getChildren(file).forEach(visit);
  };
  visit(file);
  return [...ranges.values()]
    .sort((a, b) => a.pos - b.pos)
    .map((range) => ({
      line: file.getLineAndCharacterOfPosition(range.pos).line + 1,
      text: source.text.slice(range.pos, range.end),
    }));
}

/** The comments of a YAML file or a shell script: from a `#` that starts a line or follows a space. */
function hashComments(source: Source): { line: number; text: string }[] {
  return source.text.split('\n').flatMap((text, index) => {
    const comment = /(?:^|\s)#(?!!)(.*)$/.exec(text)?.[1];
    return comment === undefined ? [] : [{ line: index + 1, text: comment }];
  });
}

/** The repository paths cited in a code file's comments that are not in the repository. */
export function brokenInComments(source: Source, tree: Tree): Broken[] {
  const folders = topFolders(tree);
  // Parsing every file takes seconds; a file that names no missing path anywhere has none in its comments.
  if (pathsIn(source.text, folders).every((path) => resolves(tree, source.path, path))) return [];
  const comments = /\.(?:[cm]?[jt]s)$/.test(source.path) ? scriptComments(source) : hashComments(source);
  return comments.flatMap(({ line, text }) =>
    pathsIn(text, folders)
      // A multi-line comment's path is reported at the comment's first line, good enough to find it.
      .filter((path) => !resolves(tree, source.path, path))
      .map((path) => `${source.path}:${line}: ${path} is not in the repository`),
  );
}

/** The files whose comments are read: code, configuration and scripts. */
const COMMENTED = /\.(?:[cm]?[jt]s|ya?ml)$|^\.ci\/run$/;
/** Files of another project (what `npm run starter` writes from starter/): test/unit/starter.test.ts checks them there. */
const ELSEWHERE = 'starter/';

/** The repository as git sees it: tracked files and new ones, without what it ignores. */
export function repositoryTree(root: string): { tree: Tree; files: string[] } {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((file) => file !== '' && existsSync(join(root, file)));
  const known = new Set(files);
  const folders = new Set(files.flatMap((file) => [...ancestors(file)]));
  const tree: Tree = {
    files,
    exists: (path) => known.has(path) || folders.has(path),
    ignored: (path) => {
      try {
        execFileSync('git', ['check-ignore', '--quiet', '--no-index', path], { cwd: root });
        return true;
      } catch {
        return false;
      }
    },
    read: (path) => (known.has(path) ? readFileSync(join(root, path), 'utf8') : undefined),
  };
  return { tree, files };
}

function* ancestors(file: string): Generator<string> {
  for (let folder = dirname(file); folder !== '.'; folder = dirname(folder)) yield folder;
}

/** Every broken citation in the repository at `root`. */
export function brokenCitations(root: string): Broken[] {
  const { tree, files } = repositoryTree(root);
  return files.flatMap((path) => {
    if (path.startsWith(ELSEWHERE)) return [];
    const source = () => ({ path, text: readFileSync(join(root, path), 'utf8') });
    if (path.endsWith('.md')) return brokenInMarkdown(source(), tree);
    if (COMMENTED.test(path)) return brokenInComments(source(), tree);
    return [];
  });
}
