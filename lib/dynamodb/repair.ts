import { timeLimit } from '../abort';
import { listBytes } from '../todos';
import { DynamoDbError } from './client';
import {
  COUNTER_KEY,
  atVersion,
  storedSize,
  toTodo,
  todoKey,
  type Item,
  type TableAccess,
  type TodoItem,
} from './table';
import { roleParts } from './decisions';
import { Transaction } from './transaction';
import { COUNTER_SIZED } from './conditions';

/**
 * Read repair of the list's size (docs/design.md, "Two versions on one table"). A record stored smaller than this
 * version answers it was written by a version that did not know a field this one shows (one with a default, say): its
 * `size`, and the counter's `bytes` with it, rise to what this version answers, so that the 6 MB guard covers what
 * every running version answers. A container learns which records are short from every record it reads (a whole list,
 * the changes since its last, the list another container shared: list.ts), keeps them with the list it holds, and each
 * list raises up to MAX_RAISES of them, so a list of N short records is raised within ⌈N / MAX_RAISES⌉ lists of any
 * one container that reads the list, warm or new, when no other raises them: and one more for each raise whose outcome
 * a fault left unknown (its records are raised on their own once no other is left, which teaches what became of them).
 */

/** A record stored smaller than this version answers it: what its raise needs. */
export interface ShortRecord {
  readonly id: number;
  /** Its version as read (absent: 0): the raise is conditional on it, as every write of a record is. */
  readonly v: number | undefined;
  /** Its size as stored (`storedSize`), and as this version answers it. */
  readonly stored: number;
  readonly answered: number;
  /** A raise of it may have applied (its answer was lost): it is chosen after every other, and learnt from then. */
  readonly doubtful?: true;
}

/** The short records a container knows, by id. */
export type ShortRecords = ReadonlyMap<number, ShortRecord>;

export const NONE_SHORT: ShortRecords = new Map();

/** The most records one list raises: one transaction's actions, the counter's among them. */
export const MAX_RAISES = 99;
/** The most a list waits for its raise: about one transaction's round trips, and a retry. */
export const RAISE_WITHIN_MS = 500;

/** The record `item` holds, if it is stored smaller than this version answers it. */
export function shortOf(item: Item): ShortRecord | undefined {
  const stored = storedSize(item);
  const answered = listBytes(toTodo(item));
  if (stored >= answered) return undefined;
  const { id, v } = item as unknown as TodoItem;
  return { id, v, stored, answered };
}

/**
 * What is known short once `items` were read (each as it is now: short or not) and the records `gone` are known
 * deleted: a record read or gone is known by that read alone.
 */
export function afterRead(short: ShortRecords, items: readonly Item[], gone: readonly number[] = []): ShortRecords {
  if (items.length === 0 && gone.length === 0) return short;
  const known = new Map(short);
  for (const id of gone) known.delete(id);
  for (const item of items) {
    const record = shortOf(item);
    if (record === undefined) known.delete(item.id as number);
    else known.set(record.id, record);
  }
  return known;
}

/**
 * Raises up to MAX_RAISES of the `short` records, in one transaction, each on condition that it is still as read (a
 * late copy too), and answers what is short after it: without those raised, and with what a failed condition found
 * (another container raised it first, a write changed it, or it is gone). Best effort: the list waits for it at most
 * `withinMs`, and one not raised (throttled, unanswered) is tried again by the next list.
 */
export async function raiseShort(
  table: TableAccess,
  short: ShortRecords,
  signal: AbortSignal,
  withinMs = RAISE_WITHIN_MS,
): Promise<ShortRecords> {
  if (short.size === 0) return short;
  const chosen = choose([...short.values()], table.runtime.random);
  const transaction = raiseTransaction(table, chosen);
  const budget = timeLimit(withinMs, () => new Error('the raise of the list sizes took its time'), table.runtime);
  try {
    const raising = AbortSignal.any([signal, budget.signal]);
    await table.dynamodb.transactWriteItems(transaction.actions, transaction.token, raising, transaction.copies);
    return afterRead(
      short,
      [],
      chosen.map(({ id }) => id),
    );
  } catch (error) {
    const { items, gone } = found(table, transaction, error);
    if (items.length > 0 || gone.length > 0 || transaction.copies.fate === 'not applied') {
      return afterRead(short, items, gone);
    }
    return new Map([
      ...short,
      ...chosen.map((record): [number, ShortRecord] => [record.id, { ...record, doubtful: true }]),
    ]);
  } finally {
    budget.stop();
  }
}

/**
 * Up to MAX_RAISES of `short`, drawn at random: containers listing at once raise different records, rather than all
 * meet on the first ones (DynamoDB cancels transactions that meet on an item, and a raise found done is wasted). The
 * doubtful ones only once no other is left, and never with them: one already raised cancels the raise it is in, and
 * whatever is certainly short with it.
 */
function choose(short: readonly ShortRecord[], random: () => number): ShortRecord[] {
  const certain = short.filter((record) => !record.doubtful);
  const pool = certain.length > 0 ? certain : [...short];
  const chosen: ShortRecord[] = [];
  for (let draw = 0; draw < MAX_RAISES && pool.length > 0; draw++) {
    const [drawn] = pool.splice(Math.floor(random() * pool.length), 1);
    if (drawn !== undefined) chosen.push(drawn);
  }
  return chosen;
}

type RaiseRole = 'counter' | `record ${number}`;

/** The counter by the records' growth, and each record to its answered size and next version, if still as read. */
function raiseTransaction(table: TableAccess, chosen: readonly ShortRecord[]): Transaction<RaiseRole> {
  const transaction = new Transaction<RaiseRole>(table.runtime.uuid());
  const growth = chosen.reduce((sum, { stored, answered }) => sum + answered - stored, 0);
  // A correction to what is stored: no limit refuses it, and it changes no answer, so it moves no version.
  transaction.add('counter', {
    Update: {
      TableName: table.name,
      Key: COUNTER_KEY,
      UpdateExpression: 'SET #bytes = #bytes + :growth',
      ConditionExpression: COUNTER_SIZED,
      ExpressionAttributeNames: { '#bytes': 'bytes' },
      ExpressionAttributeValues: { ':growth': growth },
    },
  });
  for (const { id, v, answered } of chosen) {
    // A PUT or DELETE that read the record reads it again (its version moved), not land on the raised size.
    const version = atVersion(v);
    transaction.add(`record ${id}`, {
      Update: {
        TableName: table.name,
        Key: todoKey(id),
        UpdateExpression: 'SET #size = :answered, #v = :version',
        ConditionExpression: version.ConditionExpression,
        ExpressionAttributeNames: { '#size': 'size', '#v': 'v' },
        ExpressionAttributeValues: {
          ':answered': answered,
          ':version': (v ?? 0) + 1,
          ...version.ExpressionAttributeValues,
        },
        // What a failed condition found tells this container what became of the record: no read to learn it.
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
  }
  return transaction;
}

/** What the raise's cancellation found of the records whose condition failed: each as it is now, or gone. */
function found(
  table: TableAccess,
  transaction: Transaction<RaiseRole>,
  error: unknown,
): { items: Item[]; gone: number[] } {
  const items: Item[] = [];
  const gone: number[] = [];
  if (!(error instanceof DynamoDbError) || error.cancellationReasons === undefined) return { items, gone };
  const { meanings } = transaction.read(error.cancellationReasons, table.runtime.now());
  for (const [role, meaning] of Object.entries(meanings)) {
    const { kind, who } = roleParts(role);
    if (kind !== 'record' || meaning?.kind !== 'changed') continue;
    if (meaning.current === undefined) gone.push(Number(who));
    else items.push(meaning.current);
  }
  return { items, gone };
}
