import { marshall } from '@aws-sdk/util-dynamodb';
import { EXPIRES } from '../../lib/dynamodb/table';
import type { IdempotencyClaim, TodoPatch } from '../../lib/todos';
import { withRetries, unavailable } from './clients';
import { TOKEN_WINDOW_MS } from './dynamodb';
import { TABLE, answeringWithinRetries, type Answered, type Scenario, type World } from './world';

/**
 * An Idempotency-Key past its lifetime (issue 41, item 3). A key is kept 24 hours (lib/idempotency.ts,
 * KEY_LIFETIME_MS),
 * and a run ends within two minutes of simulated time (world.ts): the claims here live LIFETIME_MS
 * instead. The DynamoDB store reads a claim's `expiresAt` alone, never the constant
 * (lib/dynamodb/claims.ts), so a claim that lives 20 s behaves as one of 24 hours does at its end.
 * The simulated DynamoDB has no time to live (dynamodb.ts keeps every item): `timeToLive` deletes
 * what has expired, as DynamoDB may at any time after an item's `expires`.
 */

/** A claim's lifetime in these runs: KEY_LIFETIME_MS scaled down to fit in one. */
const LIFETIME_MS = 20_000;
/** A claim's `expires` is in whole seconds, rounded up (lib/dynamodb/claims.ts): it may outlive its `expiresAt` by up to this. */
const EXPIRES_ROUNDING_MS = 1_000;
const KEY = '"the same key"';
const FIRST: TodoPatch = { title: 'first, with the key' };
const SECOND: TodoPatch = { title: 'second, with the key once it expired' };

/** A request's claim on KEY, as lib/idempotency.ts makes one, for LIFETIME_MS; `request` stands for its fingerprint. */
function claimOn(world: World, request: string): IdempotencyClaim {
  return { key: KEY, fingerprint: request, expiresAt: world.now() + LIFETIME_MS };
}

/** DynamoDB's time to live, at one moment: every item whose `expires` (epoch seconds) has passed is deleted. */
function timeToLive(world: World): void {
  for (const item of world.dynamodb.items(TABLE)) {
    const expires = item[EXPIRES];
    if (typeof expires !== 'number' || expires * 1000 > world.now()) continue;
    const Key = marshall({ pk: item.pk, id: item.id });
    world.dynamodb.handle('DeleteItem', JSON.stringify({ TableName: TABLE, Key }));
  }
}

/** A keyed PUT of `patch` to record 1, sent again with its key after a 503. */
function keyedPut(world: World, patch: TodoPatch, request: string) {
  const container = world.container();
  return withRetries(world, true, () =>
    container.update(1, patch, { ...world.options(), claim: claimOn(world, request) }),
  );
}

/**
 * A keyed PUT answered (set-up, no fault); a second request with the same key sent a second
 * before its claim expires, under faults: refused as a key reused (422) if it is decided before,
 * applied if after (a copy held past the expiry finds the claim expired since it was built: the
 * `expired` meaning of lib/dynamodb/decisions.ts). Sent again once the first claim expired, before
 * time to live deletes it: applied, or its own claim's replay. Then, once time to live has deleted
 * what expired, the first request sent again with its key: the key is free, so it is applied anew,
 * not replayed. Every answer must be what record 1 holds; with no fault, 422, 200, 200.
 */
const keyExpires: Scenario = async (world) => {
  await keyedPut(world, FIRST, 'first');
  await world.wait(LIFETIME_MS - 1_000);
  world.startFaults();
  const second = await keyedPut(world, SECOND, 'second');
  const afterSecond = titleOf(world);
  await world.wait(EXPIRES_ROUNDING_MS + 1_000);
  const secondAgain = await keyedPut(world, SECOND, 'second');
  const afterSecondAgain = titleOf(world);
  await world.wait(LIFETIME_MS + EXPIRES_ROUNDING_MS + 1_000);
  timeToLive(world);
  const firstAgain = await keyedPut(world, FIRST, 'first');
  return () => {
    const violations: string[] = [];
    if ('ok' in second && afterSecond !== SECOND.title)
      violations.push(`the second request answered 200, record 1 held "${afterSecond}"`);
    if ('failed' in second && second.failed === 'KeyReused' && afterSecond !== FIRST.title)
      violations.push(`the second request answered 422, record 1 held "${afterSecond}"`);
    if (world.faultFree && !('failed' in second && second.failed === 'KeyReused'))
      violations.push(`the second request, a second before the key expired, answered ${JSON.stringify(second)}`);
    if ('failed' in secondAgain && !unavailable(world, secondAgain))
      violations.push(`the second request, sent again once the key expired, answered ${secondAgain.failed}`);
    if ('ok' in secondAgain && afterSecondAgain !== SECOND.title)
      violations.push(`the second request, sent again, answered 200, record 1 held "${afterSecondAgain}"`);
    violations.push(...freshAnswer(world, firstAgain));
    if ('ok' in firstAgain && titleOf(world) !== FIRST.title)
      violations.push(`the first request, sent again, answered 200, record 1 holds "${titleOf(world)}"`);
    return violations;
  };
};

function titleOf(world: World): string | undefined {
  return world.records().find(({ id }) => id === 1)?.title;
}

/** A request sent again once its key expired and was deleted: applied anew (not replayed), or a 503 under faults. */
function freshAnswer(world: World, again: Answered<{ value: unknown; replayed: boolean } | undefined>): string[] {
  if ('failed' in again)
    return unavailable(world, again) ? [] : [`the first request, sent again, answered ${again.failed}`];
  return again.ok?.replayed === false ? [] : [`the first request, sent again, answered ${JSON.stringify(again.ok)}`];
}

/**
 * A keyed PUT whose copies held in the network land past the token's ten minutes (TOKEN_WINDOW_MS):
 * DynamoDB no longer takes such a copy for its twin, but as a new request, which only its own
 * conditions refuse (the record's version, the key's claim: docs/design.md, every transaction is
 * conditional on something that only moves forward). Record 1 must hold the PUT's title exactly
 * when it answered 200, and its version must have moved once at most.
 */
const landsPastTokenWindow: Scenario = async (world) => {
  const container = world.container();
  await container.get(1);
  world.startFaults();
  const answered = await withRetries(world, true, () =>
    container.update(1, FIRST, { ...world.options(), claim: claimOn(world, 'late') }),
  );
  const afterAnswer = titleOf(world);
  await world.wait(TOKEN_WINDOW_MS + 60_000);
  return () => {
    const violations: string[] = [];
    if ('ok' in answered && afterAnswer !== FIRST.title)
      violations.push(`the PUT answered 200, record 1 held "${afterAnswer}"`);
    if ('failed' in answered && !unavailable(world, answered)) violations.push(`the PUT answered ${answered.failed}`);
    const stored = world.dynamodb.items(TABLE).find((item) => item.pk === 'TODO' && item.id === 1);
    if (Number(stored?.v ?? 0) > 1) violations.push(`record 1's version moved ${String(stored?.v)} times`);
    return violations;
  };
};

export const KEY_EXPIRY: Readonly<Record<string, Scenario>> = {
  'PUT, keyed, its key expiring meanwhile': answeringWithinRetries(keyExpires),
  'PUT, keyed, its held copies landing past the token’s ten minutes': answeringWithinRetries(landsPastTokenWindow),
};
