import { StoreUnavailable } from '../errors';
import { backoff } from '../abort';
import { DynamoDbError, type CancellationReason, type TransactItem } from './client';
import { VERDICT, meaningOf, type Meaning } from './decisions';
import { Copies, strongest, type Verdict } from './outcome';
import type { TableAccess } from './table';

/**
 * Every store write is one TransactWriteItems, built here: actions under roles (`counter`, `record`, `claim`…) and its
 * own ClientRequestToken. Cancellation reasons are read by role, never position: an action added misroutes none.
 * Invariant: a transaction is resent with its token until applied or no copy can ever land (`commit`: its fate,
 * outcome.ts; its verdict, decisions.ts); only then is a new token built. A token applies once at most in 10 minutes,
 * late copies too (a new token after a TransactionConflict stored one POST twice: the first attempt landed late).
 */

export type { TransactItem };

/** Why DynamoDB cancelled one action, and the item it found when the action asked for it (ALL_OLD). */
export type Reason = CancellationReason;

/** A cancellation's meanings, by role (lib/dynamodb/decisions.ts); an action DynamoDB found fine has none. */
export type Meanings<Role extends string> = Partial<Readonly<Record<Role, Meaning>>>;

export class Transaction<Role extends string> {
  /** Every copy sent with the token, by every layer: the transaction's fate (lib/dynamodb/outcome.ts). */
  readonly copies = new Copies();
  readonly #roles: Role[] = [];
  readonly #actions: TransactItem[] = [];

  /** `token`: its ClientRequestToken, one of its own (the store's runtime draws it). */
  constructor(readonly token: string) {}

  add(role: Role, action: TransactItem): this {
    if (this.#roles.includes(role)) throw new Error(`a transaction with two actions as ${role}`);
    this.#roles.push(role);
    this.#actions.push(action);
    return this;
  }

  get actions(): readonly TransactItem[] {
    return this.#actions;
  }

  /** Each action's role, in the order the actions went in. */
  get roles(): readonly Role[] {
    return this.#roles;
  }

  /** A cancellation's reasons, in the order DynamoDB gives them, read by the roles of their actions (lib/dynamodb/decisions.ts). */
  read(reasons: readonly Reason[], now: number): Cancellation<Role> {
    const meanings: Partial<Record<Role, Meaning>> = {};
    const codes: string[] = [];
    this.#roles.forEach((role, i) => {
      const reason = reasons[i];
      const action = this.#actions[i];
      const meaning = reason && action && meaningOf(role, reason, action, now);
      if (meaning === undefined) return;
      meanings[role] = meaning;
      codes.push(`${role}: ${reason?.code ?? ''}`);
    });
    const verdicts = (Object.values(meanings) as Meaning[]).map((meaning) => VERDICT[meaning.kind]);
    // The codes alone, never the items DynamoDB returned with them: a title is a user's text (lib/access-log.ts).
    return { meanings, verdict: strongest(verdicts), codes: codes.join(', ') };
  }
}

/** A cancellation as read: each role's meaning, whether a copy may still land, and the codes for a log line. */
export interface Cancellation<Role extends string> {
  readonly meanings: Meanings<Role>;
  readonly verdict: Verdict;
  readonly codes: string;
}

function cancellationReasons(error: unknown): readonly Reason[] | undefined {
  if (!(error instanceof DynamoDbError) || error.name !== 'TransactionCanceledException') return undefined;
  return error.cancellationReasons ?? [];
}

/** What a caller may learn while a transaction is sent again and again. */
export interface CommitWatch<Role extends string> {
  /** Hears each cancellation that only says the transaction met others. */
  readonly metOthers?: (meanings: Meanings<Role>) => void;
  /**
   * Before a resend: true if a fresh read shows its conditions fail (the counter moved). Asked only while `not applied`
   * (outcome.ts): no copy is on its way, so the change is not its own: dropped ('superseded'), not waited on.
   */
  readonly superseded?: () => Promise<boolean>;
}

/** A transaction's end: applied; cancelled, and no copy of it can ever land; or superseded (see CommitWatch). */
export type Committed<Role extends string> = 'applied' | { readonly cancelled: Cancellation<Role> } | 'superseded';

/**
 * Sends `transaction`, again with its own token after pauses, until applied, until no copy ever can be (`final`, or
 * `refused` with every copy refused: decisions.ts), or the signal aborts. Its fate spans copies (`transaction.copies`).
 */
export async function commit<Role extends string>(
  table: TableAccess,
  transaction: Transaction<Role>,
  signal: AbortSignal,
  watch: CommitWatch<Role> = {},
): Promise<Committed<Role>> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let reasons: readonly Reason[] | undefined;
    try {
      await table.dynamodb.transactWriteItems(transaction.actions, transaction.token, signal, transaction.copies);
      return 'applied';
    } catch (error) {
      reasons = cancellationReasons(error);
      // Not a cancellation: the same token again if the last copy's fate is unknown (in progress, a 500, a timeout
      // after the client's tries); other failures (a refusal no copy passes, the deadline) end it, never rebuilt.
      if (reasons === undefined && !(error instanceof DynamoDbError && error.copy !== 'not applied')) throw error;
    }
    const cancellation = transaction.read(reasons ?? [], table.runtime.now());
    const { verdict } = cancellation;
    if (verdict === 'final' || (verdict === 'refused' && transaction.copies.fate === 'not applied')) {
      return { cancelled: cancellation };
    }
    if (verdict === 'met others') watch.metOthers?.(cancellation.meanings);
    if (transaction.copies.fate === 'not applied' && (await watch.superseded?.())) return 'superseded';
    await backoff(signal, round, table.runtime);
  }
  throw new StoreUnavailable(`a transaction sent in ${MAX_ROUNDS} rounds is ${transaction.copies.fate}`);
}

/**
 * The most rounds a transaction is sent in: each is a round trip and a pause of up to 320 ms (backoff), so a request's
 * deadline comes long before. At it, the transaction ends as its copies left it, and is answered 503.
 */
const MAX_ROUNDS = 1_000;
