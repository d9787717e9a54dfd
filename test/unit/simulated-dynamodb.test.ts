import { describe, expect, it } from '@jest/globals';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { itemSize, type AttributeMap } from '../../harness/aws-dynamodb/requests';
import { DynamoDbError, dynamoDb, type TransactItem } from '../../lib/dynamodb/client';
import { Copies } from '../../lib/dynamodb/outcome';
import {
  internalError,
  provisionedThroughputExceeded,
  throttlingException,
  transactionConflicted,
  transactionThrottled,
} from '../../harness/simulation/answers';
import {
  MAX_ITEM_BYTES,
  SimulatedDynamoDb,
  TOKEN_WINDOW_MS,
  type Begun,
  type InProgress,
} from '../../harness/simulation/dynamodb';
import { Substitutions, Unsupported, holds, parseCondition } from '../../harness/simulation/expressions';

/**
 * The simulated DynamoDB (harness/simulation/dynamodb.ts): each expression form the store writes,
 * the answers as DynamoDB's JSON protocol gives them, a Query's pages, the two phases of a
 * request and the conflicts between them, ClientRequestToken, and DynamoDB's limits. Requests
 * are built as the store's client builds them (plain values, marshalled), answers read as it reads them.
 */

const TABLE = 'todos';
type Plain = Record<string, unknown>;

/** A simulated DynamoDB on a clock the test moves. */
function simulated() {
  const clock = { now: 1_000_000 };
  return { dynamodb: new SimulatedDynamoDb({ now: () => clock.now }), clock };
}

/** A request's body as the store's client sends it: items, keys and values marshalled. */
function wire(input: Plain): string {
  const out: Plain = { ...input };
  for (const name of ['Item', 'Key', 'ExpressionAttributeValues', 'ExclusiveStartKey']) {
    if (input[name] !== undefined) out[name] = marshall(input[name] as Plain);
  }
  return JSON.stringify(out);
}

/** Plain values as attribute values, as they travel: JSON. */
function attributes(values: Plain): AttributeMap {
  return JSON.parse(JSON.stringify(marshall(values))) as AttributeMap;
}

function transaction(actions: readonly TransactItem[], token?: string): string {
  const TransactItems = actions.map((action) =>
    Object.fromEntries(Object.entries(action).map(([kind, inner]) => [kind, JSON.parse(wire(inner as Plain))])),
  );
  return JSON.stringify({ TransactItems, ...(token !== undefined && { ClientRequestToken: token }) });
}

interface Read {
  status: number;
  /** The error's code, after `#` in `__type`, as the client reads it. */
  error?: string;
  body: Plain;
}

function read(answer: { status: number; body: string }): Read {
  const body = JSON.parse(answer.body) as Plain;
  const type = typeof body.__type === 'string' ? body.__type : undefined;
  return { status: answer.status, body, ...(type !== undefined && { error: type.slice(type.lastIndexOf('#') + 1) }) };
}

/** A cancellation's reasons, as the client reads them: codes, and the items unmarshalled. */
function reasons(answer: Read): { code: string; item?: Plain }[] {
  const list = answer.body.CancellationReasons as { Code: string; Item?: Record<string, never> }[];
  return list.map(({ Code, Item }) => ({ code: Code, ...(Item && { item: unmarshall(Item) }) }));
}

function itemOf(answer: Read): Plain | undefined {
  const item = answer.body.Item as Record<string, never> | undefined;
  return item && unmarshall(item);
}

function put(dynamodb: SimulatedDynamoDb, item: Plain, extra: Plain = {}): Read {
  return read(dynamodb.handle('PutItem', wire({ TableName: TABLE, Item: item, ...extra })));
}

function update(dynamodb: SimulatedDynamoDb, key: Plain, extra: Plain): Read {
  return read(dynamodb.handle('UpdateItem', wire({ TableName: TABLE, Key: key, ...extra })));
}

function get(dynamodb: SimulatedDynamoDb, key: Plain): Plain | undefined {
  return itemOf(read(dynamodb.handle('GetItem', wire({ TableName: TABLE, Key: key, ConsistentRead: true }))));
}

function inProgress(begun: Begun): InProgress {
  if (!('inProgress' in begun)) throw new Error(`refused: ${begun.answer.body}`);
  return begun.inProgress;
}

const OK = { status: 200, body: {} };
const todo = (id: number, extra: Plain = {}) => ({ pk: 'TODO', id, title: `todo ${id}`, completed: false, ...extra });
const key = (id: number, pk = 'TODO') => ({ pk, id });

describe('the simulated DynamoDB: expressions the store writes', () => {
  it('puts an item only where none is (attribute_not_exists(pk)), and gets it back', () => {
    const { dynamodb } = simulated();
    expect(put(dynamodb, todo(1), { ConditionExpression: 'attribute_not_exists(pk)' })).toEqual(OK);
    expect(put(dynamodb, todo(1, { title: 'again' }), { ConditionExpression: 'attribute_not_exists(pk)' })).toEqual({
      status: 400,
      error: 'ConditionalCheckFailedException',
      body: expect.objectContaining({ message: 'The conditional request failed' }),
    });
    expect(get(dynamodb, key(1))).toEqual(todo(1));
    expect(read(dynamodb.handle('GetItem', wire({ TableName: TABLE, Key: key(2), ConsistentRead: true })))).toEqual(OK);
  });

  it('claims a key that is free or expired (attribute_not_exists(pk) OR #expires <= :now), with the holder on refusal', () => {
    const { dynamodb } = simulated();
    const claim = (by: string, now: number) =>
      put(
        dynamodb,
        { pk: 'KEY#a', id: 0, by, expires: now + 100 },
        {
          ConditionExpression: 'attribute_not_exists(pk) OR #expires <= :now',
          ExpressionAttributeNames: { '#expires': 'expires' },
          ExpressionAttributeValues: { ':now': now },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      );
    expect(claim('first', 1000)).toEqual(OK);
    const refused = claim('second', 1050);
    expect(refused.error).toBe('ConditionalCheckFailedException');
    expect(itemOf(refused)).toEqual({ pk: 'KEY#a', id: 0, by: 'first', expires: 1100 });
    expect(claim('third', 1100)).toEqual(OK);
  });

  it('moves the counter: SET with a sum, a REMOVE, on condition of two comparisons', () => {
    const { dynamodb } = simulated();
    const counter = { pk: 'COUNTER', id: 0 };
    put(dynamodb, { ...counter, next: 1, bytes: 10, recent: 'x' });
    const move = (first: number, room: number, recent?: string) =>
      update(dynamodb, counter, {
        UpdateExpression: `SET #next = :after, #bytes = #bytes + :bytes${recent ? ', #recent = :recent' : ' REMOVE #recent'}`,
        ConditionExpression: '#next = :first AND #bytes <= :room',
        ExpressionAttributeNames: { '#next': 'next', '#bytes': 'bytes', '#recent': 'recent' },
        ExpressionAttributeValues: {
          ':after': first + 1,
          ':first': first,
          ':bytes': 5,
          ':room': room,
          ...(recent && { ':recent': recent }),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
    expect(move(1, 100)).toEqual(OK);
    expect(get(dynamodb, counter)).toEqual({ ...counter, next: 2, bytes: 15 });
    expect(move(2, 100, 'y')).toEqual(OK);
    expect(get(dynamodb, counter)).toEqual({ ...counter, next: 3, bytes: 20, recent: 'y' });
    const stale = move(2, 100);
    expect(stale.error).toBe('ConditionalCheckFailedException');
    expect(itemOf(stale)).toEqual({ ...counter, next: 3, bytes: 20, recent: 'y' });
    expect(move(3, 19).error).toBe('ConditionalCheckFailedException');
  });

  it('grows the size on condition (#bytes <= :room, attribute_exists(#bytes)), and sets it where none is', () => {
    const { dynamodb } = simulated();
    const counter = { pk: 'COUNTER', id: 0 };
    const grow = (growth: number, condition: string, values: Plain = {}) =>
      update(dynamodb, counter, {
        UpdateExpression: 'SET #bytes = #bytes + :growth',
        ConditionExpression: condition,
        ExpressionAttributeNames: { '#bytes': 'bytes' },
        ExpressionAttributeValues: { ':growth': growth, ...values },
      });
    expect(grow(-1, 'attribute_exists(#bytes)').error).toBe('ConditionalCheckFailedException');
    const set = {
      UpdateExpression: 'SET #bytes = :bytes',
      ConditionExpression: 'attribute_not_exists(#bytes)',
      ExpressionAttributeNames: { '#bytes': 'bytes' },
      ExpressionAttributeValues: { ':bytes': 7 },
    };
    expect(update(dynamodb, counter, set)).toEqual(OK);
    expect(update(dynamodb, counter, set).error).toBe('ConditionalCheckFailedException');
    expect(grow(3, '#bytes <= :room', { ':room': 7 })).toEqual(OK);
    expect(grow(3, '#bytes <= :room', { ':room': 7 }).error).toBe('ConditionalCheckFailedException');
    expect(grow(-4, 'attribute_exists(#bytes)')).toEqual(OK);
    expect(get(dynamodb, counter)).toEqual({ ...counter, bytes: 6 });
  });

  it('rewrites a record at its version (v = :seen; attribute_exists(pk) AND attribute_not_exists(v)), plain names unsubstituted', () => {
    const { dynamodb } = simulated();
    put(dynamodb, todo(1));
    const rewrite = (condition: string, values: Plain, v: number) =>
      update(dynamodb, key(1), {
        UpdateExpression: 'SET title = :title, completed = :completed, v = :v',
        ConditionExpression: condition,
        ExpressionAttributeValues: { ...values, ':title': `v${v}`, ':completed': true, ':v': v },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
    expect(rewrite('attribute_exists(pk) AND attribute_not_exists(v)', {}, 1)).toEqual(OK);
    expect(rewrite('attribute_exists(pk) AND attribute_not_exists(v)', {}, 2).error).toBe(
      'ConditionalCheckFailedException',
    );
    expect(rewrite('v = :seen', { ':seen': 1 }, 2)).toEqual(OK);
    expect(itemOf(rewrite('v = :seen', { ':seen': 1 }, 3))).toEqual(todo(1, { title: 'v2', completed: true, v: 2 }));
  });

  it('takes over a stalled head: AND over a parenthesised OR of three', () => {
    const { dynamodb } = simulated();
    const head = { pk: 'COUNTER', id: 5 };
    const takeOver = (now: number, by: string) =>
      update(dynamodb, head, {
        UpdateExpression: 'SET #takenAt = :now, #takenBy = :by',
        ConditionExpression:
          'attribute_exists(pk) AND (attribute_not_exists(#takenAt) OR #takenAt < :expired OR #takenBy = :by)',
        ExpressionAttributeNames: { '#takenAt': 'takenAt', '#takenBy': 'takenBy' },
        ExpressionAttributeValues: { ':now': now, ':by': by, ':expired': now - 1000 },
      });
    expect(takeOver(10_000, 'a').error).toBe('ConditionalCheckFailedException');
    expect(get(dynamodb, head)).toBeUndefined();
    put(dynamodb, { ...head, uuid: 'u' });
    expect(takeOver(10_000, 'a')).toEqual(OK);
    expect(takeOver(10_500, 'b').error).toBe('ConditionalCheckFailedException');
    expect(takeOver(10_600, 'a')).toEqual(OK);
    expect(takeOver(11_700, 'b')).toEqual(OK);
    expect(get(dynamodb, head)).toEqual({ ...head, uuid: 'u', takenAt: 11_700, takenBy: 'b' });
  });

  it('deletes on condition (#uuid = :uuid; attribute_not_exists(pk) OR #uuid = :uuid)', () => {
    const { dynamodb } = simulated();
    const intent = { pk: 'COUNTER', id: 3 };
    const mine = {
      ConditionExpression: 'attribute_not_exists(pk) OR #uuid = :uuid',
      ExpressionAttributeNames: { '#uuid': 'uuid' },
      ExpressionAttributeValues: { ':uuid': 'u1' },
    };
    expect(put(dynamodb, { ...intent, uuid: 'u1' }, mine)).toEqual(OK);
    expect(put(dynamodb, { ...intent, uuid: 'u1', again: true }, mine)).toEqual(OK);
    expect(
      put(dynamodb, { ...intent, uuid: 'u2' }, { ...mine, ExpressionAttributeValues: { ':uuid': 'u2' } }).error,
    ).toBe('ConditionalCheckFailedException');
    const remove = (uuid: string) =>
      read(
        dynamodb.handle(
          'DeleteItem',
          wire({
            TableName: TABLE,
            Key: intent,
            ConditionExpression: '#uuid = :uuid',
            ExpressionAttributeNames: { '#uuid': 'uuid' },
            ExpressionAttributeValues: { ':uuid': uuid },
          }),
        ),
      );
    expect(remove('u2').error).toBe('ConditionalCheckFailedException');
    expect(remove('u1')).toEqual(OK);
    expect(get(dynamodb, intent)).toBeUndefined();
    expect(remove('u1').error).toBe('ConditionalCheckFailedException');
  });

  it('evaluates NOT, <>, the orders of numbers and strings, and binds NOT, then AND, then OR', () => {
    const item = attributes({ n: 5, s: 'b' });
    const check = (expression: string, values: Plain) =>
      holds(parseCondition(expression, new Substitutions(undefined, attributes(values))), item);
    expect(check('n > :four AND n >= :five AND n < :six AND n <= :five', { ':four': 4, ':five': 5, ':six': 6 })).toBe(
      true,
    );
    expect(check('s < :c AND s > :a AND NOT s = :a', { ':a': 'a', ':c': 'c' })).toBe(true);
    expect(check('n <> :x AND missing <> :x', { ':x': 4 })).toBe(true);
    expect(check('missing = :x OR missing < :x OR missing >= :x', { ':x': 4 })).toBe(false);
    expect(check('n < :s', { ':s': 'z' })).toBe(false);
    expect(check('n = :x OR n = :y AND n = :z', { ':x': 5, ':y': 1, ':z': 1 })).toBe(true);
    expect(check('(n = :x OR n = :y) AND n = :z', { ':x': 5, ':y': 1, ':z': 1 })).toBe(false);
    expect(check('NOT n = :x AND n = :x', { ':x': 5 })).toBe(false);
    expect(check('n = :five', { ':five': { wrapped: 1 } })).toBe(false);
  });

  it('throws Unsupported for a form it does not model, rather than answer something', () => {
    const { dynamodb } = simulated();
    put(dynamodb, todo(1));
    for (const extra of [
      { ConditionExpression: 'begins_with(title, :t)', ExpressionAttributeValues: { ':t': 'x' } },
      { ConditionExpression: 'id BETWEEN :a AND :b', ExpressionAttributeValues: { ':a': 1, ':b': 2 } },
      { ConditionExpression: 'title.first = :t', ExpressionAttributeValues: { ':t': 'x' } },
      { ConditionExpression: 'size(title) > :t', ExpressionAttributeValues: { ':t': 1 } },
      { ReturnValues: 'ALL_NEW' },
    ])
      expect(() => put(dynamodb, todo(1), extra)).toThrow(Unsupported);
    expect(() =>
      update(dynamodb, key(1), {
        UpdateExpression: 'SET v = if_not_exists(v, :z)',
        ExpressionAttributeValues: { ':z': 0 },
      }),
    ).toThrow(Unsupported);
    expect(() =>
      dynamodb.handle('Query', wire({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', FilterExpression: 'x' })),
    ).toThrow(Unsupported);
    expect(() => dynamodb.handle('Scan', wire({ TableName: TABLE }))).toThrow(Unsupported);
  });

  it('refuses what DynamoDB refuses as invalid: names and values undefined or unused, an empty map, a key updated, a sum on nothing', () => {
    const { dynamodb } = simulated();
    put(dynamodb, todo(1));
    const invalid = { status: 400, error: 'ValidationException', body: expect.anything() };
    expect(put(dynamodb, todo(2), { ConditionExpression: '#v = :v', ExpressionAttributeValues: { ':v': 1 } })).toEqual(
      invalid,
    );
    expect(put(dynamodb, todo(2), { ConditionExpression: 'v = :v' })).toEqual(invalid);
    expect(put(dynamodb, todo(2), { ExpressionAttributeValues: { ':v': 1 } })).toEqual(invalid);
    expect(
      put(dynamodb, todo(2), { ConditionExpression: 'attribute_exists(v)', ExpressionAttributeValues: {} }),
    ).toEqual(invalid);
    expect(
      put(dynamodb, todo(2), {
        ConditionExpression: 'attribute_exists(v)',
        ExpressionAttributeNames: { '#unused': 'unused' },
      }),
    ).toEqual(invalid);
    expect(
      update(dynamodb, key(1), { UpdateExpression: 'SET id = :v', ExpressionAttributeValues: { ':v': 2 } }),
    ).toEqual(invalid);
    expect(
      update(dynamodb, key(1), { UpdateExpression: 'SET v = v + :one', ExpressionAttributeValues: { ':one': 1 } }),
    ).toEqual(invalid);
    expect(
      update(dynamodb, key(1), { UpdateExpression: 'SET v = title + :one', ExpressionAttributeValues: { ':one': 1 } }),
    ).toEqual(invalid);
    expect(
      update(dynamodb, key(1), { UpdateExpression: 'SET v = :one REMOVE v', ExpressionAttributeValues: { ':one': 1 } }),
    ).toEqual(invalid);
    expect(put(dynamodb, { pk: 'TODO', title: 'no id' })).toEqual(invalid);
    expect(get(dynamodb, key(1))).toEqual(todo(1));
  });
});

describe('the simulated DynamoDB: ALL_OLD on a failed condition', () => {
  it('gives the item with a single write’s refusal only when asked, and only if there is one', () => {
    const { dynamodb } = simulated();
    put(dynamodb, todo(1));
    const condition = { ConditionExpression: 'attribute_not_exists(pk)' };
    expect(itemOf(put(dynamodb, todo(1), { ...condition, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }))).toEqual(
      todo(1),
    );
    expect(put(dynamodb, todo(1), condition).body).not.toHaveProperty('Item');
    const absent = update(dynamodb, key(2), {
      UpdateExpression: 'SET title = :t',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':t': 'x' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(absent.error).toBe('ConditionalCheckFailedException');
    expect(absent.body).not.toHaveProperty('Item');
  });

  it('gives it in the failed action’s cancellation reason, None at the others', () => {
    const { dynamodb } = simulated();
    put(dynamodb, todo(1, { v: 3 }));
    const answer = read(
      dynamodb.handle(
        'TransactWriteItems',
        transaction([
          { Put: { TableName: TABLE, Item: todo(2), ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            ConditionCheck: {
              TableName: TABLE,
              Key: key(1),
              ConditionExpression: 'v = :seen',
              ExpressionAttributeValues: { ':seen': 2 },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          {
            Delete: {
              TableName: TABLE,
              Key: key(3),
              ConditionExpression: 'attribute_exists(pk)',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        ]),
      ),
    );
    expect(answer.error).toBe('TransactionCanceledException');
    expect(answer.body.Message).toBe(
      'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, ConditionalCheckFailed]',
    );
    expect(reasons(answer)).toEqual([
      { code: 'None' },
      { code: 'ConditionalCheckFailed', item: todo(1, { v: 3 }) },
      { code: 'ConditionalCheckFailed' },
    ]);
    expect(get(dynamodb, key(2))).toBeUndefined();
  });
});

describe('the simulated DynamoDB: Query pages', () => {
  const query = (dynamodb: SimulatedDynamoDb, extra: Plain = {}) =>
    read(
      dynamodb.handle(
        'Query',
        wire({
          TableName: TABLE,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': 'TODO' },
          ConsistentRead: true,
          ...extra,
        }),
      ),
    );
  const page = (answer: Read) => ({
    ids: (answer.body.Items as Record<string, never>[]).map((item) => unmarshall(item).id as number),
    count: answer.body.Count,
    lastKey: answer.body.LastEvaluatedKey && unmarshall(answer.body.LastEvaluatedKey as Record<string, never>),
  });

  it('reads one partition by its numeric sort key, cut at Limit, LastEvaluatedKey set even at the end', () => {
    const { dynamodb } = simulated();
    for (const id of [10, 2, 1, 30, 3]) put(dynamodb, todo(id));
    put(dynamodb, { pk: 'COUNTER', id: 0 });
    expect(page(query(dynamodb))).toEqual({ ids: [1, 2, 3, 10, 30], count: 5, lastKey: undefined });
    expect(page(query(dynamodb, { Limit: 2 }))).toEqual({ ids: [1, 2], count: 2, lastKey: key(2) });
    expect(page(query(dynamodb, { Limit: 2, ExclusiveStartKey: key(2) }))).toEqual({
      ids: [3, 10],
      count: 2,
      lastKey: key(10),
    });
    expect(page(query(dynamodb, { Limit: 2, ExclusiveStartKey: key(10) }))).toEqual({
      ids: [30],
      count: 1,
      lastKey: undefined,
    });
    expect(page(query(dynamodb, { Limit: 5 })).lastKey).toEqual(key(30));
    expect(query(dynamodb, { ExclusiveStartKey: key(0, 'COUNTER') }).error).toBe('ValidationException');
  });

  it('answers only the projected attributes, by plain names and #names', () => {
    const { dynamodb } = simulated();
    put(dynamodb, todo(1, { uuid: 'u', next: 2 }));
    const answer = query(dynamodb, {
      ProjectionExpression: 'id, #uuid, #next',
      ExpressionAttributeNames: { '#uuid': 'uuid', '#next': 'next' },
    });
    expect((answer.body.Items as Record<string, never>[]).map((item) => unmarshall(item))).toEqual([
      { id: 1, uuid: 'u', next: 2 },
    ]);
  });

  it('ends a page once the items it read reach 1 MB, however little the projection keeps', () => {
    const { dynamodb } = simulated();
    // Items of about 300 KB: three read are under 1 MB, the fourth reaches it.
    for (let id = 1; id <= 6; id++) put(dynamodb, todo(id, { title: 'x'.repeat(300_000) }));
    const first = query(dynamodb, { ProjectionExpression: 'id' });
    expect(page(first)).toEqual({ ids: [1, 2, 3, 4], count: 4, lastKey: key(4) });
    expect(first.body.ScannedCount).toBe(4);
    expect(page(query(dynamodb, { ProjectionExpression: 'id', ExclusiveStartKey: key(4) }))).toEqual({
      ids: [5, 6],
      count: 2,
      lastKey: undefined,
    });
    // Charged for the whole items read, not what the projection kept: 4 KB a unit, rounded up once a page.
    const size = itemSize(attributes(todo(1, { title: 'x'.repeat(300_000) })));
    expect(dynamodb.consumed()).toEqual([
      {
        table: TABLE,
        pk: 'TODO',
        readUnits: Math.ceil((4 * size) / 4096) + Math.ceil((2 * size) / 4096),
        writeUnits: 6 * 293,
      },
    ]);
  });
});

describe('the simulated DynamoDB: a page the simulator ends sooner', () => {
  it("ends a Query's page after pageItems items, with its LastEvaluatedKey, as 1 MB of larger items would; the next page goes on from it", () => {
    const { dynamodb } = simulated();
    for (const id of [1, 2, 3]) put(dynamodb, todo(id));
    const query = (extra: Plain, pageItems?: number) => {
      const body = wire({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'TODO' },
        ConsistentRead: true,
        ...extra,
      });
      const answer = read(
        inProgress(dynamodb.begin('Query', body, pageItems === undefined ? {} : { pageItems })).finish(),
      );
      return {
        ids: (answer.body.Items as Record<string, never>[]).map((item) => unmarshall(item).id as number),
        lastKey: answer.body.LastEvaluatedKey && unmarshall(answer.body.LastEvaluatedKey as Record<string, never>),
      };
    };
    expect(query({}, 1)).toEqual({ ids: [1], lastKey: key(1) });
    expect(query({ ExclusiveStartKey: key(1) })).toEqual({ ids: [2, 3], lastKey: undefined });
    // A Limit below it ends the page first; a page of its last item alone still says where it ended.
    expect(query({ Limit: 1 }, 2)).toEqual({ ids: [1], lastKey: key(1) });
    expect(query({ ExclusiveStartKey: key(2) }, 1)).toEqual({ ids: [3], lastKey: key(3) });
  });
});

describe('the simulated DynamoDB: two phases, and conflicts between requests in progress', () => {
  const increment = (id: number): TransactItem => ({
    Update: {
      TableName: TABLE,
      Key: key(id),
      UpdateExpression: 'SET n = n + :one',
      ConditionExpression: 'attribute_exists(n)',
      ExpressionAttributeValues: { ':one': 1 },
    },
  });
  const seeded = () => {
    const world = simulated();
    for (const id of [1, 2, 3]) put(world.dynamodb, { ...key(id), n: 0 });
    return world;
  };

  it('cancels a transaction meeting another in progress with TransactionConflict at that item, None elsewhere', () => {
    const { dynamodb } = seeded();
    const first = inProgress(dynamodb.begin('TransactWriteItems', transaction([increment(1), increment(2)])));
    const second = read(dynamodb.handle('TransactWriteItems', transaction([increment(3), increment(2)])));
    expect(second.error).toBe('TransactionCanceledException');
    expect(reasons(second)).toEqual([{ code: 'None' }, { code: 'TransactionConflict' }]);
    expect(read(first.finish())).toEqual(OK);
    expect(read(dynamodb.handle('TransactWriteItems', transaction([increment(3), increment(2)])))).toEqual(OK);
    expect(dynamodb.items(TABLE).map(({ n }) => n)).toEqual([1, 2, 1]);
  });

  it('refuses a single write on an item of a transaction in progress, and lets reads see the last commit', () => {
    const { dynamodb } = seeded();
    const running = inProgress(dynamodb.begin('TransactWriteItems', transaction([increment(1)])));
    expect(put(dynamodb, { ...key(1), n: 9 })).toEqual({
      status: 400,
      error: 'TransactionConflictException',
      body: expect.objectContaining({ message: 'Transaction is ongoing for the item' }),
    });
    expect(put(dynamodb, { ...key(2), n: 9 })).toEqual(OK);
    expect(get(dynamodb, key(1))).toEqual({ ...key(1), n: 0 });
    expect(dynamodb.inProgress()).toEqual([
      { id: running.id, operation: 'TransactWriteItems', body: expect.any(String) },
    ]);
    running.finish();
    expect(get(dynamodb, key(1))).toEqual({ ...key(1), n: 1 });
    expect(dynamodb.inProgress()).toEqual([]);
    expect(() => running.finish()).toThrow(`no request ${running.id} is in progress`);
  });

  it('cancels a transaction meeting a single write in progress; single writes on one item go in turn, each decided at finish', () => {
    const { dynamodb } = seeded();
    const create = (title: string) =>
      inProgress(
        dynamodb.begin(
          'PutItem',
          wire({ TableName: TABLE, Item: todo(7, { title }), ConditionExpression: 'attribute_not_exists(pk)' }),
        ),
      );
    const first = create('first');
    const second = create('second');
    const meeting = read(
      dynamodb.handle('TransactWriteItems', transaction([increment(1), { Delete: { TableName: TABLE, Key: key(7) } }])),
    );
    expect(reasons(meeting)).toEqual([{ code: 'None' }, { code: 'TransactionConflict' }]);
    expect(read(second.finish())).toEqual(OK);
    expect(read(first.finish()).error).toBe('ConditionalCheckFailedException');
    expect(get(dynamodb, key(7))).toEqual(todo(7, { title: 'second' }));
  });

  it('decides a transaction’s conditions at begin: a failed one answers at once and holds nothing', () => {
    const { dynamodb } = seeded();
    const begun = dynamodb.begin('TransactWriteItems', transaction([increment(1), increment(4)]));
    expect('answer' in begun && reasons(read(begun.answer))).toEqual([
      { code: 'None' },
      { code: 'ConditionalCheckFailed' },
    ]);
    expect(dynamodb.inProgress()).toEqual([]);
    expect(put(dynamodb, { ...key(1), n: 5 })).toEqual(OK);
  });

  it('refuses a transaction whose token is in progress: TransactionInProgressException', () => {
    const { dynamodb } = seeded();
    const body = transaction([increment(1)], 'token-1');
    const running = inProgress(dynamodb.begin('TransactWriteItems', body));
    expect(read(dynamodb.handle('TransactWriteItems', body))).toEqual({
      status: 400,
      error: 'TransactionInProgressException',
      body: expect.anything(),
    });
    expect(read(dynamodb.handle('TransactWriteItems', transaction([increment(3)], 'token-1'))).error).toBe(
      'TransactionInProgressException',
    );
    running.finish();
    expect(get(dynamodb, key(1))).toEqual({ ...key(1), n: 1 });
  });

  it('keeps a state’s copy apart, requests in progress included, and tells states apart by their key', () => {
    const { dynamodb } = seeded();
    const running = inProgress(dynamodb.begin('TransactWriteItems', transaction([increment(1)], 't')));
    const copy = dynamodb.clone();
    expect(copy.stateKey()).toBe(dynamodb.stateKey());
    expect(read(copy.finish(running.id))).toEqual(OK);
    expect(copy.stateKey()).not.toBe(dynamodb.stateKey());
    expect(dynamodb.items(TABLE)[0]).toEqual({ ...key(1), n: 0 });
    expect(copy.items(TABLE)[0]).toEqual({ ...key(1), n: 1 });
    running.finish();
    expect(copy.stateKey()).toBe(dynamodb.stateKey());
    expect(copy.snapshot()).toEqual({ [TABLE]: dynamodb.items(TABLE) });
  });
});

describe('the simulated DynamoDB: ClientRequestToken', () => {
  const grow = (by: number): TransactItem => ({
    Update: {
      TableName: TABLE,
      Key: key(0, 'COUNTER'),
      UpdateExpression: 'SET n = n + :by',
      ConditionExpression: 'n < :most',
      ExpressionAttributeValues: { ':by': by, ':most': 10 },
    },
  });
  const seeded = (n = 0) => {
    const world = simulated();
    put(world.dynamodb, { ...key(0, 'COUNTER'), n });
    return world;
  };
  const counted = (dynamodb: SimulatedDynamoDb) => get(dynamodb, key(0, 'COUNTER'))?.n;

  it('answers a copy of a transaction that succeeded 200 without applying it again, for 10 minutes', () => {
    const { dynamodb, clock } = seeded();
    const body = transaction([grow(1)], 'token-1');
    expect(read(dynamodb.handle('TransactWriteItems', body))).toEqual(OK);
    clock.now += TOKEN_WINDOW_MS - 1;
    expect(read(dynamodb.handle('TransactWriteItems', body))).toEqual(OK);
    expect(counted(dynamodb)).toBe(1);
    clock.now += 1;
    expect(read(dynamodb.handle('TransactWriteItems', body))).toEqual(OK);
    expect(counted(dynamodb)).toBe(2);
  });

  it('refuses another transaction with the token: IdempotentParameterMismatchException', () => {
    const { dynamodb } = seeded();
    dynamodb.handle('TransactWriteItems', transaction([grow(1)], 'token-1'));
    expect(read(dynamodb.handle('TransactWriteItems', transaction([grow(2)], 'token-1')))).toEqual({
      status: 400,
      error: 'IdempotentParameterMismatchException',
      body: expect.anything(),
    });
    expect(counted(dynamodb)).toBe(1);
  });

  it('leaves the token of a cancelled transaction unused: a copy later is evaluated afresh', () => {
    const { dynamodb } = seeded(10);
    const body = transaction([grow(1)], 'token-1');
    expect(read(dynamodb.handle('TransactWriteItems', body)).error).toBe('TransactionCanceledException');
    put(dynamodb, { ...key(0, 'COUNTER'), n: 5 });
    expect(read(dynamodb.handle('TransactWriteItems', body))).toEqual(OK);
    expect(counted(dynamodb)).toBe(6);
    // A conflict does not use it either.
    const other = transaction([grow(1)], 'token-2');
    const holder = inProgress(
      dynamodb.begin(
        'UpdateItem',
        wire({
          TableName: TABLE,
          Key: key(0, 'COUNTER'),
          UpdateExpression: 'SET m = :m',
          ExpressionAttributeValues: { ':m': 1 },
        }),
      ),
    );
    expect(read(dynamodb.handle('TransactWriteItems', other)).error).toBe('TransactionCanceledException');
    holder.finish();
    expect(read(dynamodb.handle('TransactWriteItems', other))).toEqual(OK);
    expect(counted(dynamodb)).toBe(7);
  });
});

describe('the simulated DynamoDB: limits', () => {
  const invalid = { status: 400, error: 'ValidationException', body: expect.anything() };

  it('refuses an item over 400 KB: ValidationException alone, ValidationError in a transaction', () => {
    const { dynamodb } = simulated();
    const big = 'x'.repeat(MAX_ITEM_BYTES);
    expect(put(dynamodb, todo(1, { title: big }))).toEqual(invalid);
    expect(put(dynamodb, todo(1, { title: big.slice(0, MAX_ITEM_BYTES - 100) }))).toEqual(OK);
    const growing = update(dynamodb, key(1), {
      UpdateExpression: 'SET more = :more',
      ExpressionAttributeValues: { ':more': 'y'.repeat(200) },
    });
    expect(growing).toEqual(invalid);
    const answer = read(
      dynamodb.handle(
        'TransactWriteItems',
        transaction([
          { Put: { TableName: TABLE, Item: todo(2) } },
          {
            Update: {
              TableName: TABLE,
              Key: key(1),
              UpdateExpression: 'SET more = :more',
              ExpressionAttributeValues: { ':more': 'y'.repeat(200) },
            },
          },
        ]),
      ),
    );
    expect(reasons(answer)).toEqual([{ code: 'None' }, { code: 'ValidationError' }]);
    expect(get(dynamodb, key(2))).toBeUndefined();
  });

  it('refuses a transaction of more than 100 actions, over 4 MB, or with two actions on one item', () => {
    const { dynamodb } = simulated();
    const puts = (count: number, extra: Plain = {}): TransactItem[] =>
      Array.from({ length: count }, (_, index) => ({ Put: { TableName: TABLE, Item: todo(index, extra) } }));
    expect(read(dynamodb.handle('TransactWriteItems', transaction(puts(101))))).toEqual(invalid);
    expect(read(dynamodb.handle('TransactWriteItems', transaction([])))).toEqual(invalid);
    expect(read(dynamodb.handle('TransactWriteItems', transaction(puts(11, { title: 'x'.repeat(390_000) }))))).toEqual(
      invalid,
    );
    const twice = transaction([
      { Put: { TableName: TABLE, Item: todo(1) } },
      { ConditionCheck: { TableName: TABLE, Key: key(1), ConditionExpression: 'attribute_not_exists(pk)' } },
    ]);
    expect(read(dynamodb.handle('TransactWriteItems', twice))).toEqual(invalid);
    expect(read(dynamodb.handle('TransactWriteItems', transaction(puts(100))))).toEqual(OK);
    expect(dynamodb.items(TABLE)).toHaveLength(100);
  });
});

describe('the simulated DynamoDB: capacity and faults', () => {
  it('counts write units per partition key value, a transaction’s twice', () => {
    const { dynamodb } = simulated();
    put(dynamodb, todo(1, { title: 'x'.repeat(1500) }));
    dynamodb.handle('TransactWriteItems', transaction([{ Put: { TableName: TABLE, Item: { pk: 'COUNTER', id: 0 } } }]));
    expect(dynamodb.consumed()).toEqual([
      { table: TABLE, pk: 'COUNTER', readUnits: 0, writeUnits: 2 },
      { table: TABLE, pk: 'TODO', readUnits: 0, writeUnits: 2 },
    ]);
  });

  it('builds the fault answers as DynamoDB sends them', () => {
    expect(read(internalError())).toEqual({
      status: 500,
      error: 'InternalServerError',
      body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' },
    });
    expect(read(provisionedThroughputExceeded()).error).toBe('ProvisionedThroughputExceededException');
    expect(reasons(read(transactionThrottled(3, 1)))).toEqual([
      { code: 'None' },
      { code: 'ThrottlingError' },
      { code: 'None' },
    ]);
    expect(read(throttlingException())).toMatchObject({ status: 400, error: 'ThrottlingException' });
    // A conflict at any action, the claim's say: one reason an action, in the order they went in.
    expect(reasons(read(transactionConflicted(3, 2)))).toEqual([
      { code: 'None' },
      { code: 'None' },
      { code: 'TransactionConflict' },
    ]);
  });
});

describe('the simulated DynamoDB, through the store’s own client', () => {
  const client = (dynamodb: SimulatedDynamoDb) =>
    dynamoDb({
      credentials: { accessKeyId: 'simulated', secretAccessKey: 'simulated' },
      transport: (operation, body) => {
        const { status, body: text } = dynamodb.handle(operation, body);
        return Promise.resolve({ status, body: JSON.parse(text) as Record<string, unknown> });
      },
    });

  it('reads what it wrote, and reads a cancellation’s reasons and items', async () => {
    const { dynamodb } = simulated();
    const store = client(dynamodb);
    const signal = new AbortController().signal;
    await store.putItem({ TableName: TABLE, Item: todo(1) }, signal);
    await expect(store.getItem({ TableName: TABLE, Key: key(1), ConsistentRead: true }, signal)).resolves.toEqual(
      todo(1),
    );
    await expect(
      store.query(
        {
          TableName: TABLE,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': 'TODO' },
          ConsistentRead: true,
          Limit: 1,
        },
        signal,
      ),
    ).resolves.toEqual({ items: [todo(1)], lastKey: key(1) });
    const refused = store.transactWriteItems(
      [
        {
          Put: {
            TableName: TABLE,
            Item: todo(1),
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
      ],
      'token',
      signal,
      new Copies(),
    );
    await expect(refused).rejects.toBeInstanceOf(DynamoDbError);
    await expect(refused).rejects.toMatchObject({
      name: 'TransactionCanceledException',
      cancellationReasons: [{ code: 'ConditionalCheckFailed', item: todo(1) }],
    });
  });
});
