import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { QUEUED_POST_STATES } from '../../lib/dynamodb/queue';
import { PROJECT_ROOT } from '../../harness/project';

/**
 * docs/design.md's table of the queue's states ("The queue as a state machine") and the code's `QueuedPost` name the
 * same states: every state of the table is one of the type's, and back (QUEUED_POST_STATES is typed as a record over
 * the type's states, so the compiler holds it to the type).
 */

/** The first column of the table under the heading, each a state in backticks. */
function statesOfTheDesignsTable(): string[] {
  const design = readFileSync(join(PROJECT_ROOT, 'docs/design.md'), 'utf8');
  const section = design.split('### The queue as a state machine')[1]?.split('\n### ')[0] ?? '';
  return [...section.matchAll(/^\| `(\w+)` +\|/gm)].map(([, state]) => state ?? '');
}

describe("the queue's states", () => {
  it("are the same in docs/design.md's table and in the code, each once", () => {
    const table = statesOfTheDesignsTable();
    expect(table.length).toBeGreaterThan(0);
    expect(new Set(table).size).toBe(table.length);
    expect([...table].sort()).toEqual(Object.keys(QUEUED_POST_STATES).sort());
  });
});
