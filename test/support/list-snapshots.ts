import { createHash } from 'node:crypto';
import type { Todo } from '../../lib/todos';

/**
 * The states a list may show while one client writes, one request at a time, and nobody else
 * does: each write answered moves the table from one state to the next, so the states that ever
 * existed are a line, S0, S1, … Sn, and a list is one snapshot exactly when its answer is one of
 * them. It must also be one that existed during its request: not before the writes answered
 * before it was sent, not after the writes sent before it was answered (linearizability, with
 * the client's clock on both sides, which only widens the window).
 *
 * Records are compared by id, completed and a digest of the title, and states by a digest of their
 * records': a list is thousands of records, and the writer leaves a state at each of its writes.
 */

/** When a request was sent and answered, on the test's clock (`performance.now()`). */
export interface Interval {
  readonly sentAt: number;
  readonly answeredAt: number;
}

/** Where a list's answer stands in the writer's history. */
export interface Placement {
  /** The state it shows (the number of writes applied), or undefined: a list that never existed. */
  readonly state: number | undefined;
  /** The first state it may show: the writes answered before it was sent. */
  readonly earliest: number;
  /** The last state it may show: the writes sent before it was answered. */
  readonly latest: number;
  /** Writes sent after it was sent and answered before it was answered: they landed during its read. */
  readonly landedWithin: number;
}

function digest(text: string): string {
  return createHash('sha1').update(text).digest('base64');
}

/** One record as the comparison sees it: its id, title digest and completed, in one string. */
export function recordPrint(todo: Todo): string {
  return `${todo.id}:${digest(todo.title)}:${todo.completed}`;
}

/** A whole list as the comparison sees it, from its records' prints in id order. */
export function listPrint(todos: readonly Todo[]): string {
  return todos.map(recordPrint).join(' ');
}

export class SequentialHistory {
  /** The state the writer has left so far: each record's print, by id. */
  readonly #records = new Map<number, string>();
  /** Each state's print, digested, and its place in the line. */
  readonly #states = new Map<string, number>();
  readonly #writes: Interval[] = [];

  /** The history from `initial`: the list as it was before the writer's first write. */
  constructor(initial: readonly Todo[]) {
    for (const todo of initial) this.#records.set(todo.id, recordPrint(todo));
    this.#remember();
  }

  /** The number of writes recorded. */
  get writes(): number {
    return this.#writes.length;
  }

  /**
   * A write the writer had answered, in the order it sent them: the record it left at `id`, or
   * undefined where it deleted it. Each must change what the list shows, or two states would be
   * one and a list could not be placed.
   */
  wrote(interval: Interval, id: number, todo: Todo | undefined): void {
    const last = this.#writes.at(-1);
    if (last !== undefined && interval.sentAt < last.answeredAt)
      throw new Error('the writer sends one write at a time');
    if (todo === undefined) this.#records.delete(id);
    else this.#records.set(id, recordPrint(todo));
    this.#writes.push(interval);
    this.#remember();
  }

  /** Where a list answered over `interval` with `print` (listPrint) stands. */
  place(print: string, interval: Interval): Placement {
    const earliest = this.#writes.filter((write) => write.answeredAt <= interval.sentAt).length;
    const latest = this.#writes.filter((write) => write.sentAt < interval.answeredAt).length;
    const landedWithin = this.#writes.filter(
      (write) => write.sentAt >= interval.sentAt && write.answeredAt <= interval.answeredAt,
    ).length;
    return { state: this.#states.get(digest(print)), earliest, latest, landedWithin };
  }

  #remember(): void {
    const print = [...this.#records.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, record]) => record)
      .join(' ');
    const state = digest(print);
    if (this.#states.has(state)) throw new Error(`write ${this.#writes.length} left a state seen before`);
    this.#states.set(state, this.#writes.length);
  }
}
