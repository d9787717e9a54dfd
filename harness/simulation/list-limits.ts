import { marshall } from '@aws-sdk/util-dynamodb';
import { MAX_LIST_BYTES } from '../../lib/list-size';
import { SEED_TODOS, applyPatch, createTodo, listBytes, type TodoPatch } from '../../lib/todos';
import { KEY, idsIntact, postChecks, seededContainer, unavailable, warmContainer, withRetries } from './clients';
import type { Item } from './dynamodb';
import { TABLE, answeringWithinRetries, type Answered, type Scenario, type World } from './world';

/**
 * The list's two refusals on the counter (lib/dynamodb/decisions.ts): `full`, a write the list
 * has no room for (409, lib/list-size.ts), and `unsized`, a counter with no `bytes` yet (a table
 * the code before sizes seeded), which the write counts and goes again. Both are `refused`
 * verdicts: the condition may hold later (a DELETE makes room, another write counts the list), so
 * a copy still on its way may apply then, and the write may not answer as if none could (issue 41:
 * a PUT answered 409 whose held copy applied once a DELETE made room).
 */

/** Record 1's longer title: the PUT grows the record by a few bytes. */
const LONGER: TodoPatch = { title: 'Read the spec, and then the design' };
const FILLER = 'the rest of the list';

/** A write straight to the table, as set-up: no copy, no fault, no step of the invariants. */
function write(world: World, operation: 'PutItem' | 'UpdateItem', request: Record<string, unknown>): void {
  const { status, body } = world.dynamodb.handle(operation, JSON.stringify({ TableName: TABLE, ...request }));
  if (status !== 200) throw new Error(`set-up ${operation} answered ${status}: ${body}`);
}

/**
 * Fills the list to `room` bytes short of MAX_LIST_BYTES: one record's stored size is raised to
 * stand for the rest of a full list, and the counter's `bytes` with it. The store reads only a
 * record's stored `size` for the list's limit (lib/dynamodb/table.ts, storedSize), so one item that
 * counts for many keeps the counter the sum of the sizes, and each step's check of the invariants
 * reads a few items rather than 6 MB of them.
 */
function fillTo(world: World, id: number, room: number): void {
  const [counter] = world.queueItems();
  const more = MAX_LIST_BYTES - room - Number(counter?.bytes);
  function raise(Key: Item, attribute: string): void {
    write(world, 'UpdateItem', {
      Key: marshall(Key),
      UpdateExpression: 'SET #bytes = #bytes + :more',
      ExpressionAttributeNames: { '#bytes': attribute },
      ExpressionAttributeValues: marshall({ ':more': more }),
    });
  }
  raise({ pk: 'TODO', id }, 'size');
  raise({ pk: 'COUNTER', id: 0 }, 'bytes');
}

/** Record `id`'s item: its version `v` counts its writes. */
function itemOf(world: World, id: number): Item | undefined {
  return world.dynamodb.items(TABLE).find((item) => item.pk === 'TODO' && item.id === id);
}

/** What a PUT of LONGER to record 1 answered, held to what record 1 holds: its version was `versionBefore`. */
function putChecks(world: World, put: Answered<unknown>, versionBefore: number): string[] {
  const item = itemOf(world, 1);
  const applied = item?.title === LONGER.title;
  const violations: string[] = [];
  if ('ok' in put) {
    if (!applied) violations.push(`PUT answered 200, record 1 holds ${JSON.stringify(item)}`);
  } else if (put.failed === 'ListFull') {
    if (applied)
      violations.push(
        `PUT answered 409 (the list is full), and record 1 holds its title: a copy applied after the answer`,
      );
  } else if (!unavailable(world, put)) {
    violations.push(`PUT answered ${put.failed}`);
  }
  // Every write of a record moves its version by one: the PUT applied once, or not at all.
  const writes = Number(item?.v ?? 0) - versionBefore;
  if (writes !== (applied ? 1 : 0)) violations.push(`record 1 was written ${writes} times: ${JSON.stringify(item)}`);
  return violations;
}

/** What a DELETE of record 2 answered, held to the table. */
function deleteChecks(world: World, removed: Answered<unknown>): string[] {
  const stored = itemOf(world, 2) !== undefined;
  if ('failed' in removed) return unavailable(world, removed) ? [] : [`DELETE answered ${removed.failed}`];
  if (removed.ok === undefined) return ['DELETE of a record no one else deleted answered 404'];
  return stored ? ['DELETE answered 200, and record 2 is still there'] : [];
}

/**
 * The list full, `room` bytes short of the PUT's growth; the PUT of record 1 (a copy of it may be
 * held), then, once it is answered, a DELETE of record 2 from another container, which makes room:
 * a copy of the PUT held until then applies. So the PUT may answer 409 only if no copy of it can
 * land (with a key, a retry's too: its answer must be the write's), and 503 otherwise; with no
 * fault, 409.
 */
function fullList(keyed: boolean): Scenario {
  return async (world) => {
    const putter = await seededContainer(world);
    const deleter = await seededContainer(world);
    const record = (await putter.get(1)) ?? SEED_TODOS[0];
    if (record === undefined) throw new Error('no record 1');
    const growth = listBytes(applyPatch(record, LONGER)) - listBytes(record);
    const filler = await putter.create({ title: FILLER });
    fillTo(world, filler.value.id, growth - 1);
    const versionBefore = Number(itemOf(world, 1)?.v ?? 0);
    world.startFaults();
    const put = await withRetries(world, keyed, () => putter.update(1, LONGER, world.options(keyed ? KEY : undefined)));
    const removed = await world.answer(deleter.remove(2, world.options()));
    return () => [
      ...putChecks(world, put, versionBefore),
      ...deleteChecks(world, removed),
      ...idsIntact(world),
      ...(world.faultFree && !('failed' in put && put.failed === 'ListFull')
        ? [`the PUT to a full list answered ${JSON.stringify(put)} with no fault`]
        : []),
    ];
  };
}

/** The title of the POST to a full list. */
const LATE_POST = 'one too many';

/**
 * The list full, a few bytes short of a new record; a POST (a copy of it may be held), from a
 * container that writes alone (one transaction) or a new one (its first POST queues, and the
 * queue's commit refuses it), then, once it is answered, a DELETE of record 2 from another
 * container, which makes room. As for the PUT: a 409 only if no copy of the POST can land after it.
 */
function fullListPost(keyed: boolean, queued: boolean): Scenario {
  return async (world) => {
    const poster = queued ? await seededContainer(world) : await warmContainer(world);
    const deleter = await seededContainer(world);
    // A new container stays new: another writes the filler.
    const writer = queued ? await warmContainer(world) : poster;
    const filler = await writer.create({ title: FILLER }, world.options());
    fillTo(world, filler.value.id, listBytes(createTodo({ title: LATE_POST }, filler.value.id + 1)) - 1);
    world.startFaults();
    const post = await withRetries(world, keyed, () =>
      poster.create({ title: LATE_POST }, world.options(keyed ? KEY : undefined)),
    );
    const removed = await world.answer(deleter.remove(2, world.options()));
    return () => {
      const stored = world.records().filter(({ title }) => title === LATE_POST).length;
      const refused = 'failed' in post && post.failed === 'ListFull';
      return [
        ...(refused
          ? stored === 0
            ? []
            : [`POST answered 409 (the list is full), and stored ${stored}: a copy applied after the answer`]
          : postChecks(world, LATE_POST, post)),
        ...deleteChecks(world, removed),
        ...idsIntact(world),
        ...(world.faultFree && !refused
          ? [`the POST to a full list answered ${JSON.stringify(post)} with no fault`]
          : []),
      ];
    };
  };
}

/** A client's own timeout: with no answer by then, it sends the request again, with its key, the first still in flight. */
const CLIENT_TIMEOUT_MS = 1_000;

/**
 * Two attempts of one key in flight against a full list (a few bytes short of a new record). A
 * keyed POST from a container that writes alone is refused at once, and keeps its 409 under its key
 * (lib/dynamodb/posts.ts, `keepRefusal`); the faults start with that claim's put, so the search
 * delays it. With no answer by the client's own timeout, the client sends the same POST with the
 * same key again, to a new container (its first POST queues), as a DELETE of record 2 makes room:
 * the twin is written, key and all, while the first attempt's claim is still on its way, and that
 * claim then finds the key held by its twin. Each attempt answers what its key holds: the record,
 * or a 409 only if no attempt wrote it.
 */
const twinAttempts: Scenario = async (world) => {
  const poster = await warmContainer(world);
  const twin = await seededContainer(world);
  const deleter = await seededContainer(world);
  const filler = await poster.create({ title: FILLER }, world.options());
  fillTo(world, filler.value.id, listBytes(createTodo({ title: LATE_POST }, filler.value.id + 1)) - 1);
  const first = world.answer(poster.create({ title: LATE_POST }, world.options(KEY, {}, poster)));
  // Its transaction is sent at once, and refused in a few ms: the next copy of a write is its claim's put.
  await world.wait(1);
  world.startFaults();
  const inTime = await Promise.race([first.then(() => true), world.wait(CLIENT_TIMEOUT_MS - 1).then(() => false)]);
  const [again, removed] = await Promise.all([
    inTime ? undefined : world.answer(twin.create({ title: LATE_POST }, world.options(KEY, {}, twin))),
    world.answer(deleter.remove(2, world.options(undefined, {}, deleter))),
  ]);
  const answers = again === undefined ? [await first] : [await first, again];
  return () => {
    const stored = world.records().filter(({ title }) => title === LATE_POST);
    const violations = [...deleteChecks(world, removed), ...idsIntact(world)];
    if (stored.length > 1) violations.push(`POST "${LATE_POST}" stored ${stored.length} times`);
    for (const [i, answered] of answers.entries()) {
      const which = i === 0 ? 'the first attempt' : 'its twin';
      if ('ok' in answered) {
        if (JSON.stringify(answered.ok.value) !== JSON.stringify(stored[0]))
          violations.push(`${which} answered ${JSON.stringify(answered.ok)}, stored ${JSON.stringify(stored)}`);
      } else if (answered.failed === 'ListFull') {
        if (stored.length > 0)
          violations.push(
            `${which} answered 409 (the list is full), and its key's POST is stored: ${JSON.stringify(stored[0])}`,
          );
      } else if (!unavailable(world, answered)) {
        violations.push(`${which} answered ${answered.failed}`);
      }
    }
    if (world.faultFree && !('failed' in (answers[0] ?? {}) && answers.length === 1))
      violations.push(`with no fault, the first attempt answered ${JSON.stringify(answers)}, not a 409 in time`);
    return violations;
  };
};

/**
 * A table as the code before sizes left it: the counter with `next` alone (no `bytes`, no list
 * version), records 1 and 2 with no `size` and no version. The store counts such a record as that
 * code did (lib/todos.ts, sizelessBytes).
 */
function seedAsBeforeSizes(world: World): void {
  write(world, 'PutItem', { Item: marshall({ pk: 'COUNTER', id: 0, next: 3 }) });
  for (const todo of SEED_TODOS) write(world, 'PutItem', { Item: marshall({ pk: 'TODO', ...todo }) });
}

/**
 * On a table seeded before sizes, a PUT of record 1 and a DELETE of record 2 at once, from two
 * containers: each meets the counter with no size (`unsized`), counts the list (the two counts
 * race: the first sets it, lib/dynamodb/counter.ts, prepareCounter) and goes again. Each answers
 * for what it did, and once the counter has its size it is the sum of the stored sizes, a record
 * with none counted as its writer counted it (invariants.ts).
 */
function unsizedList(keyed: boolean): Scenario {
  return async (world) => {
    seedAsBeforeSizes(world);
    // No list first: a list counts the table too (lib/dynamodb/list.ts), and the writes would find it counted.
    const putter = world.container();
    const deleter = world.container();
    world.startFaults();
    const [put, removed] = await Promise.all([
      withRetries(world, keyed, () => putter.update(1, LONGER, world.options(keyed ? `"put"` : undefined))),
      withRetries(world, keyed, () => deleter.remove(2, world.options(keyed ? `"delete"` : undefined))),
    ]);
    return () => [
      ...putChecks(world, put, 0),
      ...deleteChecks(world, removed),
      ...(world.faultFree && world.queueItems()[0]?.bytes === undefined ? ['no write counted the list'] : []),
    ];
  };
}

/** The list's refusals, by scenario name. */
export const LIST_LIMITS: Readonly<Record<string, Scenario>> = {
  'PUT to a full list, a DELETE makes room': fullList(false),
  'PUT to a full list, a DELETE makes room, keyed': fullList(true),
  'POST to a full list, a DELETE makes room': fullListPost(false, false),
  'POST to a full list, a DELETE makes room, keyed': fullListPost(true, false),
  'POST queued to a full list, a DELETE makes room, keyed': fullListPost(true, true),
  'POST to a full list sent again with its key while in flight, a DELETE makes room': twinAttempts,
  // Refused for no size, these count the list and go again: their answers are their own, as with no fault.
  'PUT and DELETE on a table seeded before sizes': answeringWithinRetries(unsizedList(false)),
  'PUT and DELETE on a table seeded before sizes, keyed': answeringWithinRetries(unsizedList(true)),
};
