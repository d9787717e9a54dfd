import { randomUUID } from 'node:crypto';
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type QueryCommandOutput,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { DynamoDbSender, aborted, backoff, documentClient, dynamoDbClientConfig } from './dynamodb-client';
import { StoreUnavailable } from './errors';
import { FIRST_NEW_ID, SEED_TODOS, type Deadline, type Todo, type TodoPatch, type TodoStore } from './todos';

/**
 * The table design (the same as the `TodosTable` resource in serverless.yml):
 *
 * - every Todo is an item under the partition key `pk = "TODO"` with the numeric sort key `id`,
 *   so one Query returns the whole list in id order, which is creation order;
 * - the id counter is the item `pk = "COUNTER", id = 0`, whose `next` attribute is the next id
 *   to hand out. It exists once the table is seeded, and only then.
 *
 * Every write that a retry could get wrong is a transaction with a ClientRequestToken, which
 * DynamoDB makes idempotent for 10 minutes: when a write was applied and only its answer was
 * lost, the SDK's retry sends the same token and DynamoDB answers "done" without applying it
 * again. So a retried DELETE is a 200, not a 404; a retried POST is its 201, with no second
 * record and no skipped id; a retried seed changes nothing.
 *
 * - A record and the counter move together: a POST writes its record and sets the counter from
 *   n to n + 1 in one transaction, on condition that the counter still says n. An id is used up
 *   only with its record, so ids have no gaps, and a retry cannot take a second one.
 * - The seed writes records 1 and 2 and the counter in one transaction, on condition that there
 *   is no counter yet. A seed that was delayed past another container's cannot land afterwards
 *   and bring back a record 1 a client has since deleted: its condition fails.
 *
 * A single partition caps the table near 1,000 writes/s, far above what one to-do list needs.
 */
export const TABLE_KEY = { partition: 'pk', sort: 'id' } as const;
const TODO_PARTITION = 'TODO';
const COUNTER_KEY = { pk: 'COUNTER', id: 0 };

/** DynamoDB's limits on one transaction: 100 actions (one is the counter) and 4 MB. */
const MAX_BATCH = 99;
const MAX_BATCH_BYTES = 3_500_000;
/** A generous size of a record's item beyond its title: key, attribute names, numbers. */
const ITEM_OVERHEAD_BYTES = 100;

/** The deadline of a call that gives none: as long as a request of a 10 s function would have. */
const DEFAULT_BUDGET_MS = 9_000;

export interface DynamoDbStoreOptions {
  /** Items per Query page; DynamoDB's own 1 MB page applies too. Small values test pagination. */
  pageSize?: number;
}

/** The attributes of a stored Todo item beyond its key. */
interface TodoItem {
  pk: string;
  id: number;
  title: string;
  completed: boolean;
}

const todoKey = (id: number) => ({ pk: TODO_PARTITION, id });

function toTodo(item: Record<string, unknown>): Todo {
  const { id, title, completed } = item as unknown as TodoItem;
  return { id, title, completed };
}

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Why DynamoDB cancelled a transaction, one code per action ("None" for those that were fine). */
function cancellationCodes(error: unknown): string[] | undefined {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.map((reason) => reason.Code ?? 'None');
}

/** True when a transaction was cancelled, and so not applied, for one of these reasons only. */
function cancelledFor(error: unknown, ...codes: string[]): boolean {
  const found = cancellationCodes(error);
  return (
    found !== undefined &&
    found.some((code) => code !== 'None') &&
    found.every((code) => code === 'None' || codes.includes(code))
  );
}

/** A POST waiting for its record to be written, with others, in the next transaction. */
interface PendingCreate {
  readonly title: string;
  readonly signal: AbortSignal;
  resolve(todo: Todo): void;
  reject(error: unknown): void;
}

export class DynamoDbTodoStore implements TodoStore {
  readonly #dynamo = new DynamoDbSender();
  #seeded: Promise<void> | undefined;
  /** The counter's value after this container's last write, while no one else has moved it. */
  #nextId: number | undefined;
  /** POSTs waiting for the transaction in flight to finish; they go together in the next one. */
  readonly #pending: PendingCreate[] = [];
  #committing = false;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly options: DynamoDbStoreOptions = {},
  ) {}

  list(deadline?: Deadline): Promise<Todo[]> {
    return this.#call(deadline, async (signal) => {
      const todos: Todo[] = [];
      let startKey: QueryCommandOutput['LastEvaluatedKey'];
      do {
        const page = await this.#dynamo.send('Query', signal, (abortSignal) =>
          this.db.send(
            new QueryCommand({
              TableName: this.table,
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': TODO_PARTITION },
              ConsistentRead: true,
              ExclusiveStartKey: startKey,
              Limit: this.options.pageSize,
            }),
            { abortSignal },
          ),
        );
        for (const item of page.Items ?? []) todos.push(toTodo(item));
        startKey = page.LastEvaluatedKey;
      } while (startKey !== undefined);
      return todos;
    });
  }

  get(id: number, deadline?: Deadline): Promise<Todo | undefined> {
    return this.#call(deadline, async (signal) => {
      const item = await this.#getItem(todoKey(id), signal);
      return item && toTodo(item);
    });
  }

  /**
   * POSTs that arrive while a transaction is in flight wait and then go together in the next
   * one (up to DynamoDB's limits): a burst of them costs a few transactions, not one each, and
   * never contends with itself for the counter.
   */
  create(title: string, deadline?: Deadline): Promise<Todo> {
    return this.#call(
      deadline,
      (signal) =>
        new Promise<Todo>((resolve, reject) => {
          const pending: PendingCreate = { title, signal, resolve, reject };
          this.#pending.push(pending);
          signal.addEventListener(
            'abort',
            () => {
              // Still waiting: it leaves the queue, and no record is written for it.
              const index = this.#pending.indexOf(pending);
              if (index >= 0) this.#pending.splice(index, 1);
              reject(signal.reason as Error);
            },
            { once: true },
          );
          void this.#commitPending();
        }),
    );
  }

  update(id: number, patch: TodoPatch, deadline?: Deadline): Promise<Todo | undefined> {
    const sets: string[] = [];
    const values: Record<string, unknown> = {};
    if (patch.title !== undefined) {
      sets.push('title = :title');
      values[':title'] = patch.title;
    }
    if (patch.completed !== undefined) {
      sets.push('completed = :completed');
      values[':completed'] = patch.completed;
    }
    if (sets.length === 0) return this.get(id, deadline);
    // Setting the same fields again is harmless, so a plain write is safe to retry.
    return this.#call(deadline, async (signal) => {
      try {
        const { Attributes } = await this.#dynamo.send('UpdateItem', signal, (abortSignal) =>
          this.db.send(
            new UpdateCommand({
              TableName: this.table,
              Key: todoKey(id),
              UpdateExpression: `SET ${sets.join(', ')}`,
              // Without this an update would create the item: a PUT racing a DELETE could resurrect it.
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: values,
              ReturnValues: 'ALL_NEW',
            }),
            { abortSignal },
          ),
        );
        return Attributes && toTodo(Attributes);
      } catch (error) {
        if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return undefined;
        throw error;
      }
    });
  }

  remove(id: number, deadline?: Deadline): Promise<boolean> {
    return this.#call(deadline, async (signal) => {
      for (;;) {
        try {
          await this.#transact(
            [{ Delete: { TableName: this.table, Key: todoKey(id), ConditionExpression: 'attribute_exists(pk)' } }],
            signal,
          );
          return true;
        } catch (error) {
          if (cancelledFor(error, 'ConditionalCheckFailed')) return false;
          if (!cancelledFor(error, 'TransactionConflict')) throw error;
          await backoff(signal);
        }
      }
    });
  }

  /**
   * Runs one store operation, once the table is seeded, with an abort signal that fires at the
   * deadline; any failure on the way, the deadline included, is StoreUnavailable.
   */
  async #call<T>(deadline: Deadline | undefined, operation: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    const timer = setTimeout(
      () => {
        abort.abort(new StoreUnavailable('DynamoDB did not answer before the deadline'));
      },
      (deadline ?? Date.now() + DEFAULT_BUDGET_MS) - Date.now(),
    );
    try {
      await Promise.race([this.#seed(abort.signal), aborted(abort.signal)]);
      return await operation(abort.signal);
    } catch (error) {
      if (error instanceof StoreUnavailable) throw error;
      throw new StoreUnavailable('DynamoDB request failed', { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Seeds the table once per container; a failed seed is tried again by the next request. */
  #seed(signal: AbortSignal): Promise<void> {
    return (this.#seeded ??= this.#seedTable(signal).catch((error: unknown) => {
      this.#seeded = undefined;
      throw error;
    }));
  }

  /**
   * Records 1 and 2 and the counter, in one transaction, on condition that there is no counter
   * yet: the table is seeded at most once, however many containers start on it at once, and
   * never again once a client could have changed a seeded record.
   */
  async #seedTable(signal: AbortSignal): Promise<void> {
    for (;;) {
      const counter = await this.#getItem(COUNTER_KEY, signal);
      if (counter !== undefined) return;
      try {
        await this.#transact(
          [
            {
              Put: {
                TableName: this.table,
                Item: { ...COUNTER_KEY, next: FIRST_NEW_ID },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            // No condition of their own: without a counter no client has seen them yet.
            ...SEED_TODOS.map((todo): TransactItem => ({
              Put: { TableName: this.table, Item: { pk: TODO_PARTITION, ...todo } },
            })),
          ],
          signal,
        );
        this.#nextId ??= FIRST_NEW_ID;
        return;
      } catch (error) {
        // Another container seeded first (or is seeding now): look again.
        if (!cancelledFor(error, 'ConditionalCheckFailed', 'TransactionConflict')) throw error;
        await backoff(signal);
      }
    }
  }

  /** Writes the waiting POSTs, a transaction at a time, until none is left. */
  async #commitPending(): Promise<void> {
    if (this.#committing) return;
    this.#committing = true;
    try {
      while (this.#pending.length > 0) {
        const batch = this.#takeBatch();
        try {
          const todos = await this.#createRecords(
            batch.map((pending) => pending.title),
            AbortSignal.any(batch.map((pending) => pending.signal)),
          );
          batch.forEach((pending, i) => {
            const todo = todos[i];
            if (todo) pending.resolve(todo);
          });
        } catch (error) {
          for (const pending of batch) pending.reject(error);
        }
      }
    } finally {
      this.#committing = false;
    }
  }

  /** The next POSTs in arrival order, as many as one transaction takes. */
  #takeBatch(): PendingCreate[] {
    let bytes = 0;
    let count = 0;
    for (const { title } of this.#pending) {
      bytes += Buffer.byteLength(title) + ITEM_OVERHEAD_BYTES;
      if (count === MAX_BATCH || (count > 0 && bytes > MAX_BATCH_BYTES)) break;
      count++;
    }
    return this.#pending.splice(0, count);
  }

  /**
   * Writes records with the next ids and moves the counter past them, in one transaction on
   * condition that the counter has not moved. When another container moved it first, reads it
   * again and tries again with the ids after.
   */
  async #createRecords(titles: string[], signal: AbortSignal): Promise<Todo[]> {
    for (;;) {
      const first = this.#nextId ?? (await this.#readCounter(signal));
      const todos = titles.map((title, i): Todo => ({ id: first + i, title, completed: false }));
      try {
        await this.#transact(
          [
            {
              Update: {
                TableName: this.table,
                Key: COUNTER_KEY,
                UpdateExpression: 'SET #next = :after',
                ConditionExpression: '#next = :before',
                ExpressionAttributeNames: { '#next': 'next' },
                ExpressionAttributeValues: { ':before': first, ':after': first + todos.length },
              },
            },
            ...todos.map((todo): TransactItem => ({
              Put: {
                TableName: this.table,
                Item: { pk: TODO_PARTITION, ...todo },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            })),
          ],
          signal,
        );
        this.#nextId = first + todos.length;
        return todos;
      } catch (error) {
        this.#nextId = undefined;
        // Retried only when the counter had moved or another writer was busy with it; a record
        // already at an id the counter had not reached would fail again the same way.
        const [counter] = cancellationCodes(error) ?? [];
        if (counter !== 'ConditionalCheckFailed' && !cancelledFor(error, 'TransactionConflict')) throw error;
        await backoff(signal);
      }
    }
  }

  async #readCounter(signal: AbortSignal): Promise<number> {
    const counter = await this.#getItem(COUNTER_KEY, signal);
    if (counter === undefined) throw new Error(`table ${this.table} has no id counter`);
    return Number(counter.next);
  }

  async #getItem(key: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.#dynamo.send('GetItem', signal, (abortSignal) =>
      this.db.send(new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true }), { abortSignal }),
    );
    return Item;
  }

  /**
   * One transaction with a token of its own, which the SDK's retries of it share: if DynamoDB
   * applied it and the answer was lost, the retry is answered "done" and nothing is applied twice.
   */
  async #transact(items: TransactItem[], signal: AbortSignal): Promise<void> {
    const token = randomUUID();
    await this.#dynamo.send('TransactWriteItems', signal, (abortSignal) =>
      this.db.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: token }), { abortSignal }),
    );
  }
}

/** The store as configured by the environment: TODOS_TABLE, and DYNAMODB_ENDPOINT locally. */
export function dynamoDbStoreFromEnv(env: NodeJS.ProcessEnv = process.env): DynamoDbTodoStore {
  const table = env.TODOS_TABLE;
  if (table === undefined || table === '') throw new Error('TODOS_TABLE must name the DynamoDB table');
  return new DynamoDbTodoStore(documentClient(dynamoDbClientConfig(env.DYNAMODB_ENDPOINT)), table);
}
