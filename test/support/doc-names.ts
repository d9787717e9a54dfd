import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { codeSpans, proseLines, spanPath, type Broken, type Source } from './doc-links';
import { codeOf } from './source-code';

/**
 * The code names the docs write must be the code's: test/unit/docs-names.test.ts runs this over
 * README.md and docs/ in `npm test` (the paths the docs name are test/support/doc-links.ts's).
 *
 * What is checked, and what is not:
 * - **A code span that is a code name** must be a word the tree's code uses. A code name is one
 *   word (`parseTodoId`, `TodoStore`, `MAX_BODY_BYTES`, `Todo`), a call (`httpHandler()`) or a dotted
 *   name (`CommitWatch.superseded`, `requestContext.http.method`), any part of which has a capital
 *   letter: camelCase, PascalCase and SCREAMING_CASE are checked, and every part of a dotted name
 *   with one of them. The tree's code is every TypeScript and JavaScript file, YAML file
 *   (serverless.yml, openapi.yaml), JSON file (package.json, the sample events) and .ci/run, less
 *   its comments, less the lockfile, the bench's figures and these checks' own tests (whose
 *   made-up names name nothing): a word there is a name the code defines or uses, a string's
 *   words included (`ConditionalCheckFailed`, `Deleted`).
 * - **Not code names, never checked:** a span with a space (a command, a phrase:
 *   `npm run bench -- scale`, `<kind> <who>`), a path (doc-links.ts checks those), a name all in
 *   lower case (`memory`, `pk`, `next`: as often English as code; `endpoint_url`, a setting of
 *   AWS's), and anything with other characters: headers (`If-Match`), JSON (`{"id":1}`), statuses
 *   (`404`), options (`--param=alarms=off`), values (`W/"…"`).
 * - **So a name of someone else's** in capitals (npm's EBADENGINE) is written without backticks,
 *   or it fails here as a name the code lacks: the check stays strict for the code's own.
 * - **A command** anywhere in a doc, code blocks included: `npm run <script>` names a script of
 *   package.json (`npm start` and `npm test` too), and `npm run bench -- <section> …` sections of
 *   bench/results.json, the sections the bench measures.
 */

/** What the docs may name: the words of the tree's code, npm's scripts and the bench's sections. */
export interface Vocabulary {
  readonly words: ReadonlySet<string>;
  readonly scripts: ReadonlySet<string>;
  readonly benchSections: ReadonlySet<string>;
}

/** One name of the code. */
const WORD = /[A-Za-z_$][\w$]*/g;

/** A name, a call of one, or a dotted one: `parseTodoId`, `httpHandler()`, `CommitWatch.superseded`. */
const NAME = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;

/** A part of a name that is surely the code's, not English: two characters or more, one of them a capital. */
function codeLike(part: string): boolean {
  return part.length > 1 && /[A-Z]/.test(part);
}

/** The code names a code span asks to exist: none when it is not a code name (the rules above). */
export function codeNamesIn(span: string): string[] {
  const name = span.trim().replace(/\(\)$/, '');
  if (!NAME.test(name) || spanPath(name) !== undefined) return [];
  const parts = name.split('.');
  if (!parts.some(codeLike)) return [];
  return parts;
}

/** `npm run <script>`, `npm start`, `npm test`: the script each command of a text runs. */
function scriptsIn(text: string): string[] {
  const named = [...text.matchAll(/\bnpm run(?:\s+--?[\w-]+)*\s+([a-z][\w:.-]*[\w])/g)].map(([, name = '']) => name);
  const builtIn = [...text.matchAll(/\bnpm (start|test)\b/g)].map(([, name = '']) => name);
  return [...named, ...builtIn];
}

/** The sections a `npm run bench -- <section> …` names, up to its first option. */
function benchSectionsIn(text: string): string[] {
  return [...text.matchAll(/\bnpm run bench --((?:\s+[A-Za-z]\w*)+)/g)].flatMap(([, names = '']) =>
    names.trim().split(/\s+/),
  );
}

/** Every name a markdown file gives that the vocabulary lacks: `file:line: what is wrong`. */
export function brokenNames(source: Source, vocabulary: Vocabulary): Broken[] {
  const broken: Broken[] = [];
  const lines = source.text.split('\n');
  lines.forEach((text, index) => {
    const where = `${source.path}:${index + 1}`;
    for (const script of scriptsIn(text)) {
      if (!vocabulary.scripts.has(script)) broken.push(`${where}: npm script "${script}" is not in package.json`);
    }
    for (const section of benchSectionsIn(text)) {
      if (!vocabulary.benchSections.has(section)) {
        broken.push(`${where}: bench section "${section}" is not in bench/results.json`);
      }
    }
  });
  for (const { line, text } of proseLines(source.text)) {
    for (const span of codeSpans(text)) {
      const missing = codeNamesIn(span).filter((name) => !vocabulary.words.has(name));
      if (missing.length > 0) {
        broken.push(`${source.path}:${line}: \`${span}\` names ${missing.join(', ')}, which the code does not`);
      }
    }
  }
  return broken;
}

/** The files whose words are the code's (see the rules above). */
const CODE_FILES = /\.(?:[cm]?[jt]s|json|ya?ml|http)$|^\.ci\/run$/;
const NOT_CODE = /^package-lock\.json$|^bench\/results\.json$|^test\/unit\/docs-[\w-]+\.test\.ts$/;

/** The vocabulary of the repository at `root`, from its `files`. */
export function vocabularyOf(root: string, files: readonly string[]): Vocabulary {
  const words = new Set<string>();
  for (const file of files) {
    if (!CODE_FILES.test(file) || NOT_CODE.test(file)) continue;
    for (const [word] of codeOf(root, file).matchAll(WORD)) words.add(word);
  }
  const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const results = JSON.parse(readFileSync(join(root, 'bench/results.json'), 'utf8')) as {
    sections: Record<string, unknown>;
  };
  return {
    words,
    scripts: new Set(Object.keys(packageJson.scripts)),
    benchSections: new Set(Object.keys(results.sections)),
  };
}
