import { KeyInFlight, KeyReused, ListFull, PreconditionFailed } from '../errors';
import type { IdempotencyClaim, Todo, Written } from '../todos';
import { EXPIRES, toTodo, type Item } from './table';
import type { PutInput } from './client';

/**
 * An Idempotency-Key's claim (lib/idempotency.ts) as the DynamoDB store keeps it: an item
 * `pk = "KEY#<key>"` written in the same transaction as the write it answers, so the two are
 * stored together or not at all, and no crash leaves a key "in progress". It keeps the request's
 * fingerprint and the answer (the record as written, or that its precondition failed: a 412), not the request.
 */

export function claimKey(key: string): { pk: string; id: number } {
  return { pk: `KEY#${key}`, id: 0 };
}

/** A claimed key as stored: what the claim needs to answer a retry. */
interface ClaimItem {
  readonly fingerprint: string;
  readonly [EXPIRES]: number;
  readonly todo?: Todo;
  /** The request was answered 412 (PreconditionFailed): its retry is too. */
  readonly preconditionFailed?: true;
  /** The request was answered 409 (ListFull): its retry is too, and no copy of an earlier attempt applies after it. */
  readonly listFull?: true;
}

/** What a claim keeps for the retries of its request: the record, or that the request was refused (412, 409). */
export type KeptAnswer = { readonly todo: Todo } | { readonly preconditionFailed: true } | { readonly listFull: true };

/**
 * The claim's action in a write's transaction: a Put on condition that the key is free or its
 * claim expired (DynamoDB's time to live can take up to two days to delete it). A cancellation
 * carries the claim found (ALL_OLD), for the request to answer with.
 */
export function claimPut(table: string, claim: IdempotencyClaim, answer: KeptAnswer, now: number): { Put: PutInput } {
  return {
    Put: {
      TableName: table,
      Item: {
        ...claimKey(claim.key),
        fingerprint: claim.fingerprint,
        [EXPIRES]: Math.ceil(claim.expiresAt / 1000),
        ...answer,
      },
      ConditionExpression: 'attribute_not_exists(pk) OR #expires <= :now',
      ExpressionAttributeNames: { '#expires': EXPIRES },
      ExpressionAttributeValues: { ':now': Math.floor(now / 1000) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * The answer a claimed key keeps, for a request with the same key: its record; PreconditionFailed
 * when it was a 412, ListFull when a 409; KeyReused when the key came with another request; undefined once the claim
 * expired (at `now`).
 */
export function replayOf(
  item: Item,
  claim: IdempotencyClaim | undefined,
  now: number,
): Written<Todo | undefined> | undefined {
  const kept = item as unknown as ClaimItem;
  if (claim === undefined || kept[EXPIRES] * 1000 <= now) return undefined;
  if (kept.fingerprint !== claim.fingerprint) throw new KeyReused();
  if (kept.preconditionFailed) throw new PreconditionFailed({ replayed: true });
  if (kept.listFull) throw new ListFull({ replayed: true });
  return { value: kept.todo && toTodo(kept.todo), replayed: true };
}

/**
 * Runs a keyed write that calls `contended` when another request with its Idempotency-Key holds
 * the key (a TransactionConflict on the claim). Stopped by the deadline after that, it is a
 * KeyInFlight (409): the other request's answer is not known yet, and the client is to ask again.
 */
export async function inFlightAtDeadline<T>(
  signal: AbortSignal,
  write: (contended: () => void) => Promise<T>,
): Promise<T> {
  const key = { contended: false };
  try {
    return await write(() => (key.contended = true));
  } catch (error) {
    if (key.contended && signal.aborted) throw new KeyInFlight();
    throw error;
  }
}
