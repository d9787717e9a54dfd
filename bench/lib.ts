import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const RESULTS_PATH = join(__dirname, 'results.json');

/** One row of the printed table: a figure, its unit, and the budget it is held to, if any. */
export interface Row {
  section: string;
  name: string;
  value: number;
  unit: string;
  budget?: string;
  /** true or false when a budget applies. */
  met?: boolean;
  note?: string;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? NaN)
    : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2;
}

export const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

interface Results {
  machine: { cpus: string; cores: number; memoryGiB: number; node: string };
  sections: Record<string, { measuredAt: string; rows: Row[] }>;
}

/** Merges this run's sections into bench/results.json, keeping sections it did not run. */
export function saveResults(sections: Record<string, Row[]>, machine: Results['machine']): void {
  const previous: Results = existsSync(RESULTS_PATH)
    ? (JSON.parse(readFileSync(RESULTS_PATH, 'utf8')) as Results)
    : { machine, sections: {} };
  const measuredAt = new Date().toISOString();
  for (const [name, rows] of Object.entries(sections)) previous.sections[name] = { measuredAt, rows };
  previous.machine = machine;
  writeFileSync(RESULTS_PATH, `${JSON.stringify(previous, null, 2)}\n`);
}

export const sleep = (ms: number) =>
  new Promise((done) => {
    setTimeout(done, ms);
  });
