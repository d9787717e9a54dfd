import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * The timing mode's clock: simulated time that moves only from one scheduled event to the next,
 * so a second of AWS's time costs what its events cost to compute, not a second. Events are kept
 * in a binary heap: a run at hundreds of requests a second holds thousands of timers (every
 * request's deadline), where a clock that scans its timers at each step (fake-timers') would
 * spend the run scanning. After each event, the promises it settled run to the end before the
 * next event fires (a turn of Node's event loop comes after every microtask), so the store's
 * code sees time as it would: nothing moves while it computes.
 */

interface Scheduled {
  readonly at: number;
  /** Order among events due at the same time: the order they were scheduled in. */
  readonly sequence: number;
  run: (() => void) | undefined;
}

export class EventClock {
  #now: number;
  #sequence = 0;
  readonly #heap: Scheduled[] = [];

  /** `start`: epoch ms, as the store reads the time. */
  constructor(readonly start: number) {
    this.#now = start;
  }

  now = (): number => this.#now;

  /** Simulated ms since the start. */
  elapsed(): number {
    return this.#now - this.start;
  }

  /** Runs `run` `ms` from now; returns what cancels it. */
  after = (ms: number, run: () => void): (() => void) => {
    const event: Scheduled = { at: this.#now + Math.max(0, ms), sequence: this.#sequence++, run };
    this.#push(event);
    return () => {
      event.run = undefined;
    };
  };

  /**
   * Fires events in time order until `done()` holds; throws once simulated time passes `limitMs`
   * from the start, or when nothing is left to happen and `done()` still does not hold.
   */
  async runUntil(done: () => boolean, limitMs: number): Promise<void> {
    await nextTurn();
    while (!done()) {
      const event = this.#pop();
      if (event === undefined)
        throw new Error(`nothing left to happen at ${this.elapsed()} ms, and the run is not done`);
      if (event.at - this.start > limitMs) throw new Error(`still running after ${limitMs} ms of simulated time`);
      this.#now = event.at;
      const run = event.run;
      if (run === undefined) continue;
      run();
      await nextTurn();
    }
  }

  #push(event: Scheduled): void {
    const heap = this.#heap;
    heap.push(event);
    for (let i = heap.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!earlier(heap[i], heap[parent])) break;
      swap(heap, i, parent);
      i = parent;
    }
  }

  #pop(): Scheduled | undefined {
    const heap = this.#heap;
    const first = heap[0];
    const last = heap.pop();
    if (first === undefined || last === undefined || heap.length === 0) return first;
    heap[0] = last;
    for (let i = 0; ;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < heap.length && earlier(heap[left], heap[least])) least = left;
      if (right < heap.length && earlier(heap[right], heap[least])) least = right;
      if (least === i) break;
      swap(heap, i, least);
      i = least;
    }
    return first;
  }
}

function earlier(a: Scheduled | undefined, b: Scheduled | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  return a.at < b.at || (a.at === b.at && a.sequence < b.sequence);
}

function swap(heap: Scheduled[], i: number, j: number): void {
  const a = heap[i];
  const b = heap[j];
  if (a === undefined || b === undefined) return;
  heap[i] = b;
  heap[j] = a;
}
