import { KeyReused, ListFull } from '../errors';
import type { IdempotencyClaim } from '../todos';
import { replayOf, type Replay } from './claims';
import type { CancellationReason, Item, TransactItem } from './client';
import type { Verdict } from './outcome';
import { EXPIRES, type Counter, type TableAccess } from './table';

/**
 * Each action has a role, `<kind>` or `<kind> <who>` (`counter`, `record 3`, `claim <uuid>`, `intent <id>`, `outcome
 * <uuid>`): `meaningOf` reads an action's reason by its kind; `VERDICT` says if a copy may still land (outcome.ts);
 * `decide` ranks a cancellation's meanings, alike for every write, into what it settles and next.
 */

export type Meaning =
  /** TransactionConflict: the transaction met another on this item. */
  | { readonly kind: 'conflict' }
  /** ThrottlingError: this item's partition is past its throughput. */
  | { readonly kind: 'throttled' }
  /** The counter moved on, past the ids the transaction gives (the seed's: it exists). */
  | { readonly kind: 'moved'; readonly counter: Counter | undefined }
  /** The counter is where the transaction expected, but the list has no room for it. */
  | { readonly kind: 'full'; readonly counter: Counter }
  /** The counter has no size or no version yet (a table seeded before the list had them). */
  | { readonly kind: 'unsized' }
  /** The key was claimed before, for this request: its kept answer. */
  | { readonly kind: 'replay'; readonly kept: Item }
  /** The key was claimed before, for another request. */
  | { readonly kind: 'reused' }
  /** The key's claim expired since the transaction was built: a new one may claim it. */
  | { readonly kind: 'expired' }
  /** The record is not as read: as it is now, or gone. */
  | { readonly kind: 'changed'; readonly current: Item | undefined }
  /** The POST has an outcome already: withdrawn, or written by another commit. */
  | { readonly kind: 'done' }
  /** The intent is gone: another commit took it, or its POST withdrew. */
  | { readonly kind: 'gone' }
  /** ValidationError: no copy of this request can ever pass. */
  | { readonly kind: 'invalid' }
  | { readonly kind: 'unexplained' };

/** Whether a copy of a transaction cancelled for this may still land (see Verdict). */
export const VERDICT: Readonly<Record<Meaning['kind'], Verdict>> = {
  conflict: 'met others',
  throttled: 'met others',
  moved: 'final',
  full: 'refused',
  unsized: 'refused',
  replay: 'final',
  reused: 'final',
  // The copy's own condition carries the time it was built at: it fails for good.
  expired: 'final',
  changed: 'final',
  done: 'final',
  // A late copy of its POST's put may write the intent again.
  gone: 'refused',
  invalid: 'final',
  unexplained: 'refused',
};

/** A role's kind and its `who`: `claim 2` is the claim of write 2; `claim` the only one. */
export function roleParts(role: string): { kind: string; who: string } {
  const space = role.indexOf(' ');
  return space < 0 ? { kind: role, who: '' } : { kind: role.slice(0, space), who: role.slice(space + 1) };
}

/** What `reason`, the cancellation reason of `action` in role `role`, says at `now`; undefined for None. */
export function meaningOf(
  role: string,
  reason: CancellationReason,
  action: TransactItem,
  now: number,
): Meaning | undefined {
  switch (reason.code) {
    case 'None':
      return undefined;
    case 'TransactionConflict':
      return { kind: 'conflict' };
    case 'ThrottlingError':
      return { kind: 'throttled' };
    case 'ValidationError':
      return { kind: 'invalid' };
    case 'ConditionalCheckFailed':
      return failedCondition(roleParts(role).kind, reason.item, action, now);
    default:
      return { kind: 'unexplained' };
  }
}

/** A failed condition, by the kind of the action's role, from the item DynamoDB found (ALL_OLD). */
function failedCondition(kind: string, found: Item | undefined, action: TransactItem, now: number): Meaning {
  switch (kind) {
    case 'counter':
      return counterFound(found as Counter | undefined, action);
    case 'claim':
      return claimFound(found, action, now);
    case 'record':
      return { kind: 'changed', current: found };
    case 'outcome':
      return { kind: 'done' };
    case 'intent':
      return { kind: 'gone' };
    default:
      return { kind: 'unexplained' };
  }
}

/** A claim as found: expired (by now), or kept for this request (the same fingerprint as the action's) or another. */
function claimFound(found: Item | undefined, action: TransactItem, now: number): Meaning {
  const expires = found?.[EXPIRES];
  if (found === undefined || typeof expires !== 'number' || expires * 1000 <= now) return { kind: 'expired' };
  const mine = 'Put' in action ? action.Put.Item.fingerprint : undefined;
  return found.fingerprint === mine ? { kind: 'replay', kept: found } : { kind: 'reused' };
}

/**
 * The counter as found: the seed's put finds one made; a POST's move (expecting `next` as `:first`) finds it moved
 * on, or no room; a size change, no room. No `bytes` or, nothing else failing, no `version`: 'unsized'.
 */
function counterFound(found: Counter | undefined, action: TransactItem): Meaning {
  if ('Put' in action) return { kind: 'moved', counter: found };
  if (found?.bytes === undefined) return { kind: 'unsized' };
  const values = 'Update' in action ? action.Update.ExpressionAttributeValues : undefined;
  if (values?.[':first'] !== undefined && found.next !== values[':first']) return { kind: 'moved', counter: found };
  const room = values?.[':room'];
  if (typeof room === 'number' && found.bytes > room) return { kind: 'full', counter: found };
  // Where it was expected, with room: what failed is that it has no version yet.
  return found.version === undefined ? { kind: 'unsized' } : { kind: 'full', counter: found };
}

/** One write of a transaction, as `decide` reads it: its roles' `who`, its key's claim, its bytes in the list at an id. */
export interface Share {
  readonly who: string;
  readonly claim: IdempotencyClaim | undefined;
  /** Its record's bytes in the list at an id; none for a write of no record (the claim of a POST settled before). */
  readonly bytes?: (id: number) => number;
}

/** A write the cancellation answers: its key's replay (a refusal too), KeyReused (422), ListFull (409), or done (answered elsewhere). */
export type Settled = Replay | 'done';

export type Next =
  /** The counter moved on: from where it is now (POSTs), or read again (the queue, the seed). */
  | { readonly kind: 'moved'; readonly counter: Counter | undefined }
  /** The record changed or went since it was read: from it as it is (PUT, DELETE). */
  | { readonly kind: 'changed'; readonly current: Item | undefined }
  /** Count the list, then again. */
  | { readonly kind: 'size the list' }
  /** Again from the same read, without the writes settled; `counter` as found when the list was full. */
  | { readonly kind: 'again'; readonly counter: Counter | undefined }
  /** An intent is gone: read the queue again. */
  | { readonly kind: 'read again' }
  | { readonly kind: 'unexplained' };

export interface Decision {
  readonly settled: ReadonlyMap<string, Settled>;
  readonly next: Next;
}

/** What `decide` needs of the table, as it is now: the time (claims expire) and the list's limit. */
export function decidingAt(table: TableAccess): { now: number; maxListBytes: number } {
  return { now: table.runtime.now(), maxListBytes: table.maxListBytes };
}

/**
 * A cancellation's decision, alike for every write: a key claimed before settles its write (replay or KeyReused), a
 * found outcome its POST (done); then counter unsized, moved, record changed; no room refuses, in order, what doesn't
 * fit (unless keys settled some: the rest may fit); any settled or claim expired: again; intent gone: read again.
 */
export function decide(
  meanings: Readonly<Record<string, Meaning | undefined>>,
  shares: readonly Share[],
  { now, maxListBytes }: { readonly now: number; readonly maxListBytes: number },
): Decision {
  const settled = new Map<string, Settled>();
  let expired = false;
  let intentGone = false;
  for (const [role, meaning] of Object.entries(meanings)) {
    const { kind, who } = roleParts(role);
    // A claim that expired between meaningOf and here replays nothing: claimed anew, as one expired.
    const replay = meaning?.kind === 'replay' && replayOf(meaning.kept, shares.find((s) => s.who === who)?.claim, now);
    if (replay) settled.set(who, replay);
    if (meaning?.kind === 'reused') settled.set(who, new KeyReused());
    if (meaning?.kind === 'expired' || replay === undefined) expired = true;
    if (meaning?.kind === 'done') settled.set(who, 'done');
    if (kind === 'intent' && meaning?.kind === 'gone') intentGone = true;
  }
  const counter = meanings.counter;
  if (counter?.kind === 'unsized') return { settled, next: { kind: 'size the list' } };
  if (counter?.kind === 'moved') return { settled, next: counter };
  const record = meanings.record;
  if (record?.kind === 'changed') return { settled, next: record };
  if (counter?.kind === 'full' && settled.size === 0) {
    refuseWhatDoesNotFit(counter.counter, maxListBytes, shares, settled);
  }
  if (settled.size > 0 || expired || counter?.kind === 'full') {
    return { settled, next: { kind: 'again', counter: counter?.kind === 'full' ? counter.counter : undefined } };
  }
  return { settled, next: { kind: intentGone ? 'read again' : 'unexplained' } };
}

/** With the list as `counter` has it, within `limit` bytes, refuses (ListFull), in order, each write that would not fit. */
function refuseWhatDoesNotFit(
  counter: Counter,
  limit: number,
  shares: readonly Share[],
  settled: Map<string, Settled>,
) {
  let room = limit - (counter.bytes ?? 0);
  let id = counter.next;
  for (const { who, bytes } of shares) {
    if (bytes === undefined) continue;
    const size = bytes(id);
    if (size <= room) {
      room -= size;
      id++;
    } else {
      settled.set(who, new ListFull());
    }
  }
}
