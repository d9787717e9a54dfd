import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '../../harness/project';
import { repositoryTree } from '../support/doc-links';
import {
  brokenFigures,
  brokenLineCounts,
  constantsOf,
  figuresIn,
  lineCounter,
  PLATFORM_RULES,
  withLineCounts,
  type Constant,
} from '../support/doc-figures';
import { vocabularyOf } from '../support/doc-names';
import { linesOfCode, withoutComments } from '../support/source-code';

/** README.md and every doc of docs/. */
function docs(files: readonly string[]): string[] {
  return files.filter((file) => file === 'README.md' || /^docs\/[^/]+\.md$/.test(file));
}

/** Every figure in the docs is generated, the code's, or traced to bench/results.json (test/support/doc-figures.ts). */
describe('the figures in the docs', () => {
  const { files } = repositoryTree(PROJECT_ROOT);
  const read = (path: string) => ({ path, text: readFileSync(join(PROJECT_ROOT, path), 'utf8') });

  it('count lines only in generated tables, each as the code has them', () => {
    const count = lineCounter(PROJECT_ROOT);
    // WRITE_DOC_FIGURES=1 writes the counts the code has into the docs first (`npx prettier --write` them after):
    // `WRITE_DOC_FIGURES=1 npx jest --selectProjects unit -- test/unit/docs-figures.test.ts`.
    if (process.env.WRITE_DOC_FIGURES === '1') {
      for (const path of docs(files)) writeFileSync(join(PROJECT_ROOT, path), withLineCounts(read(path), files, count));
    }
    expect(docs(files).flatMap((path) => brokenLineCounts(read(path), files, count))).toEqual([]);
  });

  it('are each a constant of the code, or in a section that names bench/results.json and the section it is from', () => {
    const constants = constantsOf(PROJECT_ROOT, files);
    const { benchSections } = vocabularyOf(PROJECT_ROOT, files);
    expect(docs(files).flatMap((path) => brokenFigures(read(path), constants, benchSections))).toEqual([]);
  });
});

describe('the figures check (it can fail)', () => {
  const CONSTANTS = new Map<string, Constant[]>([
    ['MAX_BODY_BYTES', [{ value: 65_536, unit: { dimension: 'size', scales: [1] } }]],
    ['KEY_LIFETIME_MS', [{ value: 86_400_000, unit: { dimension: 'time', scales: [1] } }]],
    ['CLIENT_ERROR_RATE', [{ value: 0.1, unit: { dimension: 'share', scales: [100] } }]],
    ['throttleRate', [{ value: 50, unit: { dimension: 'rate', scales: [1] } }]],
  ]);
  const BENCH = new Set(['fleet', 'startup']);
  const doc = (text: string) => ({ path: 'docs/x.md', text });

  it('reads figures with their units, and not plurals, versions, commits or code', () => {
    const found = figuresIn(
      'p99 229 ms, 6.3 s, 65,536 bytes, 64 KiB, 3.7–11.4 s, 25/s, 90 %, 1 read unit, 50 requests a second, ' +
        '283 POSTs/s, 3,000 read units/s, 716 lines; ' +
        'not the 503s, Node 20, 3a88fd8, 10^4 records, `12 ms` or [x](a-10-s.md)',
    );
    expect(found.map(({ text, value, range, unit }) => [text, value, range, unit.dimension])).toEqual([
      ['229 ms', 229, false, 'time'],
      ['6.3 s', 6.3, false, 'time'],
      ['65,536 bytes', 65_536, false, 'size'],
      ['64 KiB', 64, false, 'size'],
      ['3.7–11.4 s', 3.7, true, 'time'],
      ['25/s', 25, false, 'rate'],
      ['90 %', 90, false, 'share'],
      ['1 read unit', 1, false, 'units'],
      ['50 requests a second', 50, false, 'rate'],
      ['283 POSTs/s', 283, false, 'rate'],
      ['3,000 read units/s', 3_000, false, 'units'],
      ['716 lines', 716, false, 'lines'],
    ]);
  });

  it('finds a measured figure with no source, and takes one from a section that traces it', () => {
    const text = [
      '# Page',
      '## Start',
      'It answers its first request after 2.4 s.',
      '## Figures',
      'From `npm run bench -- startup`, kept in bench/results.json: 2.4 s.',
      '### Under it',
      'p99 229 ms.',
      '## Elsewhere',
      'From bench/results.json, section `madeUpSection`: 6.3 s.',
    ].join('\n');
    expect(brokenFigures(doc(text), CONSTANTS, BENCH)).toEqual([
      'docs/x.md:3: "2.4 s" has no source: not a constant of the code, and no section above it names bench/results.json and its section',
      'docs/x.md:9: "6.3 s" has no source: not a constant of the code, and no section above it names bench/results.json and its section',
    ]);
  });

  it("takes a rule that is a constant's value, and finds one that is not, beside its name or not", () => {
    const text = [
      'A body of at most 65,536 bytes (64 KiB), a key kept 24 hours, 50 requests a second (`throttleRate`), 10 % 4xx.',
      'A body of at most 65,535 bytes, a key kept 25 hours, 60 requests a second (`throttleRate`), 11 % 4xx.',
      'A body of at most 64 KB (`KEY_LIFETIME_MS`).',
    ].join('\n');
    expect(brokenFigures(doc(text), CONSTANTS, BENCH)).toEqual([
      'docs/x.md:2: "65,535 bytes" has no source: not a constant of the code, and no section above it names bench/results.json and its section',
      'docs/x.md:2: "25 hours" has no source: not a constant of the code, and no section above it names bench/results.json and its section',
      'docs/x.md:2: "60 requests a second" is beside `throttleRate`, which is 50',
      'docs/x.md:2: "11 %" has no source: not a constant of the code, and no section above it names bench/results.json and its section',
      'docs/x.md:3: "64 KB" is beside `KEY_LIFETIME_MS`, which is 86,400,000',
    ]);
  });

  it("takes the platform's rules it lists, and a unitless constant's value named beside a figure", () => {
    const constants = new Map([...CONSTANTS, ['CPU_MS_PER_REQUEST', [{ value: 3.5, unit: undefined }]]]);
    const text = [
      'DynamoDB takes a signed request for 15 minutes; each request costs 3.5 ms (`CPU_MS_PER_REQUEST`).',
      'DynamoDB takes a signed request for 16 minutes; each request costs 4 ms (`CPU_MS_PER_REQUEST`).',
    ].join('\n');
    expect(PLATFORM_RULES.map(({ says }) => says)).toContain('15 minutes');
    expect(brokenFigures(doc(text), constants, BENCH)).toEqual([
      'docs/x.md:2: "16 minutes" has no source: not a constant of the code, and no section above it names bench/results.json and its section',
      'docs/x.md:2: "4 ms" is beside `CPU_MS_PER_REQUEST`, which is 3.5',
    ]);
  });

  it('finds a line count outside a generated table, even in a traced section', () => {
    const text = '## Figures\nbench/results.json, `fleet`: lib/todos.ts has 216 lines.\n';
    expect(brokenFigures(doc(text), CONSTANTS, BENCH)).toEqual([
      'docs/x.md:2: "216 lines" is a line count outside a generated region (<!-- lines of code -->)',
    ]);
  });

  it("holds a generated table's counts to the code's, row by row and in total", () => {
    const files = ['functions/a.ts', 'functions/b.ts', 'lib/x.ts', 'lib/dynamodb/y.ts', 'lib/z.json', 'docs/a.md'];
    const lines: Record<string, number> = {
      'functions/a.ts': 10,
      'functions/b.ts': 5,
      'lib/x.ts': 1_000,
      'lib/dynamodb/y.ts': 300,
    };
    const count = (file: string) => lines[file] ?? 0;
    const table = (rows: string[]) =>
      doc(
        [
          '<!-- lines of code -->',
          '| Files | Lines | What |',
          '| --- | ---: | --- |',
          ...rows,
          '<!-- /lines of code -->',
        ].join('\n'),
      );
    const right = [
      '| `functions/*.ts` | 15 | handlers |',
      '| `lib/x.ts`, `lib/dynamodb/` | 1,300 | the rest |',
      '| **Total** | **1,315** | |',
      '| `**` | 1,315 | every file |',
    ];
    expect(brokenLineCounts(table(right), files, count)).toEqual([]);
    const wrong = [
      '| `functions/*.ts` | 14 | handlers |',
      '| `lib/x.ts`, `lib/gone.ts` | 1,000 | the rest |',
      '| **Total** | 1,300 | |',
    ];
    expect(brokenLineCounts(table(wrong), files, count)).toEqual([
      'docs/x.md:4: says 14 lines, the code has 15 (WRITE_DOC_FIGURES=1 writes it)',
      'docs/x.md:5: `lib/gone.ts` names no TypeScript or JavaScript file',
      'docs/x.md:6: says 1,300 lines, the code has 1,015 (WRITE_DOC_FIGURES=1 writes it)',
    ]);
    const rewritten = withLineCounts(table(wrong), files, count);
    expect(rewritten.split('\n').slice(3, 6)).toEqual([
      '| `functions/*.ts` | 15 | handlers |',
      '| `lib/x.ts`, `lib/gone.ts` | 1,000 | the rest |',
      '| **Total** | 1,015 | |',
    ]);
    expect(
      brokenLineCounts(doc('<!-- lines of code -->\n| Files | What |\n| - | - |\n| `lib/x.ts` | x |\n'), files, count),
    ).toEqual([
      'docs/x.md:2: a lines-of-code table needs a Files and a Lines column',
      'docs/x.md: <!-- lines of code --> is never closed by <!-- /lines of code -->',
    ]);
  });

  it('reads the numeric constants of the code and the stage parameters of serverless.yml', () => {
    const constants = constantsOf(PROJECT_ROOT, repositoryTree(PROJECT_ROOT).files);
    expect(constants.get('MAX_BODY_BYTES')).toEqual([{ value: 65_536, unit: { dimension: 'size', scales: [1] } }]);
    expect(constants.get('KEY_LIFETIME_MS')?.map(({ value }) => value)).toEqual([86_400_000]);
    expect(constants.get('CLIENT_ERROR_RATE')).toEqual([{ value: 0.1, unit: { dimension: 'share', scales: [100] } }]);
    expect(constants.get('throttleRate')).toEqual([{ value: 50, unit: { dimension: 'rate', scales: [1] } }]);
    expect(constants.get('MAX_INTENTS')).toEqual([{ value: 24, unit: undefined }]);
    // The tests' own bounds are no rule of the service: jest.config.ts's is, a test file's is not.
    expect(constants.get('TEST_WITHIN_MS')?.map(({ value }) => value)).toEqual([60_000]);
  });
});

describe('lines of code', () => {
  it('are the lines that hold code: not blank, not only a comment, whatever the comment is in', () => {
    const script = [
      '/**',
      ' * A block comment',
      ' */',
      "import { a } from './a'; // a trailing one",
      '',
      '// a line comment',
      'const pattern = /lib\\/[a-z]+\\/\\/ not a comment/; const half = a / 2; // two',
      'const template = `a ${`b ${a} c`} /* not a comment */ d',
      '// inside the template: code',
      '${half}`;',
      '/* one */ /* two */',
    ].join('\n');
    expect(linesOfCode(withoutComments('x.ts', script))).toBe(5);
    const code = withoutComments('x.ts', script).split('\n');
    expect(code.map((line) => line.length)).toEqual(script.split('\n').map((line) => line.length));
    expect(code[3]?.trimEnd()).toBe("import { a } from './a';");
    expect(code[6]?.trimEnd()).toBe('const pattern = /lib\\/[a-z]+\\/\\/ not a comment/; const half = a / 2;');
    expect(linesOfCode(withoutComments('x.ts', 'a\n\n  \n// b\n'))).toBe(1);
  });
});
