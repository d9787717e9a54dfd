import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '../../harness/project';
import { repositoryTree } from '../support/doc-links';
import { brokenDocsList, brokenLayout, layoutNames } from '../support/doc-layout';

/** The docs whose "Project layout" a reader starts from. */
const LAYOUTS = ['docs/tour.md', 'docs/design.md'];

/** The layouts and the README's list of docs are the tree as it is (test/support/doc-layout.ts). */
describe('the layout in the docs', () => {
  const { files, tree } = repositoryTree(PROJECT_ROOT);
  const read = (path: string) => ({ path, text: readFileSync(join(PROJECT_ROOT, path), 'utf8') });

  it.each(LAYOUTS)(
    '%s names every file of lib/ and functions/ and every doc, and nothing that is not there',
    (path) => {
      expect(brokenLayout(read(path), files, (name) => tree.exists(name))).toEqual([]);
    },
  );

  it("README.md's Docs list links every doc", () => {
    expect(brokenDocsList(read('README.md'), files)).toEqual([]);
  });
});

describe('the layout check (it can fail)', () => {
  const FILES = [
    'lib/todos.ts',
    'lib/dynamodb/store.ts',
    'lib/dynamodb/list.ts',
    'docs/spec.md',
    'docs/tour.md',
    'redocly.yaml',
  ];
  const FOLDERS = new Set(['lib', 'lib/dynamodb', 'docs']);
  const exists = (path: string) => FILES.includes(path) || FOLDERS.has(path);
  const layout = (lines: string[]) => ({
    path: 'docs/design.md',
    text: ['# Design', '', '## Project layout', '', '```', ...lines, '```', '', '## Next', ''].join('\n'),
  });

  it('reads entries under their folders, and the files their descriptions name', () => {
    const block = {
      line: 1,
      lines: [
        'lib/',
        '  todos.ts     the domain; its store in',
        '               dynamodb/store.ts, and list.ts',
        '  dynamodb/    the store: store.ts, list.ts',
        'openapi.yaml   the contract (redocly.yaml lints it)',
      ],
    };
    expect(layoutNames(block).map(({ path, orAtRoot }) => [path, orAtRoot])).toEqual([
      ['lib/', undefined],
      ['lib/todos.ts', undefined],
      ['lib/list.ts', 'list.ts'],
      ['lib/dynamodb/', undefined],
      ['lib/dynamodb/store.ts', 'store.ts'],
      ['lib/dynamodb/list.ts', 'list.ts'],
      ['openapi.yaml', undefined],
      ['redocly.yaml', 'redocly.yaml'],
    ]);
  });

  it('finds a file of lib/ or a doc the layout leaves out, and a name that is not in the tree', () => {
    const lines = [
      'lib/',
      '  todos.ts           the domain',
      '  madeUp.ts          not in the tree',
      '  dynamodb/          the DynamoDB store: store.ts',
      'docs/',
      '  spec.md            the contract',
      'redocly.yaml         lints the contract',
    ];
    expect(brokenLayout(layout(lines), FILES, exists)).toEqual([
      'docs/design.md:8: lib/madeUp.ts is not in the repository',
      'docs/design.md:6: the layout does not name lib/dynamodb/list.ts',
      'docs/design.md:6: the layout does not name docs/tour.md',
    ]);
    const whole = [
      'lib/',
      '  todos.ts           the domain',
      '  dynamodb/          the DynamoDB store: store.ts, list.ts',
      'docs/',
      '  spec.md            the contract',
      '  tour.md            the tour',
      'redocly.yaml         lints the contract',
    ];
    expect(brokenLayout(layout(whole), FILES, exists)).toEqual([]);
    expect(brokenLayout({ path: 'docs/tour.md', text: '# Tour\n' }, FILES, exists)).toEqual([
      'docs/tour.md: no "## Project layout" with its code block',
    ]);
  });

  it("finds a doc README.md's Docs list does not link", () => {
    const readme = (list: string) => ({
      path: 'README.md',
      text: `# Service\n\n## Docs\n\n${list}\n## After\n[x](docs/tour.md)\n`,
    });
    expect(brokenDocsList(readme('- [docs/spec.md](docs/spec.md): the spec\n'), FILES)).toEqual([
      'README.md: the "Docs" list does not link docs/tour.md',
    ]);
    expect(brokenDocsList(readme('- [spec](docs/spec.md#top), [tour](./docs/tour.md)\n'), FILES)).toEqual([]);
  });
});
