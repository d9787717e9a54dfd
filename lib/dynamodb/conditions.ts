/**
 * Every condition the store sends with a write, named for what it guards, in one place (as Powertools names its
 * idempotency conditions): a write is applied only while what it assumes still holds, so no write applies twice or
 * lands late to undo a later one (docs/design.md, "Every transaction is conditional on something that only moves
 * forward"). Each names the attributes and values it reads; the action that sends it supplies them.
 */

/**
 * The item does not exist yet: a record's id is unused (a POST writes it once), a queued POST's outcome is not decided
 * (it is decided once), the table is not seeded (once, however many containers start).
 */
export const ITEM_IS_NEW = 'attribute_not_exists(pk)';

/** The item still exists: a queued POST's intent, which a commit deletes, is still queued (taken once). */
export const ITEM_EXISTS = 'attribute_exists(pk)';

/** An Idempotency-Key is free, or its claim expired (`:now`, epoch seconds): claimed once while it lasts. */
export const KEY_FREE = 'attribute_not_exists(pk) OR #expires <= :now';

/** A record is as read: its version `:seen` (a write of it moves `v`), so a write planned from an older read fails. */
export const RECORD_AT_VERSION = 'v = :seen';

/** A record is as read, and read at version 0: it exists (was not deleted since) and no write moved its version. */
export const RECORD_UNCHANGED_SINCE_WRITTEN = 'attribute_exists(pk) AND attribute_not_exists(v)';

/**
 * The counter still gives `:first` as the next id and the list has `:room` for what a POST adds: ids are used only
 * with their records, in order, and the list never passes its limit. A counter seeded before lists had a version
 * fails it too, to be prepared first (counter.ts, prepareCounter).
 */
export const COUNTER_AT_NEXT_WITH_ROOM = '#next = :first AND #bytes <= :room AND attribute_exists(#version)';

/** The list has `:room` for what a PUT adds, and the counter has its version: the list never passes its limit. */
export const COUNTER_HAS_ROOM = '#bytes <= :room AND attribute_exists(#version)';

/** The counter has its size and version (a PUT that shrinks the list, or a DELETE, needs no room). */
export const COUNTER_SIZED_AND_VERSIONED = 'attribute_exists(#bytes) AND attribute_exists(#version)';

/** The counter has its size: the read repair moves it only once the list is counted (counter.ts, prepareCounter). */
export const COUNTER_SIZED = 'attribute_exists(#bytes)';

/**
 * None of these attributes of the counter (by their placeholders, `#name`) is set yet: whoever sets them first sets
 * them, once (counter.ts, setOnce).
 */
export function notSetYet(names: Readonly<Record<string, string>>): string {
  return Object.keys(names)
    .map((name) => `attribute_not_exists(${name})`)
    .join(' AND ');
}

/** A queued POST's intent id is free, or holds its own uuid (a retry of its put finds its first copy's). */
export const INTENT_ID_FREE_OR_MINE = 'attribute_not_exists(pk) OR #uuid = :uuid';

/** The intent at this id is this POST's (`:uuid`): a POST takes back its own intent, never another's. */
export const INTENT_IS_MINE = '#uuid = :uuid';

/**
 * The head's intent is still queued, and no other POST marked it within a lease (`:expired`), or this one did: one
 * POST at a time commits for a stalled head.
 */
export const HEAD_UNMARKED =
  'attribute_exists(pk) AND (attribute_not_exists(#takenAt) OR #takenAt < :expired OR #takenBy = :by)';

/** The list shared is older than this one (`:version`), or another list's: a shared list only moves forward. */
export const SHARED_IS_OLDER = 'attribute_not_exists(pk) OR #version < :version OR listId <> :listId';
