import { describe, expect, it } from '@jest/globals';
import config from '../../jest.config';
import { ONLY_A_HANG_MS } from '../support/bounds';

/**
 * test/support/bounds.ts's rule as jest applies it: a test of work alone that states no bound has
 * the timeout that only a hang meets, and a test that waits on another process keeps
 * jest.config.ts's TEST_WITHIN_MS unless it states its own.
 */
describe('a test that states no bound', () => {
  it('has, in the unit project, the timeout that only a hang meets', () => {
    // Where jest.setTimeout (test/support/work-bound.ts) puts a file's default; jest-circus reads
    // it there when the file's tests start.
    expect((globalThis as Record<symbol, unknown>)[Symbol.for('TEST_TIMEOUT_SYMBOL')]).toBe(ONLY_A_HANG_MS);
  });

  it('has it in the projects of work alone, unit and simulation; those that start processes keep a shorter one', () => {
    const projects = (config.projects ?? []).flatMap((project) => (typeof project === 'string' ? [] : [project]));
    // jest's types give a project's setupFiles no element type: read as what it is, a list of paths.
    const setupFiles = (project: (typeof projects)[number]): unknown[] =>
      Array.isArray(project.setupFiles) ? (project.setupFiles as unknown[]) : [];
    const workAlone = projects.filter((project) =>
      setupFiles(project).some((file) => typeof file === 'string' && file.endsWith('/work-bound.ts')),
    );
    expect(workAlone.map((project) => String(project.displayName))).toEqual(['unit', 'simulation']);
    expect(config.testTimeout).toBeLessThan(ONLY_A_HANG_MS);
  });
});
