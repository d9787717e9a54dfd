import { beforeEach } from '@jest/globals';
import type { TodoStore } from '../../lib/todos';
import type { StoreUnderTest } from './stores';

/**
 * Registers a beforeEach that gives every test a fresh store and the handler built on it, and
 * returns the object the tests read them from.
 */
export function handlerOn<H>(
  fixture: StoreUnderTest,
  build: (store: TodoStore) => H,
): { store: TodoStore; handler: H } {
  const subject = {} as { store: TodoStore; handler: H };
  beforeEach(async () => {
    subject.store = await fixture.fresh();
    subject.handler = build(subject.store);
  });
  return subject;
}
