import { ListFull, PreconditionFailed } from '../errors';
import {
  applyPatch,
  listBytes,
  type IdempotencyClaim,
  type Todo,
  type TodoPatch,
  type WriteOptions,
  type Written,
} from '../todos';
import { claimKey, claimPut, inFlightAtDeadline, replayOf, type KeptAnswer } from './claims';
import { editMove, prepareCounter } from './counter';
import { getItem } from './reads';
import {
  atVersion,
  storedRecord,
  storedSize,
  toTodo,
  todoKey,
  type ListTable,
  type TableAccess,
  type TodoItem,
} from './table';
import type { ConditionCheckInput } from './client';
import { decide, decidingAt } from './decisions';
import { Transaction, commit, type TransactItem } from './transaction';

/**
 * PUT and DELETE: read the record, then write in one transaction if its version is still the one read: the update or
 * delete, the list's size moved, any key's claim. Changed or gone meanwhile: read again. So a missing id is a 404
 * creating nothing, a PUT racing a DELETE cannot bring the record back, a late attempt changes nothing. A precondition
 * (If-Match, If-None-Match) is checked on the record as read; failing is a 412, kept under a key for its retry.
 */

/** What a PUT or DELETE writes, given the record as read. */
export interface Change {
  /** The record as the answer gives it: after a PUT, as it was for a DELETE. */
  readonly todo: Todo;
  /** The whole stored record, for the claim: a retry answered by another version shows that version's fields. */
  readonly kept: Todo;
  readonly growth: number;
  /** The action on the record, conditional on its version. */
  readonly write: TransactItem;
  /** Refused (412, 409): only the version is checked; the claim keeps it for retries, so no late copy applies. */
  readonly refused?: Exclude<KeptAnswer, { todo: Todo }>;
}

type Role = 'record' | 'counter' | 'claim';

/**
 * A PUT's change: the record as the patch leaves it (lib/todos.ts), as an update of the fields it names, the version
 * and the size only, keeping attributes unknown here (a newer version's); the size moves by what those changed.
 */
export function putChange(table: string, patch: TodoPatch): (current: TodoItem) => Change {
  return (current) => {
    const before = toTodo(current);
    const todo = applyPatch(before, patch);
    const growth = listBytes(todo) - listBytes(before);
    const version = atVersion(current.v);
    const named = Object.entries(patch).filter(([, value]) => value !== undefined);
    return {
      todo,
      kept: { ...storedRecord(current), ...Object.fromEntries(named) },
      growth,
      write: {
        Update: {
          TableName: table,
          Key: todoKey(current.id),
          UpdateExpression: `SET ${named.map((_, i) => `#field${i} = :field${i}, `).join('')}#v = :version, #size = :size`,
          ConditionExpression: version.ConditionExpression,
          ExpressionAttributeNames: {
            ...Object.fromEntries(named.map(([field], i) => [`#field${i}`, field])),
            '#v': 'v',
            '#size': 'size',
          },
          ExpressionAttributeValues: {
            ...Object.fromEntries(named.map(([, value], i) => [`:field${i}`, value])),
            ':version': (current.v ?? 0) + 1,
            ':size': storedSize(current) + growth,
            ...version.ExpressionAttributeValues,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    };
  };
}

/** A DELETE's change: the record gone, and its stored size off the list. */
export function deleteChange(table: string): (current: TodoItem) => Change {
  return (current) => ({
    todo: toTodo(current),
    kept: storedRecord(current),
    growth: -storedSize(current),
    write: { Delete: stillAsRead(table, current) },
  });
}

/** A refused change (see Change.refused): nothing written, on condition that the record is still as read. */
export function refusedChange(table: string, current: TodoItem, refused: NonNullable<Change['refused']>): Change {
  return {
    todo: toTodo(current),
    kept: storedRecord(current),
    growth: 0,
    write: { ConditionCheck: stillAsRead(table, current) },
    refused,
  };
}

/** The answer of a refused change, as its key keeps it. */
function refusal(refused: NonNullable<Change['refused']>): Error {
  return 'listFull' in refused ? new ListFull() : new PreconditionFailed();
}

/** The record's key, on condition that its version is still the one read. */
function stillAsRead(table: string, current: TodoItem): ConditionCheckInput {
  return {
    TableName: table,
    Key: todoKey(current.id),
    ...atVersion(current.v),
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}

export function rewriteTransaction(
  table: ListTable,
  change: Change,
  claim: IdempotencyClaim | undefined,
  { token, now }: { token: string; now: number },
): Transaction<Role> {
  const transaction = new Transaction<Role>(token).add('record', change.write);
  // Every write of a record moves the list's version, a same-size PUT too: a list holding the old one reads again.
  if (!change.refused) transaction.add('counter', editMove(table, change.growth, change.todo.id));
  if (claim !== undefined)
    transaction.add('claim', claimPut(table.name, claim, change.refused ?? { todo: change.kept }, now));
  return transaction;
}

/**
 * PUT or DELETE of record `id`, `change` made from it as read. None: a claimed key's answer (its first request may have
 * deleted it), or a 404. Deadline while another held the key: KeyInFlight (409). `precondition` failed: 412.
 */
export function rewrite(
  table: TableAccess,
  id: number,
  { claim, precondition }: Pick<WriteOptions, 'claim' | 'precondition'>,
  signal: AbortSignal,
  change: (current: TodoItem) => Change,
): Promise<Written<Todo | undefined> | undefined> {
  return inFlightAtDeadline(signal, async (contended) => {
    let current = (await getItem(table, todoKey(id), signal)) as TodoItem | undefined;
    // Refused for a full list with a key: the key is claimed for the 409, from the record as read.
    let full = false;
    for (;;) {
      if (current === undefined) {
        const kept = claim && (await getItem(table, claimKey(claim.key), signal));
        const replay = kept && replayOf(kept, claim, table.runtime.now());
        if (replay instanceof Error) throw replay;
        return replay;
      }
      const meets = precondition === undefined || precondition(toTodo(current));
      // Without a key a failed precondition writes nothing at all: the read is its answer.
      if (!meets && claim === undefined) throw new PreconditionFailed();
      const planned = full
        ? refusedChange(table.name, current, { listFull: true })
        : meets
          ? change(current)
          : refusedChange(table.name, current, { preconditionFailed: true });
      const made = { token: table.runtime.uuid(), now: table.runtime.now() };
      const committed = await commit(table, rewriteTransaction(table, planned, claim, made), signal, {
        metOthers: (met) => {
          if (met.claim?.kind === 'conflict') contended();
        },
      });
      if (committed === 'applied' && planned.refused) throw refusal(planned.refused);
      if (committed === 'applied') return { value: planned.todo, replayed: false };
      if (committed === 'superseded') continue;
      const { meanings, codes } = committed.cancelled;
      const shares = [{ who: '', claim, bytes: () => planned.growth }];
      const { settled, next } = decide(meanings, shares, decidingAt(table));
      const answer = settled.get('');
      if (answer instanceof ListFull && !answer.replayed && claim !== undefined && !planned.refused) {
        full = true;
        continue;
      }
      if (answer instanceof Error) throw answer;
      if (answer !== undefined && answer !== 'done') return answer;
      if (next.kind === 'size the list') await prepareCounter(table, signal);
      else if (next.kind === 'changed') {
        current = next.current as TodoItem | undefined;
        full = false;
      }
      // Again as it was: the key's old claim expired meanwhile.
      else if (next.kind !== 'again') throw new Error(`a write of record ${id} cancelled for ${codes}`);
    }
  });
}
