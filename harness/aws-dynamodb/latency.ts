import type { DynamoDbRequest } from './requests';

/**
 * How long real DynamoDB takes to answer, by operation, as a distribution: each request's time
 * is drawn from the measured quantiles (linear between them).
 *
 * Source: Alex DeBrie, "DynamoDB Transactions Performance Testing" (2020), 400 calls of each
 * from AWS Lambda to DynamoDB in one region, timed in the function
 * (github.com/alexdebrie/dynamodb-performance-testing, put-batch-transaction-performance/README.md):
 *
 * | ms                          | min  | p50  | p90  | p95  | p99  | max |
 * | --------------------------- | ---- | ---- | ---- | ---- | ---- | --- |
 * | PutItem                     | 5.47 | 7.55 | 11.3 | 13.2 | 16.2 | 29  |
 * | TransactWriteItems, 5 items | 19.4 | 25.3 | 30.7 | 36.4 | 92.5 | 218 |
 * | TransactWriteItems, 25      | 23.5 | 32.1 | 40.5 | 47.2 | 97.5 | 258 |
 *
 * A transaction of another size is interpolated (or extrapolated) item by item between the two
 * rows; a failed transaction took as long as one that succeeded. No published figure was found
 * for the other operations: GetItem, UpdateItem, DeleteItem and Query take PutItem's time (a
 * single item on one storage node), and a Query 2 ms more for every 100 KB it reads, an
 * assumption (1 MB pages then take about 20 ms more). These are the times a function sees, so
 * they include the network between it and DynamoDB.
 */

/** Quantiles: the probability and the time in ms, in increasing order. */
type Quantiles = readonly (readonly [number, number])[];

const PROBABILITIES = [0, 0.5, 0.9, 0.95, 0.99, 1] as const;

function quantiles(times: readonly number[]): Quantiles {
  return PROBABILITIES.map((probability, i) => [probability, times[i] ?? 0] as const);
}

export const PUT_ITEM = quantiles([5.47, 7.55, 11.3, 13.2, 16.2, 29]);
const TRANSACTION_OF_5 = quantiles([19.4, 25.3, 30.7, 36.4, 92.5, 218]);
const TRANSACTION_OF_25 = quantiles([23.5, 32.1, 40.5, 47.2, 97.5, 258]);
const QUERY_MS_PER_100_KB = 2;

/** A transaction of `items` items: between the measured rows of 5 and 25, and beyond them on the same line. */
export function transactionQuantiles(items: number): Quantiles {
  const share = (items - 5) / 20;
  return TRANSACTION_OF_5.map(([probability, five], i) => {
    const twentyFive = TRANSACTION_OF_25[i]?.[1] ?? five;
    return [probability, Math.max(PUT_ITEM[i]?.[1] ?? 0, five + share * (twentyFive - five))] as const;
  });
}

/** The time at probability `u` (0 to 1): linear between the quantiles around it. */
export function timeAt(table: Quantiles, u: number): number {
  for (let i = 1; i < table.length; i++) {
    const [upper, upperMs] = table[i] ?? [1, 0];
    const [lower, lowerMs] = table[i - 1] ?? [0, 0];
    if (u <= upper) return lowerMs + ((u - lower) / (upper - lower)) * (upperMs - lowerMs);
  }
  return table.at(-1)?.[1] ?? 0;
}

/** A service time for `request`, drawn at random from its operation's distribution. */
export function serviceTime(request: DynamoDbRequest, random: () => number = Math.random): number {
  const table = request.transaction ? transactionQuantiles(request.accesses.length) : PUT_ITEM;
  return timeAt(table, random());
}

/** What a Query adds for the bytes it read, once they are known. */
export function readTime(bytes: number): number {
  return (bytes / 100_000) * QUERY_MS_PER_100_KB;
}
