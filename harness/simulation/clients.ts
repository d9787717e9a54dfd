import type { Todo } from '../../lib/todos';
import type { Answered, Container, World } from './world';

/**
 * What every scenario's clients do and check alike: send a request, and again with its key after
 * a 503, as the docs tell clients; start from a seeded table; hold the ids and a POST's answer to
 * what was stored (scenarios.ts says what every run checks).
 */

export const KEY = '"simulated-key"';

/**
 * Sends a request, and again with its key after a 503 (up to twice), as a client that follows the docs; not when
 * the world must answer (World.mustAnswer): its first 503 is the answer checked.
 */
export async function withRetries<T>(world: World, keyed: boolean, send: () => Promise<T>): Promise<Answered<T>> {
  let answered = await world.answer(send());
  const resends = keyed && !world.mustAnswer;
  for (let retry = 0; resends && retry < 2 && 'failed' in answered && answered.failed === 'StoreUnavailable'; retry++) {
    await world.wait(1_000);
    answered = await world.answer(send());
  }
  return answered;
}

/**
 * A 503, or a 409 for a key in flight, which a request may answer under faults (it may still be
 * applied; a conflict the simulator places on its key's claim reads as another request holding the
 * key): both tell the client to send it again. With no fault, or faults the client's retries cover
 * in a scenario that answers within them (World.mustAnswer), either is a violation.
 */
export function unavailable(world: World, answered: { readonly failed: string }): boolean {
  return ['StoreUnavailable', 'KeyInFlight'].includes(answered.failed) && !world.mustAnswer;
}

/** The seeded table, and a container that has seen it: set-up, with no faults. */
export async function seededContainer(world: World): Promise<Container> {
  const container = world.container();
  await listOf(container);
  return container;
}

/**
 * A container alone that has written a POST before the faults start: its next POST is written in one transaction. A
 * new container's first POST queues (lib/dynamodb/queue.ts, `queues`), so a scenario of a POST alone starts here.
 */
export async function warmContainer(world: World): Promise<Container> {
  const container = await seededContainer(world);
  await container.create({ title: 'written before' }, world.options());
  return container;
}

/** The checks of the ids: from 3 to the counter's next, each used by exactly one record (none deleted here). */
export function idsIntact(world: World): string[] {
  const [counter] = world.queueItems();
  const next = Number(counter?.next);
  const ids = world
    .records()
    .map(({ id }) => id)
    .filter((id) => id >= 3);
  const expected = Array.from({ length: Math.max(0, next - 3) }, (_, i) => i + 3);
  return JSON.stringify(ids) === JSON.stringify(expected)
    ? []
    : [`ids ${JSON.stringify(ids)} where the counter (next ${next}) gave ${JSON.stringify(expected)}`];
}

/** What one POST's answer and the records must agree on. */
export function postChecks(world: World, title: string, answered: Answered<{ value: Todo }>): string[] {
  const stored = world.records().filter((todo) => todo.title === title);
  if ('ok' in answered) {
    const { value } = answered.ok;
    if (stored.length !== 1) return [`POST "${title}" answered 201 with id ${value.id}, stored ${stored.length} times`];
    if (JSON.stringify(stored[0]) !== JSON.stringify(value))
      return [`POST "${title}" answered ${JSON.stringify(value)}, stored ${JSON.stringify(stored[0])}`];
    return [];
  }
  if (!unavailable(world, answered)) return [`POST "${title}" answered ${answered.failed}`];
  return stored.length > 1 ? [`POST "${title}" answered 503, stored ${stored.length} times`] : [];
}

/** The records a list of `container` answers, in list order: what a GET /todos shows. */
export async function listOf(container: Container, deadline?: number): Promise<Todo[]> {
  return [...((await container.readList(deadline)).todos ?? [])];
}
