/**
 * Is a history of operations on one object linearizable? That is: is there an order of its
 * operations, each taking effect at one instant between its start and its answer, in which each
 * operation, applied to the state the previous ones left, gives the answer it got? An operation
 * that got no answer (a timeout, a 503) may take effect at any instant after its start, or never.
 *
 * The search is Wing and Gong's, with Lowe's memoization, as Knossos and Porcupine run it: walk
 * the starts and answers in time order; at a start, try to take that operation's effect now
 * (unless the same set of operations has already led to the same state); at an answer of an
 * operation not yet taken, undo the last choice and try the next. It is exponential at worst,
 * and fast on histories of one record, where few operations overlap.
 */

export interface Operation<S> {
  /** When it was sent and answered, on one clock; `Infinity` for one that got no answer. */
  readonly start: number;
  readonly end: number;
  /** The state after it, from the state before; undefined when its answer rules that state out. */
  readonly step: (state: S) => S | undefined;
  /** What it was, for a report. */
  readonly label: string;
}

interface Entry {
  readonly op: number;
  readonly time: number;
  readonly call: boolean;
  prev: Entry | undefined;
  next: Entry | undefined;
  /** For a call, its operation's return entry (undefined for one that got no answer). */
  match?: Entry;
}

/** True when some order of `operations` from `initial` explains every answer. `key` names a state. */
export function isLinearizable<S>(operations: readonly Operation<S>[], initial: S, key: (state: S) => string): boolean {
  const entries: Entry[] = [];
  operations.forEach((operation, op) => {
    const call: Entry = { op, time: operation.start, call: true, prev: undefined, next: undefined };
    entries.push(call);
    if (Number.isFinite(operation.end)) {
      const answer: Entry = { op, time: operation.end, call: false, prev: undefined, next: undefined };
      call.match = answer;
      entries.push(answer);
    }
  });
  // In time order; at one instant, starts before answers (two operations that touch may overlap).
  entries.sort((a, b) => a.time - b.time || Number(b.call) - Number(a.call));
  const head: Entry = { op: -1, time: -Infinity, call: true, prev: undefined, next: undefined };
  let last = head;
  for (const entry of entries) {
    entry.prev = last;
    last.next = entry;
    last = entry;
  }
  function lift(entry: Entry) {
    for (const lifted of [entry, entry.match]) {
      if (lifted === undefined) continue;
      if (lifted.prev) lifted.prev.next = lifted.next;
      if (lifted.next) lifted.next.prev = lifted.prev;
    }
  }
  function unlift(entry: Entry) {
    for (const lifted of [entry.match, entry]) {
      if (lifted === undefined) continue;
      if (lifted.prev) lifted.prev.next = lifted;
      if (lifted.next) lifted.next.prev = lifted;
    }
  }

  let answersLeft = entries.filter((entry) => !entry.call).length;
  const taken = new Array<boolean>(operations.length).fill(false);
  const seen = new Set<string>();
  const stack: { entry: Entry; state: S }[] = [];
  let state = initial;
  let entry = head.next;
  while (answersLeft > 0) {
    if (entry === undefined) return false;
    if (entry.call) {
      const operation = operations[entry.op];
      const after = operation?.step(state);
      if (after !== undefined) {
        taken[entry.op] = true;
        const memo = `${taken.map(Number).join('')}|${key(after)}`;
        if (!seen.has(memo)) {
          seen.add(memo);
          stack.push({ entry, state });
          state = after;
          if (entry.match) answersLeft--;
          lift(entry);
          entry = head.next;
          continue;
        }
        taken[entry.op] = false;
      }
      entry = entry.next;
      continue;
    }
    // An answer of an operation not taken yet: it had to take effect before now. Undo the last choice.
    const undone = stack.pop();
    if (undone === undefined) return false;
    taken[undone.entry.op] = false;
    if (undone.entry.match) answersLeft++;
    state = undone.state;
    unlift(undone.entry);
    entry = undone.entry.next;
  }
  return true;
}
