import { describe, expect, it } from '@jest/globals';
import { marshall } from '@aws-sdk/util-dynamodb';
import { event, invoke } from '../support/event';
import { handlersOn } from '../support/routes';
import { SimulatedDynamoDb } from '../../harness/simulation/dynamodb';
import type { Transport } from '../../lib/aws/https';
import { dynamoDb } from '../../lib/dynamodb/client';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';
import { logLines, withLogLevel } from '../support/logs';

/**
 * No log line carries a title, on any path where DynamoDB cancels a write for a reason the store
 * cannot explain: a cancellation's reasons come with the items DynamoDB returned (ALL_OLD), a
 * record's or a kept answer's title among them, and the error that ends the request names the
 * reasons' codes by role only. Every such path: a PUT, a DELETE, a POST alone, POSTs batched,
 * the queue's commit, the seed. (Before, each logged the reasons whole, items and all.)
 */

const SECRET = 'a title that must never be logged';

/** A DynamoDB (the simulator's) whose transactions, while `poisoned` says so, are cancelled with reasons carrying a secret title. */
function poisonedStore(poisoned: (body: string) => boolean) {
  const dynamodb = new SimulatedDynamoDb({ now: () => Date.now() });
  const transport: Transport = (operation, body) => Promise.resolve(answerOf(operation, body));
  function answerOf(operation: string, body: string) {
    if (operation === 'TransactWriteItems' && poisoned(body)) {
      const actions = (JSON.parse(body) as { TransactItems: unknown[] }).TransactItems;
      return {
        status: 400,
        body: {
          __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
          message: 'Transaction cancelled',
          CancellationReasons: actions.map(() => ({ Code: 'ValidationError', Item: marshall({ title: SECRET }) })),
        },
      };
    }
    const answer = dynamodb.handle(operation, body);
    return { status: answer.status, body: JSON.parse(answer.body) as Record<string, unknown> };
  }
  const store = () =>
    new DynamoDbTodoStore(
      dynamoDb({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, transport }),
      'todos',
    );
  return { store };
}

/** The log lines of `run` at LOG_LEVEL=debug, as text. */
async function logged(run: () => Promise<unknown>): Promise<string> {
  return JSON.stringify(await withLogLevel('debug', () => logLines(run)));
}

describe('a cancellation DynamoDB gives no reason for', () => {
  it.each([
    ['PUT', event({ method: 'PUT', id: '1', body: { title: 'changed' } })],
    ['DELETE', event({ method: 'DELETE', id: '1' })],
    ['POST alone', event({ method: 'POST', body: { title: 'new' } })],
  ])('%s: answered 503, and logs its reason codes by role, never an item or a title', async (_what, request) => {
    let poison = false;
    const { store } = poisonedStore(() => poison);
    const handlers = handlersOn(store());
    await invoke(handlers.listTodos, event({}));
    poison = true;
    const name =
      request.requestContext.http.method === 'POST'
        ? 'createTodo'
        : request.requestContext.http.method === 'PUT'
          ? 'updateTodo'
          : 'deleteTodo';
    let status = 0;
    const lines = await logged(async () => {
      status = (await invoke(handlers[name], request)).statusCode ?? 0;
    });
    expect(status).toBe(503);
    expect(lines).toContain('ValidationError');
    expect(lines).not.toContain(SECRET);
  });

  it('POSTs batched, the queue’s commit and the seed: answered 503, and no title logged', async () => {
    // The seed: the first request of a container on an empty table.
    const seeding = poisonedStore(() => true);
    const seedLines = await logged(() => invoke(handlersOn(seeding.store()).listTodos, event({})));
    expect(seedLines).toContain('ValidationError');

    // Batched: three POSTs at once in one container (the second and third go in one transaction).
    let poison = false;
    const batching = poisonedStore(() => poison);
    const container = handlersOn(batching.store());
    await invoke(container.listTodos, event({}));
    poison = true;
    const posts = () =>
      Promise.all(
        ['a', 'b', 'c'].map((title) => invoke(container.createTodo, event({ method: 'POST', body: { title } }))),
      );
    const batchLines = await logged(posts);

    // The queue: a container whose counter another moved queues its POST, and commits the queue (its intents' deletes).
    const queueing = poisonedStore((body) => body.includes('"Delete"') && body.includes('"COUNTER"'));
    const [mine, other] = [handlersOn(queueing.store()), handlersOn(queueing.store())];
    await invoke(mine.listTodos, event({}));
    await invoke(other.createTodo, event({ method: 'POST', body: { title: 'first' } }));
    let queuedStatus = 0;
    const queueLines = await logged(async () => {
      queuedStatus =
        (await invoke(mine.createTodo, event({ method: 'POST', body: { title: 'queued' } }))).statusCode ?? 0;
    });
    expect(queuedStatus).toBe(503);
    expect(queueLines).toContain('a commit of the queue cancelled');

    for (const lines of [seedLines, batchLines, queueLines]) expect(lines).not.toContain(SECRET);
  });
});
