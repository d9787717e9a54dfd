import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { startFleet, type Fleet } from '../../harness/fleet';
import { servicePackage, type Packaged } from '../../harness/package';
import { nonLinearizableRecords, type Fields, type Timed } from '../../harness/record-model';
import { nextPackage } from '../../harness/versions';
import { COUNTER_KEY, TODO_PARTITION } from '../../lib/dynamodb/table';
import { localDocumentClient, testDynamoDbEndpoint } from '../support/stores';

/**
 * A deploy is a fault too (issue 38), on the fleet (harness/fleet.ts): containers of two packages,
 * the shipped one (version N) and version N+1 (harness/versions.ts: the same code with one more
 * field, `priority`, "normal" when absent), on one table, under load, while the five functions
 * switch to N+1 one at a time, halfway through it: each switch sends the requests after it to new
 * containers of N+1, and the warm containers of N finish what they were doing. The POSTs switch
 * first, so that records N+1 makes with a high priority meet PUTs and DELETEs of N.
 */

/** Packaging (about 5 s idle), N+1's bundles (a second), and on a machine's first run Node 22 (185 MB). */
const PREPARE_WITHIN_MS = 300_000;
/**
 * Six clients, 30 requests each, one at a time (180 requests, with retries a few more), on
 * containers that start cold on both sides of the deploy: about 20 s on an idle 2-core machine.
 */
const DEPLOY_WITHIN_MS = 90_000;
/** A request's own bound: a function's timeout (10 s) and a busy machine's cold start. */
const REQUEST_WITHIN_MS = 30_000;

const CLIENTS = 6;
const REQUESTS_PER_CLIENT = 30;
/** The deploy starts once this many requests were answered, and switches a function every SWITCH_EVERY. */
const DEPLOY_AFTER = (CLIENTS * REQUESTS_PER_CLIENT) / 2 - 30;
const SWITCH_EVERY = 16;
/** The functions in the order they switch: the POSTs first, so that N's PUTs meet N+1's records. */
const SWITCH_ORDER = ['createTodo', 'updateTodo', 'getTodo', 'deleteTodo', 'listTodos'];

let packaged: Packaged;
let nextPackaged: Packaged;
beforeAll(async () => {
  packaged = await servicePackage([]);
  nextPackaged = await nextPackage(packaged);
}, PREPARE_WITHIN_MS);

let fleet: Fleet | undefined;
afterAll(async () => {
  await fleet?.stop();
});

/** One exchange, and what it was for. */
interface Sent extends Timed {
  readonly headers: Headers | undefined;
}

/** The load's clients, their history, and the deploy they drive halfway. */
class Load {
  readonly history: Sent[] = [];
  /** Ids a DELETE was sent for. */
  readonly deleted = new Set<number>();
  /** Records answered 201 with a high priority: made by N+1. */
  readonly high = new Map<number, Fields>();
  /** Records the clients leave alone: a keyed PUT's, whose replay answers the record as it first wrote it. */
  readonly reserved = new Set<number>();
  /** Keyed requests sent again after their function switched, with both answers. */
  readonly resent: { readonly first: Sent; readonly again: Sent }[] = [];
  #answered = 0;
  #switched = 0;
  /** Functions whose switch waits: the old version has requests to serve first. */
  readonly #held = new Set<string>();

  constructor(
    private readonly started: Fleet,
    private readonly tag: string,
  ) {}

  async send(
    method: Timed['method'],
    path: string,
    body?: Fields,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<Sent> {
    const start = performance.now();
    let status = 0;
    let text = '';
    let answerHeaders: Headers | undefined;
    try {
      const response = await fetch(`${this.started.url}${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(REQUEST_WITHIN_MS),
      });
      status = response.status;
      text = await response.text();
      answerHeaders = response.headers;
    } catch {
      // No answer: the history check lets it take effect at any time after it was sent, or never.
    }
    const sent: Sent = {
      method,
      path,
      ...(body === undefined ? {} : { asked: body }),
      start,
      end: performance.now(),
      status,
      body: text,
      headers: answerHeaders,
    };
    this.history.push(sent);
    if (method === 'DELETE') this.deleted.add(Number(path.split('/').pop()));
    if (status === 201) {
      const todo = JSON.parse(text) as { id: number; priority?: unknown };
      if (todo.priority === 'high') this.high.set(todo.id, todo);
    }
    this.#answered++;
    this.#deployAsDue();
    return sent;
  }

  /** Halfway, one function at a time: a keyed request its old version answered is sent again to the new one. */
  #deployAsDue(): void {
    const due = Math.floor((this.#answered - DEPLOY_AFTER) / SWITCH_EVERY);
    while (this.#switched < SWITCH_ORDER.length && this.#switched <= due) {
      const name = SWITCH_ORDER[this.#switched] ?? '';
      if (this.#held.has(name)) return;
      this.started.deploy(name, 'next');
      this.#switched++;
    }
  }

  /** Sends GETs (which move the deploy on) until `name` runs N+1, within `within` ms. */
  async #untilDeployed(name: string, within: number): Promise<void> {
    const until = performance.now() + within;
    while (this.started.versions()[name] !== 'next') {
      if (performance.now() > until) throw new Error(`${name} was not deployed within ${within} ms`);
      await this.send('GET', '/todos/1');
    }
  }

  /**
   * Between the switch of the POSTs and that of the PUTs (held meanwhile): records N+1 makes with a
   * high priority, each PUT by N, which does not know the field, plain and keyed.
   */
  async putByN(within: number): Promise<void> {
    this.#held.add('updateTodo');
    try {
      await this.#untilDeployed('createTodo', within);
      for (const [n, change] of [{ title: `${this.tag} put by N` }, { completed: true }].entries()) {
        const made = await this.send('POST', '/todos', { title: `${this.tag} for N ${n}`, priority: 'high' });
        const { id } = JSON.parse(made.body) as { id: number };
        this.reserved.add(id);
        await this.send('PUT', `/todos/${id}`, change, n === 0 ? {} : { 'idempotency-key': `"${randomUUID()}"` });
      }
    } finally {
      this.#held.delete('updateTodo');
    }
  }

  get deployed(): number {
    return this.#switched;
  }

  /** The records of this run the clients may write, oldest first. */
  records(): number[] {
    return this.history
      .filter(({ method, status, body }) => method === 'POST' && status === 201 && body.includes(this.tag))
      .map(({ body }) => (JSON.parse(body) as { id: number }).id)
      .filter((id) => !this.deleted.has(id) && !this.reserved.has(id));
  }

  async client(index: number): Promise<void> {
    for (let n = 0; n < REQUESTS_PER_CLIENT; n++) {
      const records = this.records();
      // One of the newest few: right after the POSTs switch, those are N+1's, which N's PUTs then meet.
      const target = records[records.length - 1 - ((index * 7 + n * 3) % Math.min(4, Math.max(1, records.length)))];
      const roll = (index + n * 5) % 10;
      if (target === undefined || roll < 3) {
        // Every POST asks for a high priority: N ignores the field, N+1 stores it.
        await this.send('POST', '/todos', { title: `${this.tag} c${index} n${n}`, priority: 'high' });
      } else if (roll < 6) {
        const change = n % 2 === 0 ? { title: `${this.tag} c${index} n${n} put` } : { completed: n % 4 === 1 };
        await this.send('PUT', `/todos/${target}`, change, { 'idempotency-key': `"${randomUUID()}"` });
      } else if (roll < 7 && records.length > 4) {
        await this.send('DELETE', `/todos/${target}`);
      } else if (roll < 9) {
        await this.send('GET', `/todos/${target}`);
      } else {
        await this.send('GET', '/todos');
      }
    }
  }

  /**
   * A keyed request sent to the old version of its function and, once the function runs N+1, sent
   * again with its key, as a client does whose connection dropped: it must replay, not be refused
   * (422) or written twice.
   */
  async acrossTheSwitch(name: string, send: (key: string) => Promise<Sent>, within: number): Promise<void> {
    const key = `"${randomUUID()}"`;
    const first = await send(key);
    await this.#untilDeployed(name, within);
    this.resent.push({ first, again: await send(key) });
  }
}

/** The table's record items as stored, and the counter's `bytes`, read behind every version's back. */
async function stored(table: string): Promise<{ items: Record<string, unknown>[]; bytes: unknown; next: unknown }> {
  const client = localDocumentClient(testDynamoDbEndpoint());
  try {
    const { Items = [] } = await client.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': TODO_PARTITION },
        ConsistentRead: true,
      }),
    );
    const { Item } = await client.send(new GetCommand({ TableName: table, Key: COUNTER_KEY, ConsistentRead: true }));
    return { items: Items, bytes: Item?.bytes, next: Item?.next };
  } finally {
    client.destroy();
  }
}

describe('a deploy on the fleet', () => {
  it(
    `switches the five functions from N to N+1 one at a time under load (${CLIENTS} clients, ${REQUESTS_PER_CLIENT} requests each), and loses no field: N+1's high priorities survive N's PUTs, the list's size equals a recount, ids are intact, keyed retries across the switch replay, every record's history is linearizable`,
    async () => {
      fleet = await startFleet({
        packaged,
        next: nextPackaged,
        dynamoDbEndpoint: testDynamoDbEndpoint(),
        logLevel: 'warn',
        caps: { createTodo: 4, updateTodo: 4, getTodo: 4, deleteTodo: 2, listTodos: 2 },
      });
      const tag = `deploy-${randomUUID().slice(0, 8)}`;
      const load = new Load(fleet, tag);
      const seed = await load.send('POST', '/todos', { title: `${tag} keyed put target`, priority: 'high' });
      const target = (JSON.parse(seed.body) as { id: number }).id;
      load.reserved.add(target);
      await Promise.all([
        ...Array.from({ length: CLIENTS }, (_, index) => load.client(index)),
        load.acrossTheSwitch(
          'createTodo',
          (key) =>
            load.send('POST', '/todos', { title: `${tag} keyed post`, priority: 'high' }, { 'idempotency-key': key }),
          DEPLOY_WITHIN_MS / 3,
        ),
        load.acrossTheSwitch(
          'updateTodo',
          (key) => load.send('PUT', `/todos/${target}`, { title: `${tag} keyed put` }, { 'idempotency-key': key }),
          DEPLOY_WITHIN_MS / 3,
        ),
        load.putByN(DEPLOY_WITHIN_MS / 3),
      ]);
      expect(fleet.versions()).toEqual(Object.fromEntries(SWITCH_ORDER.map((name) => [name, 'next'])));
      const final = await load.send('GET', '/todos');

      // Every request answered, as the contract allows: no fault was injected.
      expect(
        load.history
          .filter(({ status }) => ![200, 201, 404].includes(status))
          .map(({ method, path, status, body }) => `${method} ${path} ${status} ${body}`),
      ).toEqual([]);
      // Both versions served: N+1 made records with a high priority, N before it made some without.
      expect(load.high.size).toBeGreaterThan(5);
      expect(
        load.history.some(
          ({ method, status, body }) => method === 'POST' && status === 201 && !body.includes('priority'),
        ),
      ).toBe(true);
      // Each function started containers of N+1 after its switch.
      for (const name of SWITCH_ORDER) expect(fleet.stats(name).coldStarts).toBeGreaterThan(1);

      const table = await stored(fleet.table);
      const byId = new Map(table.items.map((item) => [Number(item.id), item]));
      // No field lost: every record N+1 made with a high priority still has it, N's PUTs notwithstanding.
      const lost = [...load.high.keys()].filter((id) => byId.has(id) && byId.get(id)?.priority !== 'high');
      expect(lost.map((id) => byId.get(id))).toEqual([]);
      const putByN = [...load.high.keys()].filter((id) =>
        load.history.some(
          ({ method, path, status, body }) =>
            method === 'PUT' && path === `/todos/${id}` && status === 200 && !body.includes('priority'),
        ),
      );
      expect(putByN.length).toBeGreaterThan(0);
      // The list's size equals a recount: the counter's bytes are the sum of the records' stored sizes.
      expect(table.bytes).toBe(table.items.reduce((sum, item) => sum + Number(item.size), 0));
      // Ids intact: every id the counter gave has its record, unless a DELETE was sent for it.
      const missing: number[] = [];
      for (let id = 3; id < Number(table.next); id++) if (!byId.has(id) && !load.deleted.has(id)) missing.push(id);
      expect(missing).toEqual([]);
      const listed = (JSON.parse(final.body) as { id: number }[]).map(({ id }) => id);
      expect(listed).toEqual([...byId.keys()].sort((a, b) => a - b));
      // Keyed requests sent again to N+1 after N answered them: replayed, the same record.
      for (const { first, again } of load.resent) {
        expect([first.status, again.status]).toEqual([
          first.method === 'POST' ? 201 : 200,
          first.method === 'POST' ? 201 : 200,
        ]);
        expect(again.headers?.get('idempotent-replayed')).toBe('true');
        expect((JSON.parse(again.body) as { id: number }).id).toBe((JSON.parse(first.body) as { id: number }).id);
      }
      expect(load.resent).toHaveLength(2);
      // Every record's history, on every field (harness/record-model.ts).
      expect(nonLinearizableRecords(load.history, (record) => String(record.title).startsWith(tag))).toEqual([]);
    },
    DEPLOY_WITHIN_MS,
  );
});
