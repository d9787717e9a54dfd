import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../harness/project';

/**
 * A section of docs/design.md, by its heading, up to the next heading: for tests that hold what
 * the design promises and what the code does together.
 */
export function designSection(heading: string): string {
  const text = readFileSync(join(PROJECT_ROOT, 'docs/design.md'), 'utf8');
  const start = text.indexOf(`\n### ${heading}\n`);
  if (start < 0) throw new Error(`docs/design.md has no section "${heading}"`);
  const end = text.indexOf('\n#', start + heading.length + 6);
  // One line, however the paragraph was wrapped.
  return text.slice(start, end < 0 ? undefined : end).replace(/\s+/g, ' ');
}
