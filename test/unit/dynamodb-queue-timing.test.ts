import { describe, expect, it } from '@jest/globals';
import type { DynamoDb, Item } from '../../lib/dynamodb/client';
import { PACING, newQueueView } from '../../lib/dynamodb/pacing';
import { payloadOf, queuePost } from '../../lib/dynamodb/queue';
import { COUNTER_KEY } from '../../lib/dynamodb/table';
import { MAX_LIST_BYTES } from '../../lib/list-size';
import { fakeRuntime } from '../support/fake-runtime';

/**
 * What a queued POST learns, it learns as of when DynamoDB answered (lib/dynamodb/queue.ts, `looked`): a look that is
 * throttled answers a second or more after it was sent, and a container that dated what it saw at the sending took
 * others' work for older than it was, and wrote its next POSTs alone, racing the queue (the scale model at 400 POSTs a
 * second over 256 containers: twice as many POSTs alone, 207.6 POSTs a second carried against 227.8). On a DynamoDB of
 * the test's own, in fake time. No Java.
 */

const START = Date.UTC(2026, 11, 7);
/** How long the look takes to answer: a throttled Query, retried. */
const LOOK_MS = 1_500;

/** Another container's intent at the head of the queue, ahead of this POST's. */
const head: Item = {
  pk: COUNTER_KEY.pk,
  id: (START - 5) * 1000,
  uuid: 'another container',
  payload: payloadOf({ request: { title: 'ahead' }, claim: undefined }),
};

describe("a queued POST's look", () => {
  it('is learnt at the moment DynamoDB answered it, not the moment it was sent', async () => {
    const { clock, runtime } = fakeRuntime(START, () => 'mine');
    const counter = { ...COUNTER_KEY, next: 3, bytes: 100, version: 1, edits: 0, listId: 'a list' };
    let mine: Item | undefined;
    let looks = 0;
    const dynamodb: DynamoDb = {
      getItem: () => Promise.resolve(counter),
      query: () => {
        looks++;
        const items = [counter, head, ...(mine ? [mine] : [])];
        return new Promise((resolve) => {
          runtime.after(LOOK_MS, () => {
            resolve({ items, lastKey: undefined });
          });
        });
      },
      putItem: (input) => {
        mine = input.Item;
        return Promise.resolve();
      },
      updateItem: () => Promise.resolve(),
      deleteItem: () => Promise.resolve(),
      transactWriteItems: () => Promise.resolve(),
    };
    const table = { name: 'todos', dynamodb, runtime, maxListBytes: MAX_LIST_BYTES };
    const view = newQueueView();
    const request = new AbortController();
    const post = { request: { title: 'behind another container' }, claim: undefined };

    const queued = queuePost(table, view, PACING, post, request.signal, START + 9_000).catch(() => 'stopped');
    await clock.tickAsync(LOOK_MS);

    expect(looks).toBe(1);
    // Behind another container's head: others are at work, as of the look's answer.
    expect(view.othersSeenAt).toBe(START + LOOK_MS);
    request.abort(new Error('the test is done'));
    await clock.runAllAsync();
    await queued;
  });
});
