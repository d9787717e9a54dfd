import { FIRST_NEW_ID, SEED_TODOS, listBytes } from '../todos';
import { backoff } from '../abort';
import { bytesOf, readCounter } from './counter';
import { COUNTER_KEY, todoItem, type Counter, type TableAccess } from './table';
import { Transaction, commit } from './transaction';
import { ITEM_IS_NEW } from './conditions';

/**
 * Records 1, 2 and the counter in one transaction, if no counter: seeded once however many containers start, never
 * after a client could edit one (a delayed seed cannot land later and bring back a record 1 a client deleted).
 */

/** Seeds the table unless it is seeded; resolves with the counter as it is. */
export async function seeded(table: TableAccess, signal: AbortSignal): Promise<Counter> {
  for (let attempt = 0; ; attempt++) {
    const counter = await readCounter(table, signal);
    if (counter !== undefined) return counter;
    const fresh: Counter = {
      next: FIRST_NEW_ID,
      bytes: bytesOf(SEED_TODOS),
      version: 0,
      edits: 0,
      listId: table.runtime.uuid(),
    };
    const transaction = new Transaction<'counter' | `record ${number}`>(table.runtime.uuid()).add('counter', {
      Put: {
        TableName: table.name,
        Item: { ...COUNTER_KEY, ...fresh },
        ConditionExpression: ITEM_IS_NEW,
      },
    });
    // No condition of their own: without a counter no client has seen them yet.
    for (const todo of SEED_TODOS) {
      transaction.add(`record ${todo.id}`, { Put: { TableName: table.name, Item: todoItem(todo, listBytes(todo)) } });
    }
    const committed = await commit(table, transaction, signal);
    if (committed === 'applied') return fresh;
    if (committed === 'superseded') continue;
    const { meanings, codes } = committed.cancelled;
    // Another container seeded first: look again.
    if (meanings.counter?.kind !== 'moved') throw new Error(`the seed was cancelled for ${codes}`);
    await backoff(signal, attempt, table.runtime);
  }
}
