import { randomUUID } from 'node:crypto';
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type QueryCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { DynamoDbSender, backoff, documentClient, dynamoDbClientConfig, unlessAborted } from './dynamodb-client';
import { IdAllocator } from './dynamodb-ids';
import {
  COUNTER_KEY,
  ITEM_OVERHEAD_BYTES,
  MAX_TRANSACTION_BYTES,
  TODO_PARTITION,
  atVersion,
  cancellations,
  cancelledFor,
  claimKey,
  claimPut,
  conditionFailed,
  inFlightAtDeadline,
  replayOf,
  toTodo,
  todoKey,
  type Counter,
  type Item,
  type TodoItem,
  type TransactItem,
} from './dynamodb-table';
import { KeyInFlight, KeyReused, ListFull, StoreUnavailable } from './errors';
import { MAX_LIST_BYTES, listBytes } from './list-size';
import {
  FIRST_NEW_ID,
  SEED_TODOS,
  type Deadline,
  type IdempotencyClaim,
  type Todo,
  type TodoPatch,
  type TodoStore,
  type WriteOptions,
  type Written,
} from './todos';

export { TABLE_KEY } from './dynamodb-table';

/**
 * The DynamoDB store: every request reads with strong consistency and writes in transactions,
 * each with a ClientRequestToken, which DynamoDB makes idempotent for 10 minutes: when a write
 * was applied and its answer lost, the SDK's retry sends the same token and DynamoDB answers
 * "done" without applying it again, and a copy that arrives late, after the retry and after later
 * writes, applies nothing either. So no write is applied twice, and none lands late to undo a
 * later one:
 *
 * - POST writes its records and moves the counter in one transaction, in its container's turn
 *   (lib/dynamodb-ids.ts): ids have no gaps, and a retry cannot take a second one;
 * - PUT and DELETE read the record first and write on condition that its version `v` is still
 *   the one read: the answer is the record exactly as written, and the list's size moves by
 *   exactly what the write changed (lib/list-size.ts);
 * - the seed writes records 1 and 2 and the counter in one transaction, on condition that there
 *   is no counter yet: a seed delayed past another container's cannot land afterwards and bring
 *   back a record 1 a client has since deleted;
 * - an Idempotency-Key is claimed in the same transaction as the write it answers: the two are
 *   stored together or not at all, so no crash leaves a key "in progress". A request whose key is
 *   claimed gets the claim's answer (its transaction is cancelled, and the cancellation carries
 *   the claim), or KeyReused when the claim was for another request.
 *
 * A single partition caps the table near 1,000 writes/s, far above what one to-do list needs.
 */

/** DynamoDB's limit on one transaction's actions: 100, one of them the counter. */
const MAX_BATCH_ITEMS = 99;

/** The deadline of a call that gives none: as long as a request of a 10 s function would have. */
const DEFAULT_BUDGET_MS = 9_000;
const defaultDeadline = () => Date.now() + DEFAULT_BUDGET_MS;

export interface DynamoDbStoreOptions {
  /** Items per Query page; DynamoDB's own 1 MB page applies too. Small values test pagination. */
  pageSize?: number;
}

/** A POST waiting for its record to be written, with others, in the next transaction. */
interface PendingCreate {
  readonly title: string;
  readonly claim: IdempotencyClaim | undefined;
  readonly signal: AbortSignal;
  readonly deadline: Deadline;
  resolve(written: Written<Todo>): void;
  reject(error: unknown): void;
}

/** The errors a store answers with on purpose; anything else on the way is StoreUnavailable. */
const ANSWERS = [StoreUnavailable, ListFull, KeyReused, KeyInFlight];

const written = <T>(value: T): Written<T> => ({ value, replayed: false });

export class DynamoDbTodoStore implements TodoStore {
  readonly #dynamo = new DynamoDbSender();
  readonly #ids: IdAllocator;
  #seeded: Promise<void> | undefined;
  /** POSTs waiting for the transaction in flight to finish; they go together in the next one. */
  readonly #pending: PendingCreate[] = [];
  #committing = false;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly options: DynamoDbStoreOptions = {},
  ) {
    this.#ids = new IdAllocator(this.#dynamo, db, table, (signal) => this.#sizeList(signal));
  }

  list(deadline?: Deadline): Promise<Todo[]> {
    return this.#call(deadline, async (signal) => (await this.#items(signal)).map(toTodo));
  }

  get(id: number, deadline?: Deadline): Promise<Todo | undefined> {
    return this.#call(deadline, async (signal) => {
      const item = await this.#getItem(todoKey(id), signal);
      return item && toTodo(item);
    });
  }

  /**
   * POSTs that arrive while a transaction is in flight wait and then go together in the next
   * one (up to DynamoDB's limits): a burst of them in one container costs a few transactions,
   * not one each. (On Lambda a container holds one request at a time: each POST goes alone.)
   */
  create(title: string, { deadline = defaultDeadline(), claim }: WriteOptions = {}): Promise<Written<Todo>> {
    return this.#call(
      deadline,
      (signal) =>
        new Promise<Written<Todo>>((resolve, reject) => {
          const pending: PendingCreate = { title, claim, signal, deadline, resolve, reject };
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

  update(id: number, patch: TodoPatch, { deadline, claim }: WriteOptions = {}): Promise<Written<Todo> | undefined> {
    // Nothing to change: the answer is the record as it is, and no key is claimed.
    if (patch.title === undefined && patch.completed === undefined) {
      return this.get(id, deadline).then((todo) => todo && written(todo));
    }
    return this.#call(deadline, async (signal) => {
      const done = await this.#rewrite(id, claim, signal, (current) => {
        const todo: Todo = {
          id,
          title: patch.title ?? current.title,
          completed: patch.completed ?? current.completed,
        };
        const condition = atVersion(current.v);
        return {
          todo,
          growth: listBytes(todo) - listBytes(current),
          write: {
            Update: {
              TableName: this.table,
              Key: todoKey(id),
              UpdateExpression: 'SET title = :title, completed = :completed, v = :v',
              ConditionExpression: condition.expression,
              ExpressionAttributeValues: {
                ...condition.values,
                ':title': todo.title,
                ':completed': todo.completed,
                ':v': (current.v ?? 0) + 1,
              },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        };
      });
      return done?.value && { value: done.value, replayed: done.replayed };
    });
  }

  remove(id: number, { deadline, claim }: WriteOptions = {}): Promise<Written<true> | undefined> {
    return this.#call(deadline, async (signal) => {
      const done = await this.#rewrite(id, claim, signal, (current) => {
        const condition = atVersion(current.v);
        return {
          todo: current,
          growth: -listBytes(current),
          write: {
            Delete: {
              TableName: this.table,
              Key: todoKey(id),
              ConditionExpression: condition.expression,
              ...(condition.expression.includes(':') ? { ExpressionAttributeValues: condition.values } : {}),
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        };
      });
      return done && { value: true as const, replayed: done.replayed };
    });
  }

  /**
   * Runs one store operation, once the table is seeded, with an abort signal that fires at the
   * deadline; any failure on the way, the deadline included, is StoreUnavailable, unless it is
   * an answer of its own (a full list, a reused key).
   */
  async #call<T>(deadline: Deadline | undefined, operation: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    const timer = setTimeout(
      () => {
        abort.abort(new StoreUnavailable('DynamoDB did not answer before the deadline', { timedOut: true }));
      },
      (deadline ?? defaultDeadline()) - Date.now(),
    );
    try {
      await unlessAborted(this.#seed(abort.signal), abort.signal);
      return await operation(abort.signal);
    } catch (error) {
      if (ANSWERS.some((answer) => error instanceof answer)) throw error;
      throw new StoreUnavailable('DynamoDB request failed', { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A PUT or DELETE: reads the record, lets `change` say what to write, and writes it in one
   * transaction with the list's size and the claim, on condition that the record is still as
   * read; reads again and retries when it was not. Without the record, a claimed key's answer
   * (the first request may have deleted it), or undefined: a 404.
   */
  async #rewrite(
    id: number,
    claim: IdempotencyClaim | undefined,
    signal: AbortSignal,
    change: (current: TodoItem) => { todo: Todo; growth: number; write: TransactItem },
  ): Promise<Written<Todo | undefined> | undefined> {
    return inFlightAtDeadline(signal, (contended) => this.#rewriting(id, claim, signal, change, contended));
  }

  async #rewriting(
    id: number,
    claim: IdempotencyClaim | undefined,
    signal: AbortSignal,
    change: (current: TodoItem) => { todo: Todo; growth: number; write: TransactItem },
    contended: () => void,
  ): Promise<Written<Todo | undefined> | undefined> {
    let current = (await this.#getItem(todoKey(id), signal)) as TodoItem | undefined;
    for (;;) {
      if (current === undefined) {
        const kept = claim && (await this.#getItem(claimKey(claim.key), signal));
        return kept && replayOf(kept, claim);
      }
      const { todo, growth, write } = change(current);
      const items = [write, ...this.#sizeChange(growth), ...claimPut(this.table, claim, todo)];
      try {
        await this.#transact(items, signal);
        return written<Todo | undefined>(todo);
      } catch (error) {
        const reasons = cancellations(error);
        if (reasons === undefined) throw error;
        const claimReason = claim && reasons.at(-1);
        if (claimReason?.code === 'ConditionalCheckFailed' && claimReason.item) {
          const replay = replayOf(claimReason.item, claim);
          // A claim that expired just now: the next attempt claims the key anew.
          if (replay !== undefined) return replay;
          continue;
        }
        if (reasons.some(({ code }) => code === 'TransactionConflict')) {
          if (claimReason?.code === 'TransactionConflict') contended();
          await backoff(signal);
          current = (await this.#getItem(todoKey(id), signal)) as TodoItem | undefined;
          continue;
        }
        const [record] = reasons;
        const counter = growth === 0 ? undefined : reasons[1];
        if (record?.code === 'ConditionalCheckFailed') {
          // Deleted, or changed since it was read: look again.
          current = record.item as TodoItem | undefined;
          continue;
        }
        if (counter?.code === 'ConditionalCheckFailed') {
          if ((counter.item as Counter | undefined)?.bytes === undefined) {
            await this.#sizeList(signal);
            continue;
          }
          throw new ListFull();
        }
        throw error;
      }
    }
  }

  /** The counter's share of a PUT or DELETE: the list's size, moved by `growth`, within its limit. */
  #sizeChange(growth: number): TransactItem[] {
    if (growth === 0) return [];
    return [
      {
        Update: {
          TableName: this.table,
          Key: COUNTER_KEY,
          UpdateExpression: 'SET #bytes = #bytes + :growth',
          ConditionExpression: growth > 0 ? '#bytes <= :room' : 'attribute_exists(#bytes)',
          ExpressionAttributeNames: { '#bytes': 'bytes' },
          ExpressionAttributeValues: { ':growth': growth, ...(growth > 0 ? { ':room': MAX_LIST_BYTES - growth } : {}) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    ];
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
      const counter = (await this.#getItem(COUNTER_KEY, signal)) as Counter | undefined;
      if (counter !== undefined) {
        this.#ids.know(counter);
        return;
      }
      const seeded: Counter = { next: FIRST_NEW_ID, bytes: SEED_TODOS.reduce((sum, todo) => sum + listBytes(todo), 0) };
      try {
        await this.#transact(
          [
            {
              Put: {
                TableName: this.table,
                Item: { ...COUNTER_KEY, ...seeded },
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
        this.#ids.know(seeded);
        return;
      } catch (error) {
        // Another container seeded first (or is seeding now): look again.
        if (!cancelledFor(error, 'ConditionalCheckFailed', 'TransactionConflict')) throw error;
        await backoff(signal);
      }
    }
  }

  /**
   * A table seeded before the list had a size: counts it once. Every write that changes the size
   * is conditional on `bytes` existing, so none is applied while the list is counted.
   */
  async #sizeList(signal: AbortSignal): Promise<void> {
    const bytes = (await this.#items(signal)).reduce((sum, item) => sum + listBytes(toTodo(item)), 0);
    await this.#dynamo
      .send('UpdateItem', signal, (abortSignal) =>
        this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: COUNTER_KEY,
            UpdateExpression: 'SET #bytes = :bytes',
            ConditionExpression: 'attribute_not_exists(#bytes)',
            ExpressionAttributeNames: { '#bytes': 'bytes' },
            ExpressionAttributeValues: { ':bytes': bytes },
          }),
          { abortSignal },
        ),
      )
      .catch((error: unknown) => {
        // Another container counted it first.
        if (!conditionFailed(error)) throw error;
      });
  }

  /** Writes the waiting POSTs, a batch at a time, until none is left. */
  async #commitPending(): Promise<void> {
    if (this.#committing) return;
    this.#committing = true;
    try {
      while (this.#pending.length > 0) {
        const batch = this.#takeBatch();
        try {
          const outcomes = await this.#ids.create(
            batch,
            AbortSignal.any(batch.map((pending) => pending.signal)),
            Math.min(...batch.map((pending) => pending.deadline)),
          );
          batch.forEach((pending, i) => {
            const outcome = outcomes[i];
            if (outcome instanceof Error) pending.reject(outcome);
            else if (outcome !== undefined) pending.resolve(outcome);
          });
        } catch (error) {
          // A key contended to the end is a 409 for the POSTs with a key; the others timed out.
          for (const pending of batch) {
            pending.reject(
              error instanceof KeyInFlight && !pending.claim
                ? new StoreUnavailable('DynamoDB did not answer before the deadline', { timedOut: true })
                : error,
            );
          }
        }
      }
    } finally {
      this.#committing = false;
    }
  }

  /**
   * The next POSTs in arrival order, as many as one transaction takes: no two with one key (a
   * transaction may touch an item once; the second goes next, and gets the first's answer).
   */
  #takeBatch(): PendingCreate[] {
    const batch: PendingCreate[] = [];
    const keys = new Set<string>();
    let bytes = 0;
    let items = 0;
    for (const pending of [...this.#pending]) {
      const size = Buffer.byteLength(pending.title) + ITEM_OVERHEAD_BYTES;
      const adds = pending.claim ? 2 : 1;
      if (batch.length > 0 && (items + adds > MAX_BATCH_ITEMS || bytes + size * adds > MAX_TRANSACTION_BYTES)) break;
      if (pending.claim) {
        if (keys.has(pending.claim.key)) continue;
        keys.add(pending.claim.key);
      }
      this.#pending.splice(this.#pending.indexOf(pending), 1);
      batch.push(pending);
      bytes += size * adds;
      items += adds;
    }
    return batch;
  }

  /** Every item under the Todo partition, in id order: every page of the Query. */
  async #items(signal: AbortSignal): Promise<Item[]> {
    const items: Item[] = [];
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
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return items;
  }

  async #getItem(key: Record<string, unknown>, signal: AbortSignal): Promise<Item | undefined> {
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
