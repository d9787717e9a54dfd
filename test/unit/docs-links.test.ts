import { describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '../../harness/project';
import {
  anchorsOf,
  brokenCitations,
  brokenInComments,
  brokenInMarkdown,
  type Source,
  type Tree,
} from '../support/doc-links';

/** Every document and file the docs and the code cite is in the repository (docs/contributing.md). */
describe('citations', () => {
  it('name only what is in the repository: links, their anchors, and cited files', () => {
    expect(brokenCitations(PROJECT_ROOT)).toEqual([]);
  });
});

/** A repository of a few files, for showing that the check can fail. */
function treeOf(files: Record<string, string>, ignored: string[] = []): Tree {
  const folders = new Set(
    Object.keys(files).flatMap((file) =>
      file
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );
  return {
    files: Object.keys(files),
    exists: (path) => path in files || folders.has(path),
    ignored: (path) => ignored.includes(path),
    read: (path) => files[path],
  };
}

const TREE = treeOf(
  {
    'README.md': '# Service\n\n## Package and deploy\n',
    'docs/design.md': '# Design\n\n## What the spec leaves open, and how this service answers\n\n## `npm run info`\n',
    'docs/spec.md': '# Specification\n\n## 4. Endpoints\n',
    'lib/http.ts': '',
    'lib/dynamodb/queue-plan.ts': '',
    'serverless/plugins/local-workflow/ports.cjs': '',
    'smoke/cli.ts': '',
  },
  ['bench/latest.json'],
);

const markdown = (text: string): Source => ({ path: 'docs/contributing.md', text });

describe('the citation check (it can fail)', () => {
  it('finds a relative link to a file that is not there', () => {
    expect(brokenInMarkdown(markdown('See [the spec](spec.md) and [style](../STYLE.md).\n'), TREE)).toEqual([
      'docs/contributing.md:1: link ../STYLE.md: STYLE.md is not in the repository',
    ]);
  });

  it('finds an anchor that no heading has, in another file or in the same one', () => {
    const text = [
      '## Logs',
      '[ok](design.md#what-the-spec-leaves-open-and-how-this-service-answers), [ok](#logs)',
      '[bad](../README.md#deploy), [bad](#settings), [ok](../README.md#package-and-deploy)',
    ].join('\n');
    expect(brokenInMarkdown(markdown(text), TREE)).toEqual([
      'docs/contributing.md:3: link ../README.md#deploy: README.md has no heading #deploy',
      'docs/contributing.md:3: link #settings: docs/contributing.md has no heading #settings',
    ]);
  });

  it('finds a cited file that is not there, in a code span or in prose', () => {
    const text =
      'The edge is `lib/http.ts`; the log line, `lib/access.ts` and lib/gone.ts. `bench/latest.json` is written.';
    expect(brokenInMarkdown(markdown(text), TREE)).toEqual([
      'docs/contributing.md:1: `lib/access.ts` is not in the repository',
      'docs/contributing.md:1: lib/gone.ts is not in the repository',
    ]);
  });

  it("finds a file's name, a relative path or a folder in a code span that nothing in the tree ends with", () => {
    const text = [
      'Decisions in `queue-plan.ts`, ports in `local-workflow/ports.cjs`, `local-workflow/` and `smoke/cli.ts`.',
      'Gone: `queue-plan-madeUp.ts`, `local-workflow/madeUp.cjs`, `madeUp-folder/`, `smoke/madeUp.ts`.',
      'With a place: `lib/http.ts:18`, `spec.md#4-endpoints`; `docs/spec.md#madeUp` is a link check, not a path one.',
    ].join('\n');
    expect(brokenInMarkdown(markdown(text), TREE)).toEqual([
      'docs/contributing.md:2: `queue-plan-madeUp.ts` is not in the repository',
      'docs/contributing.md:2: `local-workflow/madeUp.cjs` is not in the repository',
      'docs/contributing.md:2: `madeUp-folder/` is not in the repository',
      'docs/contributing.md:2: `smoke/madeUp.ts` is not in the repository',
    ]);
  });

  it('reads no code block, no web address, no placeholder and no word that only looks like a path', () => {
    const text = [
      '```sh',
      'cat lib/nothing.ts',
      '```',
      '[web](https://example.com/lib/x.ts) `events/<function>.json` `lib/dynamodb-*.ts` application/json',
      '`functions/getTodo.handler` `lib/http.ts:18:7` `todo-api/local`',
    ].join('\n');
    expect(brokenInMarkdown(markdown(text), TREE)).toEqual([]);
  });

  it('finds a cited file that is not there in a code comment, and not in a string', () => {
    const code = [
      "import { x } from './y'; // the rule is in lib/http.ts, and SPEC.md §4",
      '/**',
      ' * The deadline (`lib/deadline.ts`): see docs/spec.md.',
      ' */',
      "const s = `a ${'lib/in-a-string.ts'} b`; const r = /lib\\/in-a-regex.ts/;",
      '// docs/gone.md',
    ].join('\n');
    expect(brokenInComments({ path: 'lib/x.ts', text: code }, TREE)).toEqual([
      'lib/x.ts:1: SPEC.md is not in the repository',
      'lib/x.ts:2: lib/deadline.ts is not in the repository',
      'lib/x.ts:6: docs/gone.md is not in the repository',
    ]);
    expect(brokenInComments({ path: 'serverless.yml', text: 'a: b # see SPEC.md\n# lib/http.ts\n' }, TREE)).toEqual([
      'serverless.yml:1: SPEC.md is not in the repository',
    ]);
  });

  it('makes anchors as GitHub does', () => {
    expect([...anchorsOf('# A\n## `npm run info`\n## 4. Endpoints\n## A\n```\n## not a heading\n```\n')]).toEqual([
      'a',
      'npm-run-info',
      '4-endpoints',
      'a-1',
    ]);
  });
});
