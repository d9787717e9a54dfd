import { describe, expect, it } from '@jest/globals';
import { claimPut, replayOf, type KeptAnswer } from '../../lib/dynamodb/claims';
import { KeyReused, ListFull, PreconditionFailed } from '../../lib/errors';
import { createTodo, type IdempotencyClaim } from '../../lib/todos';

/**
 * What a claimed Idempotency-Key answers a request with the same key (lib/dynamodb/claims.ts,
 * replayOf): the answer its first request got, a refusal included, with Idempotent-Replayed; a 422
 * for another request; nothing once the claim expired. The store reads it where the cancellation
 * did not carry the claim: when the record is gone, say, after the key's first request deleted it.
 */

const NOW = Date.UTC(2026, 10, 27);
const claim: IdempotencyClaim = { key: '"k"', fingerprint: 'PUT /todos/3 {"title":"t"}', expiresAt: NOW + 60_000 };

/** The claim's item as stored with `answer`. */
function kept(answer: KeptAnswer, fingerprint = claim.fingerprint): Record<string, unknown> {
  return { ...claimPut('todos', { ...claim, fingerprint }, answer, NOW).Put.Item };
}

describe('a claimed key’s answer to a request with the key', () => {
  it('is the record its first request wrote, replayed', () => {
    const todo = createTodo({ title: 't' }, 3);
    expect(replayOf(kept({ todo }), claim, NOW)).toEqual({ value: todo, replayed: true });
  });

  it('is its first request’s 412 or 409 again, replayed: returned, for the store to throw or to settle one POST of many with', () => {
    for (const [answer, refusal] of [
      [{ preconditionFailed: true }, PreconditionFailed],
      [{ listFull: true }, ListFull],
    ] as const) {
      const replay = replayOf(kept(answer), claim, NOW);
      expect(replay).toBeInstanceOf(refusal);
      expect((replay as PreconditionFailed).headers).toEqual({ 'idempotent-replayed': 'true' });
    }
  });

  it('is a 422 for another request with the key, whatever the first one answered', () => {
    const todo = createTodo({ title: 't' }, 3);
    expect(replayOf(kept({ todo }, 'DELETE /todos/3'), claim, NOW)).toBeInstanceOf(KeyReused);
  });

  it('is nothing once the claim expired: the key is free again', () => {
    expect(replayOf(kept({ preconditionFailed: true }), claim, NOW + 61_000)).toBeUndefined();
  });
});
