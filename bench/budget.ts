import type { Row } from './lib';

/**
 * A budget on what ships, with the noise its figure is measured with. A figure may pass its limit
 * by as much as its noise and still be met: a repeat run of the same tree moves it that much. Past
 * that, the row is marked NO and `npm run bench` exits 1 (bench/run.ts): the change made it worse.
 * docs/performance.md says why each limit is where it is, and how its noise was measured.
 */
export interface Budget {
  readonly limit: number;
  /** How far repeat runs of one tree move the figure. */
  readonly noise: number;
  readonly unit: string;
}

/** The budget fields of a row whose figure is held to `budget`. */
export function heldTo(value: number, budget: Budget): Pick<Row, 'budget' | 'met' | 'gate'> {
  const noise = budget.noise === 0 ? 'exact' : `noise ${budget.noise} ${budget.unit}`;
  return {
    budget: `≤ ${budget.limit} ${budget.unit} (${noise})`,
    met: value <= budget.limit + budget.noise,
    gate: true,
  };
}
