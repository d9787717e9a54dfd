import {
  KeyInFlight,
  KeyReused,
  ListFull,
  PreconditionFailed,
  StoreMisconfigured,
  StoreUnavailable,
  checkPrecondition,
} from '../errors';
import {
  changesNothing,
  type Deadline,
  type IdempotencyClaim,
  type NewTodo,
  type Todo,
  type TodoPatch,
  type TodoList,
  type TodoStore,
  type WriteOptions,
  type Written,
} from '../todos';
import { timeLimit, unlessAborted } from '../abort';
import { credentialsProblem } from '../aws/credentials';
import { MAX_LIST_BYTES } from '../list-size';
import { REAL_RUNTIME, type Runtime } from '../runtime';
import { claimKey, replayOf } from './claims';
import { dynamoDb, type DynamoDb } from './client';
import { createPosts, type Post } from './posts';
import { PACING, newQueueView, type Pacing, type QueueView } from './pacing';
import { readList, type HeldList } from './list';
import { getItem } from './reads';
import { deleteChange, putChange, rewrite } from './rewrite';
import { seeded } from './seed';
import { toTodo, todoKey, type Counter, type TableAccess } from './table';

/**
 * The DynamoDB store (docs/design.md): every read strongly consistent, so a client reads its own writes; every write
 * one transaction (lib/dynamodb/transaction.ts) on condition that what it assumes holds, so none applies twice or lands
 * late to undo a later one. POST: posts.ts; PUT, DELETE: rewrite.ts; reads: reads.ts; seed: seed.ts. Every call ends by
 * its deadline: StoreUnavailable (503), unless it has its own answer (full list, reused key, key in flight).
 */

/** DynamoDB's limit on one transaction's actions: 100, one of them the counter. */
const MAX_BATCH_ACTIONS = 99;
/** The deadline of a call that gives none: as long as a request of a 10 s function would have. */
const DEFAULT_BUDGET_MS = 9_000;

export interface DynamoDbStoreOptions {
  /** Items per Query page; DynamoDB's own 1 MB page applies too. Small values test pagination. */
  readonly pageSize?: number;
  /** The time and chance the store uses: the real ones by default; the simulator's in harness/simulation/. */
  readonly runtime?: Runtime;
  /**
   * When POSTs queue, pause, take over or give up (pacing.ts): PACING by default. The simulator explores the queue
   * under an adversarial pacing too; the bench measures the designs it replaced with pacings of its own.
   */
  readonly pacing?: Pacing;
  /** `written` during versions' first deploy (docs/operations.md), lists not relying on them; else `read` (list.ts). */
  readonly listVersion?: 'read' | 'written';
  /** A list that read more bytes of records than this shares what it read (list.ts, `sharedAfter` by default). */
  readonly sharedAfterBytes?: number;
  /**
   * How long a list waits for its read repair's transaction (repair.ts, RAISE_WITHIN_MS by default): a test on DynamoDB
   * Local, where a transaction of a hundred actions may take seconds on a busy machine, gives it the list's deadline.
   */
  readonly raiseWithinMs?: number;
  /**
   * How large the list may grow, in bytes: MAX_LIST_BYTES (lib/list-size.ts) by default. Every store on one table must
   * agree: a test that needs a full list of few records gives its stores a smaller one.
   */
  readonly maxListBytes?: number;
}

/** A POST waiting for its record to be written, with others, in the next transaction. */
interface PendingCreate extends Post {
  readonly signal: AbortSignal;
  readonly deadline: Deadline;
  resolve(written: Written<Todo>): void;
  reject(error: unknown): void;
}

/** The errors a store answers with on purpose; anything else on the way is StoreUnavailable. */
const ANSWERS = [StoreUnavailable, ListFull, KeyReused, KeyInFlight, PreconditionFailed];

export class DynamoDbTodoStore implements TodoStore {
  readonly #table: TableAccess;
  /** What this container knows of the queue of POSTs (pacing.ts), and its pacing. */
  readonly #posts: { readonly view: QueueView; readonly pacing: Pacing };
  #seeded: Promise<void> | undefined;
  /** The counter as the seed found or made it, and when the seed began. */
  #seedRead: { readonly counter: Counter; readonly began: number } | undefined;
  /** The list as this container last read it: the next list reads only what changed since (lib/dynamodb/list.ts). */
  #held: HeldList | undefined;
  /** POSTs waiting for the transaction in flight to finish; they go together in the next one. */
  readonly #pending: PendingCreate[] = [];
  #committing = false;

  constructor(
    dynamodb: DynamoDb,
    table: string,
    private readonly options: DynamoDbStoreOptions = {},
  ) {
    this.#table = {
      name: table,
      dynamodb,
      runtime: options.runtime ?? REAL_RUNTIME,
      maxListBytes: options.maxListBytes ?? MAX_LIST_BYTES,
    };
    this.#posts = { view: newQueueView(), pacing: options.pacing ?? PACING };
  }

  readList(deadline?: Deadline, held?: (tag: string) => boolean): Promise<TodoList> {
    const started = this.#table.runtime.now();
    return this.#call(deadline, async (signal) => {
      // A container's first list starts from the counter its seed read, if the seed began after the list did.
      const seed = this.#seedRead;
      const read = await readList(this.#table, this.#held, signal, {
        counter: seed && seed.began >= started ? seed.counter : undefined,
        unchanged: held,
        pageSize: this.options.pageSize,
        sharedAfterBytes: this.options.sharedAfterBytes,
        raiseWithinMs: this.options.raiseWithinMs,
        versionTrusted: this.options.listVersion !== 'written',
      });
      // The list that ended last, whatever its version: the next list checks it against the counter.
      if (read.held) this.#held = read.held;
      return read.list;
    });
  }

  get(id: number, deadline?: Deadline): Promise<Todo | undefined> {
    return this.#call(deadline, async (signal) => {
      const item = await getItem(this.#table, todoKey(id), signal);
      return item && toTodo(item);
    });
  }

  /**
   * POSTs during a transaction go in the next (serverless-offline runs all in one process); on Lambda, each alone. What
   * it carries in one process, and the designs without it that did not: docs/performance.md, "In one process".
   */
  create(request: NewTodo, { deadline = this.#defaultDeadline(), claim }: WriteOptions = {}): Promise<Written<Todo>> {
    return this.#call(
      deadline,
      (signal) =>
        new Promise<Written<Todo>>((resolve, reject) => {
          const pending: PendingCreate = { request, claim, signal, deadline, resolve, reject };
          if (!this.#posts.pacing.batchPosts) {
            void this.#commitBatch([pending]);
            return;
          }
          this.#pending.push(pending);
          signal.addEventListener(
            'abort',
            () => {
              // Still waiting: it leaves the queue, and no record is written for it.
              const index = this.#pending.indexOf(pending);
              if (index >= 0) this.#pending.splice(index, 1);
              reject(signal.reason as Error);
            },
            { once: true },
          );
          void this.#commitPending();
        }),
    );
  }

  update(id: number, patch: TodoPatch, options: WriteOptions = {}): Promise<Written<Todo> | undefined> {
    const { deadline, precondition } = options;
    // Nothing to change: the answer is the record as it is (or a failed If-Match's 412), and no key is claimed.
    if (changesNothing(patch)) {
      return this.get(id, deadline).then((todo) => {
        if (todo !== undefined) checkPrecondition(precondition, todo);
        return todo && { value: todo, replayed: false };
      });
    }
    return this.#call(deadline, async (signal) => {
      const done = await rewrite(this.#table, id, options, signal, putChange(this.#table.name, patch));
      return done?.value && { value: done.value, replayed: done.replayed };
    });
  }

  remove(id: number, options: WriteOptions = {}): Promise<Written<true> | undefined> {
    return this.#call(options.deadline, async (signal) => {
      const done = await rewrite(this.#table, id, options, signal, deleteChange(this.#table.name));
      return done && { value: true as const, replayed: done.replayed };
    });
  }

  kept(claim: IdempotencyClaim, deadline?: Deadline): Promise<Written<Todo> | undefined> {
    return this.#call(deadline, async (signal) => {
      const item = await getItem(this.#table, claimKey(claim.key), signal);
      const replay = item && replayOf(item, claim, this.#table.runtime.now());
      // Another request's key holds nothing for this one: the refusal of this one stands.
      if (replay === undefined || replay instanceof KeyReused) return undefined;
      if (replay instanceof Error) throw replay;
      return replay.value && { value: replay.value, replayed: true };
    });
  }

  /** Runs an operation once seeded, aborted at the deadline; a failure not an answer of its own is StoreUnavailable. */
  async #call<T>(deadline: Deadline | undefined, operation: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const { runtime } = this.#table;
    const { signal, stop } = timeLimit(
      (deadline ?? this.#defaultDeadline()) - runtime.now(),
      () => new StoreUnavailable('DynamoDB did not answer before the deadline', { timedOut: true }),
      runtime,
    );
    try {
      await unlessAborted(this.#seed(signal), signal);
      // Not raced against the deadline: the operation ends by it, and may answer better than a 503 (claims.ts: 409).
      return await operation(signal);
    } catch (error) {
      // A 409 names the list's limit: this store's, wherever in it the refusal was made (a key's replay included).
      if (error instanceof ListFull) throw new ListFull({ replayed: error.replayed, limit: this.#table.maxListBytes });
      if (ANSWERS.some((answer) => error instanceof answer)) throw error;
      throw misconfigured(error) ?? new StoreUnavailable('DynamoDB request failed', { cause: error });
    } finally {
      stop();
    }
  }

  #defaultDeadline(): Deadline {
    return this.#table.runtime.now() + DEFAULT_BUDGET_MS;
  }

  /** Seeds the table once per container; a failed seed is tried again by the next request. */
  #seed(signal: AbortSignal): Promise<void> {
    const began = this.#table.runtime.now();
    this.#seeded ??= seeded(this.#table, signal).then(
      (counter) => {
        // Not this.#posts' counter: a new container's first POST queues (pacing.ts, `queues`), as a seed cannot see
        // POSTs waiting; at 256 containers new ones' POSTs written alone from it starved the queue (docs/scale.md).
        this.#seedRead = { counter, began };
      },
      (error: unknown) => {
        this.#seeded = undefined;
        throw error;
      },
    );
    return this.#seeded;
  }

  async #commitPending(): Promise<void> {
    if (this.#committing) return;
    this.#committing = true;
    try {
      while (this.#pending.length > 0) await this.#commitBatch(this.#takeBatch());
    } finally {
      this.#committing = false;
    }
  }

  async #commitBatch(batch: readonly PendingCreate[]): Promise<void> {
    try {
      const outcomes = await createPosts(
        this.#table,
        this.#posts,
        batch,
        AbortSignal.any(batch.map((pending) => pending.signal)),
        Math.min(...batch.map((pending) => pending.deadline)),
      );
      batch.forEach((pending, i) => {
        const outcome = outcomes[i];
        if (outcome instanceof Error) pending.reject(outcome);
        else if (outcome !== undefined) pending.resolve(outcome);
      });
    } catch (error) {
      // A key contended to the end is a 409 for the POSTs with a key; the others timed out.
      for (const pending of batch) {
        pending.reject(
          error instanceof KeyInFlight && !pending.claim
            ? new StoreUnavailable('DynamoDB did not answer before the deadline', { timedOut: true })
            : error,
        );
      }
    }
  }

  /**
   * The next POSTs in order, as many as one transaction's actions take, one per key (a transaction touches an item
   * once). Its bytes need no count: with titles capped (MAX_TITLE_LENGTH), 99 actions of a record or a claim each hold
   * under half a megabyte, far within DynamoDB's 4 MB a transaction.
   */
  #takeBatch(): PendingCreate[] {
    const batch: PendingCreate[] = [];
    const keys = new Set<string>();
    let actions = 0;
    for (const pending of [...this.#pending]) {
      const adds = pending.claim ? 2 : 1;
      if (actions + adds > MAX_BATCH_ACTIONS) break;
      if (pending.claim) {
        if (keys.has(pending.claim.key)) continue;
        keys.add(pending.claim.key);
      }
      this.#pending.splice(this.#pending.indexOf(pending), 1);
      batch.push(pending);
      actions += adds;
    }
    return batch;
  }
}

/** Off AWS, credentials missing or refused are the developer's to set: a StoreMisconfigured that says how (lib/aws/credentials.ts). */
function misconfigured(error: unknown): StoreMisconfigured | undefined {
  const problem = credentialsProblem(error, 'DynamoDB');
  return problem === undefined ? undefined : new StoreMisconfigured(problem, { cause: error });
}

/** Configured by TODOS_TABLE, DYNAMODB_ENDPOINT locally, TODO_LIST_VERSION=written. */
export function dynamoDbStoreFromEnv(env: NodeJS.ProcessEnv = process.env): DynamoDbTodoStore {
  const table = env.TODOS_TABLE;
  if (table === undefined || table === '') throw new Error('TODOS_TABLE must name the DynamoDB table');
  return new DynamoDbTodoStore(dynamoDb({ endpoint: env.DYNAMODB_ENDPOINT }), table, {
    listVersion: env.TODO_LIST_VERSION === 'written' ? 'written' : 'read',
  });
}
