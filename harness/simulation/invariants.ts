import { storedSize } from '../../lib/dynamodb/table';
import type { NewTodo } from '../../lib/todos';
import type { Item } from './dynamodb';

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
 * - No stored field is lost: every attribute a record's item had is still on it, whichever version
 *   of the code wrote it since (issue 38: a deploy runs two versions on one table, and a version
 *   must keep the fields it does not know). A DELETE removes the item, and its id is never used
 *   again, so an item's attributes only ever grow. (No field of the domain is cleared by a PUT; a
 *   field that a PUT may clear would make this check name what that PUT cleared.)
 * - The list's size equals a recount: the counter's `bytes` is the sum of each record's stored
 *   size (lib/dynamodb/table.ts, storedSize), which every version moves alike; and every record
 *   has a `size`, but one the table held before it had sizes (first seen while the counter had
 *   no `bytes`: the code before sizes wrote it, and it counts as that code counted it).
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
  /** Each record's title as first seen (at its POST's commit: every step is checked), by id: a PUT may change it since. */
  readonly #firstTitles = new Map<number, string>();
  /** The attributes each record's item has had, by id. */
  readonly #attributes = new Map<number, Set<string>>();
  /** Records first seen while the counter had no `bytes`: stored before sizes, they may have none. */
  readonly #beforeSizes = new Set<number>();

  /** Checks the table's items after a step; `step` names it in a violation. */
  check(items: readonly Item[], step: string): void {
    const records = items.filter((item) => item.pk === 'TODO');
    const counter = items.find((item) => item.pk === 'COUNTER' && item.id === 0);
    // A payload rides in its intent.
    for (const intent of items.filter((item) => item.pk === 'COUNTER' && item.payload !== undefined)) {
      this.#titles.set(String(intent.uuid), (intent.payload as { request: NewTodo }).request.title);
    }
    for (const record of records) {
      const id = Number(record.id);
      if (this.#firstTitles.has(id)) continue;
      this.#firstTitles.set(id, String(record.title));
      if (counter?.bytes === undefined) this.#beforeSizes.add(id);
    }
    const found = [
      ...this.#ids(records, counter),
      ...this.#onePerPost(records),
      ...this.#outcomesOnce(items, counter),
      ...this.#recent(records, counter),
      ...this.#fieldsKept(records),
      ...this.#recount(records, counter),
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

  #fieldsKept(records: readonly Item[]): string[] {
    return records.flatMap((record) => {
      const id = Number(record.id);
      const had = this.#attributes.get(id) ?? new Set();
      const lost = [...had].filter((name) => !(name in record));
      this.#attributes.set(id, new Set([...had, ...Object.keys(record)]));
      return lost.length > 0 ? [`record ${id} lost ${lost.join(', ')}: ${JSON.stringify(record)}`] : [];
    });
  }

  #recount(records: readonly Item[], counter: Item | undefined): string[] {
    // A table seeded before the list had a size has no `bytes` until a write counts it.
    if (counter?.bytes === undefined) return [];
    const unsized = records.filter(
      (record) => typeof record.size !== 'number' && !this.#beforeSizes.has(Number(record.id)),
    );
    if (unsized.length > 0) return [`records ${unsized.map(({ id }) => String(id)).join(', ')} have no size`];
    const sum = records.reduce((total, record) => total + storedSize(record), 0);
    return sum === Number(counter.bytes)
      ? []
      : [`the counter's bytes are ${Number(counter.bytes)}, its records' sizes ${sum}`];
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
      const first = this.#firstTitles.get(id);
      // A record deleted since is no violation; one made with another POST's title is.
      return first !== undefined && title !== undefined && first !== title
        ? [`the counter gives id ${id} to "${title}", whose record was made as "${first}"`]
        : [];
    });
  }
}
