import { ConditionalCheckFailedException, DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type QueryCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { StoreUnavailable } from './errors';
import { FIRST_NEW_ID, SEED_TODOS, type Todo, type TodoPatch, type TodoStore } from './todos';

/**
 * The table design (the same as the `TodosTable` resource in serverless.yml):
 *
 * - every Todo is an item under the partition key `pk = "TODO"` with the numeric sort key `id`,
 *   so one Query returns the whole list in id order, which is creation order;
 * - the id counter is the item `pk = "COUNTER", id = 0`, whose `next` attribute is the next id
 *   to hand out; it is advanced atomically with `ADD`, so ids are never reused, whatever the
 *   number of containers, deletes or restarts.
 *
 * A single partition caps the table near 1,000 writes/s, far above what one to-do list needs.
 */
export const TABLE_KEY = { partition: 'pk', sort: 'id' } as const;
const TODO_PARTITION = 'TODO';
const COUNTER_KEY = { pk: 'COUNTER', id: 0 };

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

/** True for the error DynamoDB gives when a condition on a write did not hold. */
function conditionFailed(error: unknown): boolean {
  return error instanceof ConditionalCheckFailedException;
}

export class DynamoDbTodoStore implements TodoStore {
  #seeded: Promise<void> | undefined;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly options: DynamoDbStoreOptions = {},
  ) {}

  list(): Promise<Todo[]> {
    return this.#call(async () => {
      const todos: Todo[] = [];
      let startKey: QueryCommandOutput['LastEvaluatedKey'];
      do {
        const page = await this.db.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': TODO_PARTITION },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
            Limit: this.options.pageSize,
          }),
        );
        for (const item of page.Items ?? []) todos.push(toTodo(item));
        startKey = page.LastEvaluatedKey;
      } while (startKey !== undefined);
      return todos;
    });
  }

  get(id: number): Promise<Todo | undefined> {
    return this.#call(async () => {
      const { Item } = await this.db.send(
        new GetCommand({ TableName: this.table, Key: todoKey(id), ConsistentRead: true }),
      );
      return Item && toTodo(Item);
    });
  }

  create(title: string): Promise<Todo> {
    return this.#call(async () => {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: COUNTER_KEY,
          UpdateExpression: 'ADD #next :one',
          // Never create the counter here: only seeding does, so an unseeded table cannot hand out id 1.
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#next': 'next' },
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'UPDATED_OLD',
        }),
      );
      const todo: Todo = { id: Number(Attributes?.next), title, completed: false };
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: TODO_PARTITION, ...todo },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return todo;
    });
  }

  update(id: number, patch: TodoPatch): Promise<Todo | undefined> {
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
    if (sets.length === 0) return this.get(id);
    return this.#call(async () => {
      try {
        const { Attributes } = await this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: todoKey(id),
            UpdateExpression: `SET ${sets.join(', ')}`,
            // Without this an update would create the item: a PUT racing a DELETE could resurrect it.
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: values,
            ReturnValues: 'ALL_NEW',
          }),
        );
        return Attributes && toTodo(Attributes);
      } catch (error) {
        if (conditionFailed(error)) return undefined;
        throw error;
      }
    });
  }

  remove(id: number): Promise<boolean> {
    return this.#call(async () => {
      try {
        await this.db.send(
          new DeleteCommand({ TableName: this.table, Key: todoKey(id), ConditionExpression: 'attribute_exists(pk)' }),
        );
        return true;
      } catch (error) {
        if (conditionFailed(error)) return false;
        throw error;
      }
    });
  }

  /** Runs one store operation once the table is seeded; any failure on the way is StoreUnavailable. */
  async #call<T>(operation: () => Promise<T>): Promise<T> {
    try {
      await (this.#seeded ??= this.#seed().catch((error: unknown) => {
        // Let the next request try again rather than keep a failed seed forever.
        this.#seeded = undefined;
        throw error;
      }));
      return await operation();
    } catch (error) {
      throw new StoreUnavailable('DynamoDB request failed', { cause: error });
    }
  }

  /**
   * Records 1 and 2, then the counter, each written only if absent. The counter goes last and
   * marks the table as seeded: a container that finds it never writes a seed record again, so a
   * record 1 deleted later stays deleted, and cold starts that race at the table's birth all
   * write the same records once (conditional puts), none overwriting the counter. dynalite,
   * which the tests run on, has no transactions, so this uses single-item conditions only.
   */
  async #seed(): Promise<void> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.table, Key: COUNTER_KEY, ConsistentRead: true }),
    );
    if (Item !== undefined) return;
    for (const todo of SEED_TODOS) await this.#putIfAbsent({ pk: TODO_PARTITION, ...todo });
    await this.#putIfAbsent({ ...COUNTER_KEY, next: FIRST_NEW_ID });
  }

  async #putIfAbsent(item: Record<string, unknown>): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
      );
    } catch (error) {
      if (!conditionFailed(error)) throw error;
    }
  }
}

/**
 * The SDK's retries, set on purpose: three attempts with its standard backoff and short
 * timeouts, so an unreachable, hanging or throttling DynamoDB becomes a 503 within about
 * 7 s, inside the 10 s function timeout, instead of a hang. Without throwOnRequestTimeout
 * the SDK only logs a warning when requestTimeout passes and goes on waiting.
 */
export function dynamoDbClientConfig(endpoint: string | undefined): DynamoDBClientConfig {
  return {
    maxAttempts: 3,
    retryMode: 'standard',
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000, throwOnRequestTimeout: true },
    ...(endpoint === undefined ? {} : { endpoint }),
  };
}

export function documentClient(config: DynamoDBClientConfig): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient(config));
}

/** The store as configured by the environment: TODOS_TABLE, and DYNAMODB_ENDPOINT locally. */
export function dynamoDbStoreFromEnv(env: NodeJS.ProcessEnv = process.env): DynamoDbTodoStore {
  const table = env.TODOS_TABLE;
  if (table === undefined || table === '') throw new Error('TODOS_TABLE must name the DynamoDB table');
  return new DynamoDbTodoStore(documentClient(dynamoDbClientConfig(env.DYNAMODB_ENDPOINT)), table);
}
