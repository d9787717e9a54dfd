import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '../../harness/project';
import { repositoryTree } from '../support/doc-links';
import { brokenNames, codeNamesIn, vocabularyOf, type Vocabulary } from '../support/doc-names';

/** README.md and every doc of docs/: what a reader reads as the project's word. */
function docs(files: readonly string[]): string[] {
  return files.filter((file) => file === 'README.md' || /^docs\/[^/]+\.md$/.test(file));
}

/** The code names the docs give are the code's, and their commands are package.json's (test/support/doc-names.ts). */
describe('the names in the docs', () => {
  it('are all in the code: every code name in a code span, every npm script, every bench section', () => {
    const { files } = repositoryTree(PROJECT_ROOT);
    const vocabulary = vocabularyOf(PROJECT_ROOT, files);
    const broken = docs(files).flatMap((path) =>
      brokenNames({ path, text: readFileSync(join(PROJECT_ROOT, path), 'utf8') }, vocabulary),
    );
    expect(broken).toEqual([]);
  });
});

/** A tree's vocabulary of a few names, for showing that the check can fail. */
const VOCABULARY: Vocabulary = {
  words: new Set(['parseTodoId', 'TodoStore', 'MAX_BODY_BYTES', 'CommitWatch', 'superseded', 'httpHandler', 'Deleted']),
  scripts: new Set(['start', 'test', 'bench', 'start:dynamodb']),
  benchSections: new Set(['warm', 'coldInit']),
};

const doc = (text: string) => ({ path: 'docs/x.md', text });

describe('the names check (it can fail)', () => {
  it('finds a made-up camelCase, PascalCase or SCREAMING_CASE name, called or dotted too', () => {
    const text = [
      'The id goes through `parseTodoId`, the store is a `TodoStore`, the limit `MAX_BODY_BYTES`.',
      'It looks with `lookAtQueueMadeUp`, sizes with `sizeListMadeUp()`, keeps `MadeUpStore` and `MADE_UP_LIMIT`.',
      'Calls `httpHandler()`, asks `CommitWatch.superseded` and `CommitWatch.madeUpMethod`; the body `Deleted`.',
    ].join('\n');
    expect(brokenNames(doc(text), VOCABULARY)).toEqual([
      'docs/x.md:2: `lookAtQueueMadeUp` names lookAtQueueMadeUp, which the code does not',
      'docs/x.md:2: `sizeListMadeUp()` names sizeListMadeUp, which the code does not',
      'docs/x.md:2: `MadeUpStore` names MadeUpStore, which the code does not',
      'docs/x.md:2: `MADE_UP_LIMIT` names MADE_UP_LIMIT, which the code does not',
      'docs/x.md:3: `CommitWatch.madeUpMethod` names madeUpMethod, which the code does not',
    ]);
  });

  it('takes no header, JSON, status, command, option, value, path or English word for a code name', () => {
    for (const span of [
      'If-Match',
      'Idempotent-Replayed: true',
      '{"id":1,"title":"a"}',
      '{"error":"Todo not found"}',
      '404',
      'npm run bench -- scale',
      '--param=alarms=off',
      'W/"…"',
      '<kind> <who>',
      'lib/madeUp.ts',
      'madeUp.ts',
      'memory',
      'endpoint_url',
      'todo-api-dev-getTodo',
      '/todos/{id}',
      'application/json',
      '*',
      'N',
    ]) {
      expect([span, codeNamesIn(span)]).toEqual([span, []]);
    }
    expect(codeNamesIn('requestContext.http.method')).toEqual(['requestContext', 'http', 'method']);
    expect(codeNamesIn('nodejs22.x')).toEqual([]);
  });

  it('reads code blocks and prose for npm scripts and bench sections, and finds those package.json lacks', () => {
    const text = [
      '```sh',
      'npm start && npm test',
      'npm run start:dynamodb   # and npm run madeUpScript',
      'npm run bench -- warm coldInit --save',
      'npm run bench -- madeUpSection',
      '```',
      "`npm run --silent nope`, npm run dev's reload, `npm run bench -- <section>`, what npm runs by name.",
    ].join('\n');
    expect(brokenNames(doc(text), VOCABULARY)).toEqual([
      'docs/x.md:3: npm script "madeUpScript" is not in package.json',
      'docs/x.md:5: bench section "madeUpSection" is not in bench/results.json',
      'docs/x.md:7: npm script "nope" is not in package.json',
      'docs/x.md:7: npm script "dev" is not in package.json',
    ]);
  });

  it("takes the code's words without its comments, and the scripts and bench sections from their files", () => {
    const root = mkdtempSync(join(tmpdir(), 'docs-names-'));
    try {
      const files: Record<string, string> = {
        'package.json': JSON.stringify({ scripts: { start: 'x', 'test:unit': 'y' } }),
        'bench/results.json': JSON.stringify({ sections: { warm: {}, fleet: {} }, note: 'resultsOnlyName' }),
        'lib/a.ts': "// oldName was renamed\nexport const newName = 'ConditionalCheckFailed'; /* OLD_LIMIT */\n",
        'serverless.yml': 'provider:\n  timeout: 10 # yamlCommentName\nparams:\n  default:\n    throttleRate: 50\n',
        'docs/a.md': '`markdownOnlyName`\n',
      };
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(dirname(join(root, file)), { recursive: true });
        writeFileSync(join(root, file), text);
      }
      const vocabulary = vocabularyOf(root, Object.keys(files));
      expect(
        ['newName', 'ConditionalCheckFailed', 'throttleRate', 'timeout'].map((w) => vocabulary.words.has(w)),
      ).toEqual([true, true, true, true]);
      for (const word of ['oldName', 'OLD_LIMIT', 'yamlCommentName', 'resultsOnlyName', 'markdownOnlyName']) {
        expect([word, vocabulary.words.has(word)]).toEqual([word, false]);
      }
      expect([...vocabulary.scripts]).toEqual(['start', 'test:unit']);
      expect([...vocabulary.benchSections]).toEqual(['warm', 'fleet']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
