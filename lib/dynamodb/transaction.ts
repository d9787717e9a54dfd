import { randomUUID } from 'node:crypto';
import { DynamoDbError, backoff, type CancellationReason, type TransactItem } from './client';
import type { TableAccess } from './table';

/**
 * Every write of the store is one TransactWriteItems, built here: its actions, each under the
 * role it plays (`counter`, `record`, `claim`…), and a ClientRequestToken of its own. DynamoDB
 * answers a cancellation with one reason an action, in the order they went in; they are read
 * back by role, never by position, so adding an action cannot misroute another's reason.
 *
 * Invariant: a transaction is sent again with its own token until it is answered for good:
 * applied, or cancelled for a reason no later copy of it can change (a condition that failed:
 * each condition here is on something that only moves forward, a counter, a version, a claim).
 * Only then is a new transaction, with a new token, built. DynamoDB makes a token idempotent for
 * 10 minutes, so however many copies of it land, late ones included, it is applied at most once.
 * (A new token after a TransactionConflict stored one POST twice: its first attempt, delayed,
 * landed after the retry had gone on with a new one.)
 */

export type { TransactItem };

/** Why DynamoDB cancelled one action, and the item it found when the action asked for it (ALL_OLD). */
export type Reason = CancellationReason;

/** A cancellation's reasons, by role; an action DynamoDB found fine has none. */
export type Reasons<Role extends string> = Partial<Readonly<Record<Role, Reason>>>;

/** Reasons that say the transaction met others, not that a condition failed: it may go again as it is. */
const TRANSIENT = ['TransactionConflict', 'ThrottlingError'];

export class Transaction<Role extends string> {
  readonly token = randomUUID();
  readonly #roles: Role[] = [];
  readonly #actions: TransactItem[] = [];

  /** Adds an action under `role`, which no other action of this transaction has. */
  add(role: Role, action: TransactItem): this {
    if (this.#roles.includes(role)) throw new Error(`a transaction with two actions as ${role}`);
    this.#roles.push(role);
    this.#actions.push(action);
    return this;
  }

  get actions(): readonly TransactItem[] {
    return this.#actions;
  }

  /** A cancellation's reasons, in the order DynamoDB gives them, under the roles of their actions. */
  reasonsByRole(reasons: readonly Reason[]): Reasons<Role> {
    const byRole: Partial<Record<Role, Reason>> = {};
    this.#roles.forEach((role, i) => {
      const reason = reasons[i];
      if (reason !== undefined && reason.code !== 'None') byRole[role] = reason;
    });
    return byRole;
  }
}

/** Why DynamoDB cancelled a transaction, action by action, or undefined when the error is not a cancellation. */
export function cancellationReasons(error: unknown): readonly Reason[] | undefined {
  if (!(error instanceof DynamoDbError) || error.name !== 'TransactionCanceledException') return undefined;
  return error.cancellationReasons ?? [];
}

/**
 * True when a cancellation only says that the transaction met others (a conflict, a throttle) or
 * that a copy of it is still in progress: sent again as it is, it may go through.
 */
export function worthSendingAgain(error: unknown): boolean {
  if (error instanceof Error && error.name === 'TransactionInProgressException') return true;
  const reasons = cancellationReasons(error);
  if (reasons === undefined) return false;
  const failed = reasons.filter(({ code }) => code !== 'None');
  return failed.length > 0 && failed.every(({ code }) => TRANSIENT.includes(code));
}

/** What a caller may learn while a transaction is sent again and again. */
export interface CommitWatch<Role extends string> {
  /** Hears the reasons of each answer that only says the transaction met others. */
  readonly metOthers?: (reasons: Reasons<Role>) => void;
  /**
   * Before a resend: true when a fresh read shows that the transaction's conditions no longer
   * hold (the counter moved past it, say). It is asked only while every copy sent so far was
   * answered, and answered "not applied": then no copy is on its way, none can be applied later,
   * and the transaction is dropped ('superseded') for a new one rather than waited on. (With a
   * copy unanswered, the change the read shows may be that copy's own doing: only the
   * transaction's own answer can tell.)
   */
  readonly superseded?: () => Promise<boolean>;
}

/**
 * Sends `transaction`, and sends it again with its own token, after a pause, for as long as
 * DynamoDB only says it met others (worthSendingAgain), until the signal aborts. Resolves with
 * undefined once it is applied, with its reasons by role once it is cancelled for good, or with
 * 'superseded'; rejects with any other failure.
 */
export async function commit<Role extends string>(
  table: TableAccess,
  transaction: Transaction<Role>,
  signal: AbortSignal,
  watch: CommitWatch<Role> = {},
): Promise<Reasons<Role> | 'superseded' | undefined> {
  let everyCopyAnswered = true;
  for (let attempt = 0; ; attempt++) {
    try {
      await table.dynamodb.transactWriteItems(transaction.actions, transaction.token, signal);
      return undefined;
    } catch (error) {
      if (!worthSendingAgain(error)) {
        const reasons = cancellationReasons(error);
        if (reasons === undefined) throw error;
        return transaction.reasonsByRole(reasons);
      }
      watch.metOthers?.(transaction.reasonsByRole(cancellationReasons(error) ?? []));
      // More than one attempt, or one still in progress: a copy may yet be applied.
      if (!(error instanceof DynamoDbError) || error.attempts > 1 || cancellationReasons(error) === undefined) {
        everyCopyAnswered = false;
      }
      if (everyCopyAnswered && (await watch.superseded?.())) return 'superseded';
      await backoff(signal, attempt);
    }
  }
}
