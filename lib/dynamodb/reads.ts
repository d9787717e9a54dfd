import { TODO_PARTITION, type Item, type TableAccess } from './table';

/**
 * Reads, each strongly consistent, so that a client reads its own writes. A list past DynamoDB's
 * 1 MB page is read page by page; each page is as DynamoDB had it when it read that page, so a
 * list of several pages is not one snapshot (docs/design.md says what it may show).
 */

/** Every item under the Todo partition, in id order: every page of the Query. */
export async function todoItems(table: TableAccess, signal: AbortSignal, pageSize?: number): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Item | undefined;
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

export function getItem(table: TableAccess, key: Item, signal: AbortSignal): Promise<Item | undefined> {
  return table.dynamodb.getItem({ TableName: table.name, Key: key, ConsistentRead: true }, signal);
}
