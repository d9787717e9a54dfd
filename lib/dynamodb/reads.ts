import { TODO_PARTITION, todoKey, type Item, type TableAccess } from './table';

/** Reads, strongly consistent: a client reads its own writes. Each 1 MB page is as it was (list.ts: one snapshot). */

/** The items under the Todo partition from id `from` on (all of them by default), in id order: every page of the Query. */
export async function todoItems(
  table: TableAccess,
  signal: AbortSignal,
  { pageSize, from }: { pageSize?: number; from?: number } = {},
): Promise<Item[]> {
  const items: Item[] = [];
  // A Query starts after its ExclusiveStartKey, which need not be an item's: after id from - 1 is from id `from` on.
  let startKey: Item | undefined = from === undefined ? undefined : todoKey(from - 1);
  do {
    const page = await table.dynamodb.query(
      {
        TableName: table.name,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': TODO_PARTITION },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
        Limit: pageSize,
      },
      signal,
    );
    items.push(...page.items);
    startKey = page.lastKey;
  } while (startKey !== undefined);
  return items;
}

/** One item, strongly consistent unless not `strong` (half the units; the shared list: list.ts). */
export function getItem(table: TableAccess, key: Item, signal: AbortSignal, strong = true): Promise<Item | undefined> {
  return table.dynamodb.getItem({ TableName: table.name, Key: key, ConsistentRead: strong }, signal);
}
