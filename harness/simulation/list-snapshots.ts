import { EDIT_SLOTS, editSlot } from '../../lib/dynamodb/counter';
import type { Todo } from '../../lib/todos';
import { listOf, seededContainer, unavailable, withRetries } from './clients';
import { answeringWithinRetries, type Answered, type Container, type Scenario, type World } from './world';

/**
 * Lists of several pages while writes land (issue 39): every list is one snapshot, however many
 * pages it reads (lib/dynamodb/list.ts). A writer sends one request at a time, each after the one
 * before was answered, so some states can never exist together:
 *
 * - it deletes the oldest record but the first, then creates one: no list shows both (the new one
 *   was made once the old one was gone);
 * - it marks the first record and then the last with the same round: no list shows the last
 *   record marked ahead of the first;
 * - and a list sent once a write was answered shows it: no list is older than a write before it
 *   (a list from a shared list as current, say, whatever version that list was shared at).
 *
 * Two listers read pages of two records meanwhile: one container that holds its list from one
 * list to the next (it reads what changed), and a new container for each list (it reads the
 * whole list). Pages read one by one, with no check, show both states. Shared, every list
 * shares what it read and a new container starts from the list shared last (lib/dynamodb/list.ts,
 * `sharedList`), at whatever version that was.
 */

/** Records 3 to 8 before the faults: with 1 and 2, four pages of two records. */
const RECORDS = 6;
const PAGE_SIZE = 2;
const ROUNDS = 2;
const FIRST_ID = 1;

/** An Idempotency-Key of the writer's own for each of its writes, as a client sends it (quoted). */
function keyOf(write: string, round: number): string {
  return `"${write}, round ${round}"`;
}

/** A record's round of marks, from its title. */
function markOf(todo: Todo | undefined): number | undefined {
  const found = todo && /, mark (\d+)$/.exec(todo.title);
  return found ? Number(found[1]) : undefined;
}

/** What the writer did, in the order it did it, as far as it was answered. */
interface Written {
  /** A record deleted (answered 200) and the record created after it (answered 201). */
  readonly replaced: { readonly gone: number; readonly made: number }[];
  /** The last record, whose mark never goes ahead of the first's. */
  lastId: number;
  /** Each write answered, when (simulated ms), and whether a list shows it. */
  readonly answered: { readonly at: number; readonly what: string; readonly shown: (listed: Todo[]) => boolean }[];
}

/** What the writer's write `what` leaves, for the lists sent after it was answered. */
function answered(world: World, written: Written, what: string, shown: (listed: Todo[]) => boolean): void {
  written.answered.push({ at: world.now(), what, shown });
}

/** A record's title in a list. */
function titleIn(listed: readonly Todo[], id: number): string | undefined {
  return listed.find((todo) => todo.id === id)?.title;
}

async function writer(world: World, container: Container, written: Written): Promise<void> {
  for (let round = 1; round <= ROUNDS; round++) {
    // Records 2, then 3: the oldest after the first, which is marked.
    const gone = FIRST_ID + round;
    const removed = await withRetries(world, true, () => container.remove(gone, world.options(keyOf('delete', round))));
    if (!('ok' in removed) || removed.ok === undefined) return;
    answered(world, written, `record ${gone} deleted`, (listed) => titleIn(listed, gone) === undefined);
    const made = await withRetries(world, true, () =>
      container.create({ title: `made in round ${round}` }, world.options(keyOf('create', round))),
    );
    if (!('ok' in made)) return;
    const madeId = made.ok.value.id;
    written.replaced.push({ gone, made: madeId });
    answered(world, written, `record ${madeId} made`, (listed) => titleIn(listed, madeId) !== undefined);
    // The first record's mark is answered before the last's is sent.
    const first = await withRetries(world, true, () =>
      container.update(FIRST_ID, { title: `the first, mark ${round}` }, world.options(keyOf('mark the first', round))),
    );
    if (!('ok' in first)) return;
    answered(
      world,
      written,
      `the first marked ${round}`,
      (listed) => (markOf(listed.find(({ id }) => id === FIRST_ID)) ?? 0) >= round,
    );
    const last = await withRetries(world, true, () =>
      container.update(
        written.lastId,
        { title: `the last, mark ${round}` },
        world.options(keyOf('mark the last', round)),
      ),
    );
    if (!('ok' in last)) return;
    answered(
      world,
      written,
      `the last marked ${round}`,
      (listed) => (markOf(listed.find(({ id }) => id === written.lastId)) ?? 0) >= round,
    );
  }
}

/** What a list sent at `sent` (simulated ms) answered that no snapshot shows, or that is older than a write before it. */
function violations(listed: Todo[], sent: number, written: Written): string[] {
  const ids = new Set(listed.map((todo) => todo.id));
  const found: string[] = [];
  for (const { gone, made } of written.replaced) {
    if (ids.has(gone) && ids.has(made))
      found.push(`a list showed record ${gone} beside ${made}, made once it was gone`);
  }
  const first = markOf(listed.find((todo) => todo.id === FIRST_ID)) ?? 0;
  const last = markOf(listed.find((todo) => todo.id === written.lastId)) ?? 0;
  if (last > first) found.push(`a list showed the last record at mark ${last}, the first at ${first}, marked first`);
  for (const { at, what, shown } of written.answered) {
    if (at <= sent && !shown(listed))
      found.push(`a list sent at ${sent} ms did not show ${what}, answered at ${at} ms`);
  }
  return found;
}

function listsWhileWritten(shared: boolean): Scenario {
  return async (world) => {
    const setUp = world.container();
    for (let i = 0; i < RECORDS; i++) await setUp.create({ title: `record ${i + 3}` });
    const written: Written = { replaced: [], lastId: RECORDS + 2, answered: [] };
    world.startFaults();
    const options = { pageSize: PAGE_SIZE, ...(shared && { sharedAfterBytes: 0 }) };
    const holding = world.container(options);
    const lists: { sent: number; listed: Answered<Todo[]> }[] = [];
    async function listing(next: () => Container, times: number): Promise<void> {
      for (let i = 0; i < times; i++) {
        const sent = world.now();
        lists.push({ sent, listed: await world.answer(listOf(next())) });
      }
    }
    await Promise.all([
      writer(world, world.container(), written),
      listing(() => holding, 4),
      listing(() => world.container(options), 3),
    ]);
    return () =>
      lists.flatMap(({ sent, listed }) => {
        if ('ok' in listed) return violations(listed.ok, sent, written);
        return unavailable(world, listed) ? [] : [`a list answered ${listed.failed}`];
      });
  };
}

/** The two records edited in one slot of the list's version: the first made after the seed, and the next in its slot. */
const SLOT_MATES = [3, 3 + EDIT_SLOTS] as const;

/**
 * Edits of two records in one slot of the list's version (lib/dynamodb/counter.ts, `editSlot`): the
 * counter keeps the last record edited in each slot, so a list held since before both edits finds
 * one record named for two edits (lib/dynamodb/list.ts, `changedSince`), and must read more than
 * that record. A container holds the list; another PUTs the two records, one after the other (keyed,
 * sent again after a 503); then the holding container lists: it shows each edit answered before.
 */
const editsInOneSlot: Scenario = async (world) => {
  const [first, second] = SLOT_MATES;
  if (editSlot(first) !== editSlot(second)) throw new Error(`records ${first} and ${second} are in different slots`);
  // Made at once, in one container: one transaction writes them (lib/dynamodb/store.ts, a batch).
  const setUp = world.container();
  await Promise.all(Array.from({ length: second - 2 }, (_, i) => setUp.create({ title: `record ${i + 3}` })));
  const holding = await seededContainer(world);
  const writer = await seededContainer(world);
  world.startFaults();
  const edits: { at: number; id: number; title: string }[] = [];
  for (const id of SLOT_MATES) {
    const title = `record ${id}, edited`;
    const put = await withRetries(world, true, () =>
      writer.update(id, { title }, world.options(`"edit ${id}"`, {}, writer)),
    );
    if ('failed' in put && !unavailable(world, put)) return () => [`the PUT of record ${id} answered ${put.failed}`];
    if ('ok' in put) edits.push({ at: world.now(), id, title });
  }
  const sent = world.now();
  const listed = await world.answer(listOf(holding));
  return () => {
    if ('failed' in listed) return unavailable(world, listed) ? [] : [`the list answered ${listed.failed}`];
    return edits
      .filter(({ at, id, title }) => at <= sent && titleIn(listed.ok, id) !== title)
      .map(({ at, id }) => `a list sent at ${sent} ms did not show the edit of record ${id}, answered at ${at} ms`);
  };
};

export const LIST_SNAPSHOTS: Readonly<Record<string, Scenario>> = {
  'lists of several pages while records are replaced and marked': answeringWithinRetries(listsWhileWritten(false)),
  'lists of several pages while records are replaced and marked, from the list shared last': answeringWithinRetries(
    listsWhileWritten(true),
  ),
};

/** A list held over edits in one slot: a few requests, searched as a single request is (not a workload). */
export const LIST_EDITS: Readonly<Record<string, Scenario>> = {
  'a list held while two records of one slot are edited': answeringWithinRetries(editsInOneSlot),
};
