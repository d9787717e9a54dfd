import { marshall } from '@aws-sdk/util-dynamodb';
import { bytesOf } from '../../lib/dynamodb/counter';
import { MAX_RAISES } from '../../lib/dynamodb/repair';
import { COUNTER_KEY, todoItem } from '../../lib/dynamodb/table';
import { SEED_TODOS, createTodo, listBytes } from '../../lib/todos';
import * as next from '../../test/support/next-version/todos';
import { listOf, seededContainer } from './clients';
import type { Item } from './dynamodb';
import { TABLE, type Answered, type Scenario, type World } from './world';

/**
 * The read repair of a list longer than one raise (lib/dynamodb/repair.ts; issue 50): records the version before
 * stored at its sizes, which version N+1, with one more field (test/support/next-version/), answers larger. A warm
 * container of N+1 lists them under faults, then with none: within ⌈records / MAX_RAISES⌉ fault-free lists, and one
 * more for a raise whose answer a fault lost (its records are chosen last), every record is stored at what N+1
 * answers, and the counter covers the list N+1 answers. The invariants check the counter against the records at
 * every step, as in every run.
 */

/** Records the version before stored: more than one raise takes. */
const RECORDS = MAX_RAISES + 51;
/** The records N+1 finds short: those, and the seed's. */
const SHORT = RECORDS + SEED_TODOS.length;

/** A write straight to the table, as set-up: no copy, no fault, no step of the invariants. */
function write(world: World, operation: 'PutItem' | 'UpdateItem', request: Record<string, unknown>): void {
  const { status, body } = world.dynamodb.handle(operation, JSON.stringify({ TableName: TABLE, ...request }));
  if (status !== 200) throw new Error(`set-up ${operation} answered ${status}: ${body}`);
}

/** RECORDS records as this version writes them (its item, its size), and the counter moved by them, as its POSTs do. */
function writtenBefore(world: World): void {
  const todos = Array.from({ length: RECORDS }, (_, i) => createTodo({ title: `written before ${i}` }, 3 + i));
  for (const todo of todos) write(world, 'PutItem', { Item: marshall(todoItem(todo, listBytes(todo))) });
  write(world, 'UpdateItem', {
    Key: marshall(COUNTER_KEY),
    UpdateExpression: 'SET #next = :next, #bytes = #bytes + :bytes, #version = #version + :one',
    ExpressionAttributeNames: { '#next': 'next', '#bytes': 'bytes', '#version': 'version' },
    ExpressionAttributeValues: marshall({ ':next': 3 + RECORDS, ':bytes': bytesOf(todos), ':one': 1 }),
  });
}

/** What N+1's list answers of a record: its bytes there. */
function answeredByNext(item: Item): number {
  return next.listBytes(next.recordOf(item as unknown as next.Todo));
}

function repairOfAListLongerThanARaise(): Scenario {
  return async (world) => {
    await seededContainer(world);
    writtenBefore(world);
    const warm = world.container({ version: 'next' });
    world.startFaults();
    await world.answer(listOf(warm));
    world.stopFaults();
    const lists = Math.ceil(SHORT / MAX_RAISES) + 1;
    const answers: Answered<unknown>[] = [];
    for (let list = 0; list < lists; list++) answers.push(await world.answer(listOf(warm)));
    return () => {
      const violations = answers.flatMap((answer, i) =>
        'failed' in answer ? [`fault-free list ${i + 1} of ${lists} answered ${answer.failed}`] : [],
      );
      const records = world.dynamodb.items(TABLE).filter((item) => item.pk === 'TODO');
      for (const item of records) {
        if (!(Number(item.size) >= answeredByNext(item))) {
          violations.push(
            `after ${lists} fault-free lists, record ${String(item.id)} is stored at ${String(item.size)}, N+1 answers ${answeredByNext(item)}`,
          );
        }
      }
      const [counter] = world.queueItems();
      const answered = records.reduce((sum, item) => sum + answeredByNext(item), 0);
      if (!(Number(counter?.bytes) >= answered)) {
        violations.push(`the counter says ${String(counter?.bytes)} bytes, N+1's list answers ${answered}`);
      }
      return violations;
    };
  };
}

export const READ_REPAIR: Readonly<Record<string, Scenario>> = {
  [`a list of ${RECORDS} records the version before stored, repaired by a warm container of N+1`]:
    repairOfAListLongerThanARaise(),
};
