/**
 * DynamoDB's 500 InternalServerError, which DynamoDB Local never answers. The DynamoDB Developer
 * Guide ("Error handling with DynamoDB") says internal server errors "are expected during the
 * lifetime of a table" and may be retried; an answer of 500 does not say whether a write was
 * applied, and a write can be applied and still be answered 500. So a few requests, at `rate`,
 * get a 500: half of them before DynamoDB applied them, half after.
 *
 * The real rate is not published; the default, 1 in 200, is far above what a healthy table gives,
 * so that a workload of a few hundred requests meets both kinds.
 */

export const DEFAULT_INTERNAL_ERROR_RATE = 0.005;

export type InternalError = 'before' | 'after' | undefined;

export interface InternalErrorStats {
  before: number;
  after: number;
}

export class InternalErrors {
  readonly stats: InternalErrorStats = { before: 0, after: 0 };

  constructor(
    private readonly rate: number = DEFAULT_INTERNAL_ERROR_RATE,
    private readonly random: () => number = Math.random,
  ) {}

  /** Whether this request fails, and whether before or after it is applied. */
  draw(): InternalError {
    const roll = this.random();
    if (roll >= this.rate) return undefined;
    const when = roll < this.rate / 2 ? 'before' : 'after';
    this.stats[when]++;
    return when;
  }
}
