import { describe, expect, it } from '@jest/globals';
import { findProblems } from '../../harness/load';

/** The load run's verdict must be able to say no. */
describe('the load check', () => {
  const ok = { 200: 10, 201: 3 };

  it('passes when the list holds exactly the surviving creates', () => {
    expect(findProblems([3, 4, 5], new Set([4]), [1, 2, 3, 5], ok)).toEqual([]);
  });

  it.each([
    ['a lost create', [3, 4, 5], new Set<number>(), [1, 2, 3, 5], ok, /missing/],
    ['a deleted record still listed', [3, 4], new Set([4]), [1, 2, 3, 4], ok, /still listed/],
    ['an id handed out twice', [3, 3], new Set<number>(), [1, 2, 3], ok, /twice/],
    ['a reused seed id', [2], new Set<number>(), [1, 2], ok, /seed/],
    ['a list out of order', [3, 4], new Set<number>(), [1, 2, 4, 3], ok, /increasing/],
    ['a 5xx answer', [3], new Set<number>(), [1, 2, 3], { 201: 1, 502: 1 }, /5xx/],
  ] as const)('fails on %s', (_name, created, deleted, listed, statuses, message) => {
    expect(findProblems([...created], deleted, [...listed], statuses).join('\n')).toMatch(message);
  });
});
