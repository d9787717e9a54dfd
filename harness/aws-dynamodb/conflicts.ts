import {
  CONFLICT_REASON,
  FINE,
  transactionCanceled,
  transactionConflictException,
  transactionInProgress,
  type Answer,
} from './answers';
import { isSingleWrite, type DynamoDbRequest } from './requests';

/**
 * Transaction conflicts, as the DynamoDB Developer Guide documents them ("Transaction conflict
 * handling in DynamoDB"), and DynamoDB Local never produces (it runs one request at a time):
 *
 * - a TransactWriteItems whose item is part of another transaction, or of a PutItem, UpdateItem
 *   or DeleteItem, still in progress is cancelled: TransactionCanceledException with the reason
 *   TransactionConflict at that item and None at the others;
 * - a PutItem, UpdateItem or DeleteItem on an item of a transaction in progress is refused:
 *   TransactionConflictException. Neither is applied, and the SDK retries neither;
 * - a TransactWriteItems sent again with the ClientRequestToken of one still in progress is
 *   refused: TransactionInProgressException (which the SDK retries, as a throttle);
 * - reads (GetItem, Query) meet no conflict: they see the last committed value.
 *
 * A request is in progress from the moment DynamoDB takes it until it answers: for the whole of
 * its service time (harness/aws-dynamodb/latency.ts). That is the widest reading of "ongoing",
 * and the one that makes contention on one item cost the most.
 */

interface Holder {
  readonly transaction: boolean;
}

export interface ConflictStats {
  /** Transactions cancelled with TransactionConflict. */
  transactionsCancelled: number;
  /** Single writes refused with TransactionConflictException. */
  writesRefused: number;
  /** Transactions refused with TransactionInProgressException. */
  inProgress: number;
}

export class Conflicts {
  readonly #holders = new Map<string, Set<Holder>>();
  readonly #tokens = new Set<string>();
  readonly stats: ConflictStats = { transactionsCancelled: 0, writesRefused: 0, inProgress: 0 };

  /**
   * Takes `request` in, if nothing in progress conflicts with it: returns the answer that refuses
   * it, or a release to call once it is answered. Reads always go in, and hold nothing.
   */
  admit(request: DynamoDbRequest): { refused: Answer } | { release: () => void } {
    if (request.operation === 'TransactWriteItems') return this.#admitTransaction(request);
    if (isSingleWrite(request)) return this.#admitWrite(request);
    return { release: () => undefined };
  }

  #admitTransaction(request: DynamoDbRequest): { refused: Answer } | { release: () => void } {
    if (request.token !== undefined && this.#tokens.has(request.token)) {
      this.stats.inProgress++;
      return { refused: transactionInProgress };
    }
    const conflicting = request.accesses.map(({ item }) => (this.#holders.get(item)?.size ?? 0) > 0);
    if (conflicting.some(Boolean)) {
      this.stats.transactionsCancelled++;
      return { refused: transactionCanceled(conflicting.map((conflict) => (conflict ? CONFLICT_REASON : FINE))) };
    }
    const holder: Holder = { transaction: true };
    const { token } = request;
    if (token !== undefined) this.#tokens.add(token);
    const items = request.accesses.map(({ item }) => item);
    this.#hold(items, holder);
    return {
      release: () => {
        if (token !== undefined) this.#tokens.delete(token);
        this.#let(items, holder);
      },
    };
  }

  #admitWrite(request: DynamoDbRequest): { refused: Answer } | { release: () => void } {
    const items = request.accesses.map(({ item }) => item);
    const inTransaction = items.some((item) => [...(this.#holders.get(item) ?? [])].some((held) => held.transaction));
    if (inTransaction) {
      this.stats.writesRefused++;
      return { refused: transactionConflictException };
    }
    // Single writes to one item do not conflict with each other (DynamoDB applies them in turn),
    // but a transaction that meets one in progress does.
    const holder: Holder = { transaction: false };
    this.#hold(items, holder);
    return {
      release: () => {
        this.#let(items, holder);
      },
    };
  }

  #hold(items: readonly string[], holder: Holder): void {
    for (const item of items) {
      const holders = this.#holders.get(item) ?? new Set<Holder>();
      holders.add(holder);
      this.#holders.set(item, holders);
    }
  }

  #let(items: readonly string[], holder: Holder): void {
    for (const item of items) {
      const holders = this.#holders.get(item);
      holders?.delete(holder);
      if (holders?.size === 0) this.#holders.delete(item);
    }
  }
}
