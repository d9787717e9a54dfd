/**
 * What the AWS profile (harness/aws-dynamodb/) needs to know of a DynamoDB request, read from its
 * JSON body as the service reads it: which items it touches, in which partition, for reading or
 * writing, and how large they are. Conflicts are decided by item, capacity by partition key value.
 */

/** A DynamoDB attribute value in the JSON protocol: `{"S":"x"}`, `{"N":"1"}`, `{"M":{…}}`… */
export type AttributeValue = Readonly<Record<string, unknown>>;
export type AttributeMap = Readonly<Record<string, AttributeValue>>;

/** One item a request touches. */
export interface Access {
  /** The item's identity: table, partition key value and sort key value. */
  readonly item: string;
  /** The capacity unit it is charged to: table and partition key value. */
  readonly partition: string;
  readonly write: boolean;
  /** The item a Put writes, for its size. */
  readonly putItem?: AttributeMap;
  /** An Update's new values, for the size it may grow to. */
  readonly updateValues?: AttributeMap;
}

export interface DynamoDbRequest {
  /** The operation, from X-Amz-Target: `TransactWriteItems`, `Query`… */
  readonly operation: string;
  readonly accesses: readonly Access[];
  /** A Query's partition, charged for what it reads. */
  readonly queried?: string;
  /** A Query that answers only some attributes (ProjectionExpression). */
  readonly projected?: boolean;
  readonly consistentRead: boolean;
  /** A TransactWriteItems' ClientRequestToken. */
  readonly token?: string;
  readonly transaction: boolean;
}

/** The table's key attributes (serverless.yml's TodosTable): partition `pk`, sort `id`. */
const PARTITION_KEY = 'pk';
const SORT_KEY = 'id';

const SINGLE_WRITES = ['PutItem', 'UpdateItem', 'DeleteItem'];

function scalar(value: AttributeValue | undefined): string {
  if (value === undefined) return '';
  const [type, inner] = Object.entries(value)[0] ?? ['', ''];
  return `${type}:${String(inner)}`;
}

function keyOf(table: string, key: AttributeMap): { item: string; partition: string } {
  const partition = `${table}/${scalar(key[PARTITION_KEY])}`;
  return { item: `${partition}/${scalar(key[SORT_KEY])}`, partition };
}

interface ActionBody {
  readonly TableName?: string;
  readonly Key?: AttributeMap;
  readonly Item?: AttributeMap;
  readonly ExpressionAttributeValues?: AttributeMap;
}

function access(action: ActionBody, kind: string): Access {
  const table = action.TableName ?? '';
  const key = action.Key ?? action.Item ?? {};
  const write = kind !== 'Get' && kind !== 'GetItem' && kind !== 'ConditionCheck';
  return {
    ...keyOf(table, key),
    write,
    ...(action.Item && { putItem: action.Item }),
    ...(kind.startsWith('Update') &&
      action.ExpressionAttributeValues && { updateValues: action.ExpressionAttributeValues }),
  };
}

/** The partition a Query reads: the value its key condition compares the partition key with. */
function queriedPartition(body: {
  TableName?: string;
  KeyConditionExpression?: string;
  ExpressionAttributeNames?: Readonly<Record<string, string>>;
  ExpressionAttributeValues?: AttributeMap;
}): string {
  const names = body.ExpressionAttributeNames ?? {};
  for (const [, name, placeholder] of (body.KeyConditionExpression ?? '').matchAll(/(#?\w+)\s*=\s*(:\w+)/g)) {
    if ((names[name ?? ''] ?? name) === PARTITION_KEY) {
      return `${body.TableName ?? ''}/${scalar(body.ExpressionAttributeValues?.[placeholder ?? ''])}`;
    }
  }
  return `${body.TableName ?? ''}/?`;
}

/** Reads a request as DynamoDB would: its operation from X-Amz-Target, the rest from its body. */
export function parseRequest(operation: string, body: string): DynamoDbRequest {
  const parsed = (body === '' ? {} : JSON.parse(body)) as ActionBody & {
    TransactItems?: Record<string, ActionBody>[];
    ClientRequestToken?: string;
    ConsistentRead?: boolean;
    KeyConditionExpression?: string;
    ExpressionAttributeNames?: Readonly<Record<string, string>>;
    ProjectionExpression?: string;
  };
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    const accesses = (parsed.TransactItems ?? []).flatMap((action) =>
      Object.entries(action).map(([kind, inner]) => access(inner, kind)),
    );
    return {
      operation,
      accesses,
      consistentRead: true,
      transaction: true,
      ...(parsed.ClientRequestToken !== undefined && { token: parsed.ClientRequestToken }),
    };
  }
  if (operation === 'Query') {
    return {
      operation,
      accesses: [],
      queried: queriedPartition(parsed),
      projected: parsed.ProjectionExpression !== undefined,
      consistentRead: parsed.ConsistentRead === true,
      transaction: false,
    };
  }
  const touchesAnItem = SINGLE_WRITES.includes(operation) || operation === 'GetItem';
  return {
    operation,
    accesses: touchesAnItem ? [access(parsed, operation)] : [],
    consistentRead: parsed.ConsistentRead === true,
    transaction: false,
  };
}

/** True for PutItem, UpdateItem and DeleteItem: a write outside a transaction. */
export function isSingleWrite(request: DynamoDbRequest): boolean {
  return SINGLE_WRITES.includes(request.operation);
}

/**
 * An item's size as DynamoDB counts it for capacity: the UTF-8 length of each attribute name
 * plus its value's size (a string's UTF-8 bytes; a number about one byte per two digits, plus
 * one; a boolean or null one byte; a list or map 3 bytes, plus one per element, plus the
 * elements). From "Item sizes and formats" in the DynamoDB Developer Guide.
 */
export function itemSize(item: AttributeMap): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueSize(value), 0);
}

function valueSize(value: AttributeValue): number {
  const [type, inner] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return Buffer.byteLength(String(inner));
    case 'N':
      return Math.ceil(String(inner).replace(/[-.]/g, '').replace(/^0+/, '').length / 2) + 1;
    case 'B':
      return Buffer.from(String(inner), 'base64').length;
    case 'M':
      return 3 + itemSize(inner as AttributeMap) + Object.keys(inner as object).length;
    case 'L':
    case 'SS':
    case 'NS':
    case 'BS': {
      const elements = inner as unknown[];
      return 3 + elements.length + elements.reduce<number>((sum, element) => sum + elementSize(element), 0);
    }
    default:
      return 1;
  }
}

/** An element of a list (an attribute value) or of a set (a plain string). */
function elementSize(element: unknown): number {
  if (typeof element === 'object' && element !== null) return valueSize(element as AttributeValue);
  return Buffer.byteLength(String(element));
}

/** The items a read answered with, each by the same identity as `Access.item`, and its size. */
export function answeredItems(partition: string, items: readonly AttributeMap[]): { item: string; size: number }[] {
  return items.map((item) => ({ item: `${partition}/${scalar(item[SORT_KEY])}`, size: itemSize(item) }));
}
