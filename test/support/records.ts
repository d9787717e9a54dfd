import type { Deadline, Todo, TodoList } from '../../lib/todos';

/** What recordsOf reads: any store, of this version's records or of another's (test/support/next-version/). */
interface ListReader<T> {
  readList(deadline?: Deadline): Promise<Omit<TodoList, 'todos'> & { readonly todos?: readonly T[] }>;
}

/**
 * The list's records as `store` reads them: what GET /todos answers, without its tag. The tests' one way to see the
 * whole list; the service reads it with its tag (TodoStore.readList), and no store keeps a reading of its own for tests.
 */
export async function recordsOf<T = Todo>(store: ListReader<T>, deadline?: Deadline): Promise<T[]> {
  const { todos } = await store.readList(deadline);
  // Without `held`, a store answers the records: a list of the tag alone is a broken store, not an empty list.
  if (todos === undefined) throw new Error('the store answered the list’s tag alone, though no tag was held');
  return [...todos];
}
