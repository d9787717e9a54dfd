import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { bytesOf } from '../lib/dynamodb/counter';
import { COUNTER_KEY, todoItem, type Counter } from '../lib/dynamodb/table';
import { MAX_LIST_BYTES } from '../lib/list-size';
import {
  FIRST_NEW_ID,
  MAX_TITLE_LENGTH,
  SEED_TODOS,
  createTodo,
  listBytes,
  titleLength,
  type Todo,
} from '../lib/todos';

/**
 * A table of the DynamoDB store filled straight in DynamoDB (BatchWriteItem), as the store would
 * have left it had requests made its records: each item laid out as lib/dynamodb/table.ts lays a
 * record out, its size in the list as its writer counts it (listBytes), and the counter after them,
 * as a seed leaves it (lib/dynamodb/seed.ts) with `next` past the last id and `bytes` their sum. A
 * list at its 6 MB limit, or of 10^5 records, in seconds and whatever the title cap: the tests and
 * benches that need a big list take it from here, never from titles of a size they assume.
 */

/** BatchWriteItem takes at most 25 items. */
const BATCH = 25;
/** Batches in flight at once. */
const WRITERS = 8;
/** A batch DynamoDB did not take whole is sent again, its unprocessed items, at most this many times. */
const BATCH_ATTEMPTS = 10;

/**
 * The character a list's answer spends most bytes on: JSON writes U+0001 as `\u0001`, and the
 * answer, a string holding that JSON (lib/list-size.ts), escapes its backslash once more: 7 bytes
 * for 1 character, which DynamoDB keeps in 1. A list filled with it is the one whose answer is
 * furthest from what the table holds, and takes the fewest records to fill.
 */
export const COSTLIEST_CHARACTER = '\u0001';

/** A title of MAX_TITLE_LENGTH characters (lib/todos.ts counts them), `name` first and then `fill`, one character. */
export function titleAtTheCap(name: string, fill = '.'): string {
  const room = MAX_TITLE_LENGTH - titleLength(name);
  if (room < 0) throw new Error(`"${name}" alone is past the title cap (${MAX_TITLE_LENGTH} characters)`);
  return name + fill.repeat(room);
}

/** The record at `id` of a full list: a title at the cap, of the character its answer spends most on. */
export function fillerRecord(id: number): Todo {
  return createTodo({ title: titleAtTheCap(`filler ${id} `, COSTLIEST_CHARACTER) }, id);
}

/**
 * The records of a list of at most `bytes` (lib/todos.ts, listBytes): the seed, then `make(id)` for
 * ids on from FIRST_NEW_ID for as long as they fit, so the list is short of `bytes` by less than
 * the next record.
 */
export function listWithin(bytes: number, make: (id: number) => Todo): Todo[] {
  const todos = [...SEED_TODOS];
  let size = bytesOf(todos);
  for (let id = FIRST_NEW_ID; size + listBytes(make(id)) <= bytes; id++) {
    const todo = make(id);
    todos.push(todo);
    size += listBytes(todo);
  }
  return todos;
}

/**
 * The records of a list filled to its limit but for `room` bytes (listWithin, of filler records):
 * what is left is at least `room`, and less than `room` and one filler record more. With no room,
 * a POST that makes the next filler record, or any larger, is refused (409).
 */
export function fullList({ room = 0, maxListBytes = MAX_LIST_BYTES } = {}): Todo[] {
  return listWithin(maxListBytes - room, fillerRecord);
}

/**
 * Writes `todos` (ids unique) into `table`, an empty table of the store's layout, and the counter
 * after them: the table as the store leaves it once it has made these records.
 */
export async function fillTable(
  documents: DynamoDBDocumentClient,
  table: string,
  todos: readonly Todo[],
): Promise<void> {
  const batches: Todo[][] = [];
  for (let i = 0; i < todos.length; i += BATCH) batches.push(todos.slice(i, i + BATCH));
  async function writer(): Promise<void> {
    for (let batch = batches.pop(); batch !== undefined; batch = batches.pop()) {
      let puts = batch.map((todo) => ({ PutRequest: { Item: todoItem(todo, listBytes(todo)) } }));
      for (let attempt = 0; puts.length > 0; attempt++) {
        if (attempt === BATCH_ATTEMPTS) throw new Error(`${table}: a batch not taken whole in ${attempt} attempts`);
        const written = await documents.send(new BatchWriteCommand({ RequestItems: { [table]: puts } }));
        puts = (written.UnprocessedItems?.[table] ?? []) as typeof puts;
      }
    }
  }
  await Promise.all(Array.from({ length: WRITERS }, writer));
  // Last, as a POST moves it after its records: a store that meets the counter finds every record it counts.
  const counter: Counter = {
    next: todos.reduce((next, todo) => Math.max(next, todo.id + 1), FIRST_NEW_ID),
    bytes: bytesOf(todos),
    version: 0,
    edits: 0,
    listId: randomUUID(),
  };
  await documents.send(new PutCommand({ TableName: table, Item: { ...COUNTER_KEY, ...counter } }));
}
