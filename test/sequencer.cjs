// @ts-check
'use strict';

const Sequencer = require('@jest/test-sequencer').default;

/** The projects whose files start first: the simulator's search, minutes of one core alone. */
const FIRST_PROJECTS = ['simulation'];

/**
 * `tests` with those of FIRST_PROJECTS first, each part in the order it had.
 * @template {{ context: { config: { displayName?: { name: string } } } }} T
 * @param {readonly T[]} tests
 * @returns {T[]}
 */
function longestProjectsFirst(tests) {
  const first = (/** @type {T} */ test) => FIRST_PROJECTS.includes(test.context.config.displayName?.name ?? '');
  return [...tests.filter(first), ...tests.filter((test) => !first(test))];
}

/**
 * jest's own order (files that failed last time, then the slowest by its cache, then the largest),
 * except that the simulator's search starts first: jest knows no file's time in a fresh clone (CI),
 * and it ordered that file, the longest of `npm test`, after most others, so the run then waited
 * minutes for it alone (a fresh clone's `npm test`: it started about 10 minutes in, and ended the
 * run 10 minutes later).
 */
class SimulationFirst extends Sequencer {
  /**
   * @override
   * @param {import('@jest/test-result').Test[]} tests
   */
  async sort(tests) {
    return longestProjectsFirst(await super.sort(tests));
  }
}

module.exports = SimulationFirst;
module.exports.longestProjectsFirst = longestProjectsFirst;
