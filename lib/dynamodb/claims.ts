import { KeyInFlight, KeyReused, ListFull, PreconditionFailed } from '../errors';
import type { IdempotencyClaim, Todo, Written } from '../todos';
import { EXPIRES, toTodo, type Item } from './table';
import type { PutInput } from './client';
import { KEY_FREE } from './conditions';

/**
 * An Idempotency-Key's claim (lib/idempotency.ts): an item `pk = "KEY#<key>"` in the write's own transaction (both
 * stored or neither: no crash leaves a key "in progress"), keeping the fingerprint and the answer, not the request.
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

/** The claim's Put, if the key is free or expired (its time to live may take two days); ALL_OLD to answer with. */
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
      ConditionExpression: KEY_FREE,
      ExpressionAttributeNames: { '#expires': EXPIRES },
      ExpressionAttributeValues: { ':now': Math.floor(now / 1000) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** What a claimed key answers: its record (undefined: deleted by its first request), or a refusal, never thrown here. */
export type Replay = Written<Todo | undefined> | KeyReused | PreconditionFailed | ListFull;

/**
 * A claimed key's answer: its record, PreconditionFailed (412), ListFull (409), KeyReused (another request's key), or
 * undefined once expired. Returned, not thrown: a commit of POSTs settles one with it (lib/dynamodb/decisions.ts).
 */
export function replayOf(item: Item, claim: IdempotencyClaim | undefined, now: number): Replay | undefined {
  const kept = item as unknown as ClaimItem;
  if (claim === undefined || kept[EXPIRES] * 1000 <= now) return undefined;
  if (kept.fingerprint !== claim.fingerprint) return new KeyReused();
  if (kept.preconditionFailed) return new PreconditionFailed({ replayed: true });
  if (kept.listFull) return new ListFull({ replayed: true });
  return { value: kept.todo && toTodo(kept.todo), replayed: true };
}

/**
 * Runs a keyed write (`contended`: another request holds its key); stopped by the deadline then, KeyInFlight (409):
 * the other's answer is not known yet, so the client asks again.
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
