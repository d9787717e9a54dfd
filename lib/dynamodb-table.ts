import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { KeyInFlight, KeyReused } from './errors';
import type { IdempotencyClaim, Todo, Written } from './todos';

/**
 * The table's layout (the same as the `TodosTable` resource in serverless.yml), in one place:
 *
 * - every Todo is an item under the partition key `pk = "TODO"` with the numeric sort key `id`,
 *   so one Query returns the whole list in id order, which is creation order; each carries a
 *   version `v` that every PUT moves on (absent: 0);
 * - the counter, `pk = "COUNTER", id = 0`: `next`, the next id to hand out, and `bytes`, the
 *   list's size as GET /todos answers it (lib/list-size.ts). It exists once the table is seeded,
 *   and only then;
 * - queued POSTs' intents, under the counter's partition, sorted by time (`id` = epoch ms × 1000
 *   plus a random part), so one Query reads the counter and the queue (lib/dynamodb-ids.ts), and
 *   each queued POST's outcome, `pk = "DONE#<uuid>", id = 0`;
 * - each claimed Idempotency-Key, `pk = "KEY#<key>", id = 0`: the request's fingerprint and the
 *   record it answered with.
 *
 * Intents, outcomes and keys carry `expires`, epoch seconds, which the table's time to live reads.
 */
export const TABLE_KEY = { partition: 'pk', sort: 'id' } as const;
export const TODO_PARTITION = 'TODO';
export const COUNTER_KEY = { pk: 'COUNTER', id: 0 };
/** DynamoDB's limit on one transaction is 4 MB: what the store lets one carry, with room for keys and names. */
export const MAX_TRANSACTION_BYTES = 3_500_000;
/** A generous size of an item beyond its title: key, attribute names, numbers. */
export const ITEM_OVERHEAD_BYTES = 100;
/** The attribute DynamoDB's time to live reads (serverless.yml): epoch seconds. */
export const EXPIRES = 'expires';

export const todoKey = (id: number) => ({ pk: TODO_PARTITION, id });
export const claimKey = (key: string) => ({ pk: `KEY#${key}`, id: 0 });
export const outcomeKey = (uuid: string) => ({ pk: `DONE#${uuid}`, id: 0 });

export type Item = Record<string, unknown>;
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** A stored Todo item: the record and its version. */
export interface TodoItem extends Todo {
  readonly v?: number;
}

export function toTodo(item: Item): Todo {
  const { id, title, completed } = item as unknown as TodoItem;
  return { id, title, completed };
}

/** The counter item; `bytes` is absent on a table seeded before the list had a size. */
export interface Counter {
  readonly next: number;
  readonly bytes?: number;
  /**
   * The ids the latest queue commits gave, by the uuid of each POST's intent (lib/dynamodb-ids.ts):
   * a waiting POST finds its id here in the look it takes anyway, instead of reading its outcome.
   */
  readonly recent?: Readonly<Record<string, number>>;
}

/** Why DynamoDB cancelled one action of a transaction, and the item it found when asked to return it. */
export interface Cancellation {
  readonly code: string;
  readonly item?: Item;
}

/** A plain write refused because its condition did not hold: what it guarded against had happened. */
export const conditionFailed = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/**
 * Why DynamoDB cancelled a transaction, action by action ("None" for those that were fine), or
 * undefined when the error is not a cancellation. Items come unmarshalled: the document client
 * leaves those of an error as DynamoDB sent them.
 */
export function cancellations(error: unknown): Cancellation[] | undefined {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: { Code?: string; Item?: Parameters<typeof unmarshall>[0] }[] })
    .CancellationReasons;
  return (reasons ?? []).map(({ Code, Item }) => ({ code: Code ?? 'None', ...(Item && { item: unmarshall(Item) }) }));
}

/** True when a transaction was cancelled, and so not applied, for one of these reasons only. */
export function cancelledFor(error: unknown, ...codes: string[]): boolean {
  const found = cancellations(error);
  return (
    found !== undefined &&
    found.some(({ code }) => code !== 'None') &&
    found.every(({ code }) => code === 'None' || codes.includes(code))
  );
}

/** The condition that an item still has the version read: absent counts as version 0. */
export function atVersion(version: number | undefined): { expression: string; values: Item } {
  return version === undefined || version === 0
    ? { expression: 'attribute_exists(pk) AND attribute_not_exists(v)', values: {} }
    : { expression: 'v = :seen', values: { ':seen': version } };
}

/** A claimed key as stored: what the claim needs to answer a retry. */
interface ClaimItem {
  readonly fingerprint: string;
  readonly [EXPIRES]: number;
  readonly todo?: Todo;
}

/**
 * The claim's item, written with the write it answers: on condition that the key is free, or
 * its claim expired (DynamoDB's time to live can take up to two days to delete it).
 */
export function claimPut(table: string, claim: IdempotencyClaim | undefined, todo: Todo | undefined): TransactItem[] {
  if (claim === undefined) return [];
  return [
    {
      Put: {
        TableName: table,
        Item: {
          ...claimKey(claim.key),
          fingerprint: claim.fingerprint,
          [EXPIRES]: Math.ceil(claim.expiresAt / 1000),
          ...(todo && { todo }),
        },
        ConditionExpression: 'attribute_not_exists(pk) OR #expires <= :now',
        ExpressionAttributeNames: { '#expires': EXPIRES },
        ExpressionAttributeValues: { ':now': Math.floor(Date.now() / 1000) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
  ];
}

/**
 * The answer a claimed key keeps, for a request with the same key: its record (none for a
 * DELETE); KeyReused when the key came with another request; undefined once the claim expired.
 */
export function replayOf(item: Item, claim: IdempotencyClaim | undefined): Written<Todo | undefined> | undefined {
  const kept = item as unknown as ClaimItem;
  if (claim === undefined || kept[EXPIRES] * 1000 <= Date.now()) return undefined;
  if (kept.fingerprint !== claim.fingerprint) throw new KeyReused();
  // DynamoDB keeps a map's fields in no order: the record is rebuilt as it was answered.
  return { value: kept.todo && toTodo(kept.todo as unknown as Item), replayed: true };
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
