import { payloadKey } from '../../lib/dynamodb/queue';
import type { NewTodo } from '../../lib/todos';
import type { Item } from './dynamodb';

/** The partition key of a queued POST's payload, but its uuid. */
const PAYLOAD_PREFIX = payloadKey('').pk;

/**
 * The invariants of the store's table, checked by the simulator after every step (each request
 * that takes effect in the simulated DynamoDB), from the items alone. They are the queue's, as
 * docs/design.md states its state machine, and the ids': every scenario gives each POST a title
 * of its own, so a record is known by its title.
 *
 * - An id is used only with its record: every id the counter gave was seen with its record (and
 *   may be gone since, deleted), and no record holds an id the counter has not given.
 * - One record for one POST: no two records with one title.
 * - A POST's outcome is decided once: an outcome, once written, never changes.
 * - A withdrawn POST is never written: no commit gave an id to a POST whose outcome is withdrawn.
 * - The counter's `recent` names, for each POST it lists, the record of that POST.
 */
export class Invariants {
  /** Each queued POST's title, by uuid, from its payload. */
  readonly #titles = new Map<string, string>();
  /** Every record id seen so far. */
  readonly #seenIds = new Set<number>();
  /** Each outcome as first seen, by uuid. */
  readonly #outcomes = new Map<string, string>();
  readonly violations: string[] = [];
  /** Each violation found so far, as found: one that lasts over many steps is reported at its first. */
  readonly #found = new Set<string>();

  /** Checks the table's items after a step; `step` names it in a violation. */
  check(items: readonly Item[], step: string): void {
    const records = items.filter((item) => item.pk === 'TODO');
    const counter = items.find((item) => item.pk === 'COUNTER' && item.id === 0);
    // A payload rides in its intent, or, past INLINE_PAYLOAD_BYTES, is an item of its own.
    for (const intent of items.filter((item) => item.pk === 'COUNTER' && item.payload !== undefined)) {
      this.#titles.set(String(intent.uuid), (intent.payload as { request: NewTodo }).request.title);
    }
    for (const payload of items.filter((item) => String(item.pk).startsWith(PAYLOAD_PREFIX))) {
      const { title } = payload.request as NewTodo;
      this.#titles.set(String(payload.pk).slice(PAYLOAD_PREFIX.length), title);
    }
    const found = [
      ...this.#ids(records, counter),
      ...this.#onePerPost(records),
      ...this.#outcomesOnce(items, counter),
      ...this.#recent(records, counter),
    ];
    for (const violation of found) {
      if (this.#found.has(violation)) continue;
      this.#found.add(violation);
      this.violations.push(`after ${step}: ${violation}`);
    }
  }

  #ids(records: readonly Item[], counter: Item | undefined): string[] {
    if (counter === undefined) return [];
    const next = Number(counter.next);
    const ids = records.map(({ id }) => Number(id)).filter((id) => id >= 3);
    for (const id of ids) this.#seenIds.add(id);
    // Every step is checked, so a record is seen once its POST committed, before any DELETE: an id
    // the counter gave that was never seen is skipped; one seen and gone was deleted.
    const skipped = Array.from({ length: Math.max(0, next - 3) }, (_, i) => i + 3).filter(
      (id) => !this.#seenIds.has(id),
    );
    const beyond = ids.filter((id) => id >= next);
    return skipped.length > 0 || beyond.length > 0
      ? [
          `ids ${JSON.stringify([...skipped, ...beyond])} given with no record, or held by a record past the counter (${next})`,
        ]
      : [];
  }

  #onePerPost(records: readonly Item[]): string[] {
    const titles = records.map(({ title }) => String(title));
    const twice = titles.filter((title, i) => titles.indexOf(title) !== i);
    return twice.map((title) => `two records titled "${title}"`);
  }

  #outcomesOnce(items: readonly Item[], counter: Item | undefined): string[] {
    const given = (counter?.recent ?? {}) as Record<string, number>;
    const violations: string[] = [];
    for (const outcome of items.filter((item) => String(item.pk).startsWith('DONE#'))) {
      const uuid = String(outcome.pk).slice('DONE#'.length);
      // Its time to live aside: the outcome is what it says.
      const text = JSON.stringify(Object.entries(outcome).filter(([name]) => name !== 'expires'));
      const first = this.#outcomes.get(uuid);
      if (first === undefined) this.#outcomes.set(uuid, text);
      else if (first !== text) violations.push(`the outcome of ${uuid} changed from ${first} to ${text}`);
      if (outcome.refused === 'withdrawn' && given[uuid] !== undefined) {
        violations.push(`POST "${this.#titles.get(uuid) ?? uuid}" withdrawn, and written as ${given[uuid]}`);
      }
    }
    return violations;
  }

  #recent(records: readonly Item[], counter: Item | undefined): string[] {
    const recent = (counter?.recent ?? {}) as Record<string, number>;
    return Object.entries(recent).flatMap(([uuid, id]) => {
      const title = this.#titles.get(uuid);
      const record = records.find((item) => item.id === id);
      // A record deleted since is no violation; one with another POST's title is.
      return record !== undefined && title !== undefined && record.title !== title
        ? [`the counter gives id ${id} to "${title}", whose record is "${String(record.title)}"`]
        : [];
    });
  }
}
