import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

/** Every run's figures, section by section; git ignores it. */
export const LATEST_PATH = join(__dirname, 'latest.json');
/** The committed figures that README.md and bench/README.md quote; refreshed by `--save` only. */
export const SNAPSHOT_PATH = join(__dirname, 'results.json');

/** One row of the printed table: a figure, its unit, and the budget it is held to, if any. */
export interface Row {
  section: string;
  name: string;
  value: number;
  unit: string;
  budget?: string;
  /** true or false when a budget applies. */
  met?: boolean;
  /** A budget measured with its noise (bench/budget.ts): missing it fails the run. */
  gate?: boolean;
  note?: string;
}

/** What `npm run bench` was asked for, beyond the section names. */
export interface BenchOptions {
  /** `--baseline <git ref>`: sections that compare revisions also measure this one, in the same run. */
  baseline?: string;
}

export interface Machine {
  cpus: string;
  cores: number;
  memoryGiB: number;
  node: string;
}

interface Results {
  machine: Machine;
  sections: Record<string, { measuredAt: string; machine?: Machine; rows: Row[] }>;
}

export function thisMachine(): Machine {
  return {
    cpus: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
}

/** Writes one section's rows into a results file, keeping the sections it already holds. */
export function recordSection(path: string, section: string, rows: Row[], machine: Machine): void {
  const results: Results = existsSync(path)
    ? (JSON.parse(readFileSync(path, 'utf8')) as Results)
    : { machine, sections: {} };
  results.sections[section] = { measuredAt: new Date().toISOString(), machine, rows };
  results.machine = machine;
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? NaN)
    : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2;
}

export function round(value: number, digits = 2) {
  return Math.round(value * 10 ** digits) / 10 ** digits;
}
