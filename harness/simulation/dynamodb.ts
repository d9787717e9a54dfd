import { unmarshall } from '@aws-sdk/util-dynamodb';
import { itemSize } from '../aws-dynamodb/requests';
import {
  CONFLICT,
  NONE,
  cancelled,
  conditionFailedReason,
  conditionalCheckFailed,
  idempotentParameterMismatch,
  inProgress as transactionInProgress,
  ok,
  transactionConflict,
  validationErrorReason,
  validationException,
  type Answer,
  type CancellationReason,
} from './answers';
import { canonical, typed, type AttributeMap, type AttributeValue } from './attribute-values';
import {
  Invalid,
  Substitutions,
  Unsupported,
  applyUpdate,
  holds,
  parseCondition,
  parseKeyCondition,
  parseProjection,
  parseUpdate,
  project,
  type Condition,
  type Update,
} from './expressions';

/**
 * DynamoDB in the process, synchronous and deterministic, for a simulator that owns the clock,
 * the network and every random draw, as FoundationDB's simulation testing does. It speaks the
 * wire protocol the store's client speaks (lib/dynamodb/client.ts): an operation and a JSON body
 * in, an HTTP status and a JSON body out; and it does what real DynamoDB does that DynamoDB Local
 * does not, under the simulator's control:
 *
 * - Two phases. `begin` takes a request in, or refuses it at once (a conflict, a token in use, a
 *   request DynamoDB finds invalid); `finish` is the moment it takes effect, and returns its
 *   answer. Between the two it is in progress, for its service time, and holds its items as
 *   conflicts.ts describes DynamoDB's: a transaction meeting an item held by any request in
 *   progress is cancelled (TransactionConflict at that item, None at the others); a single write
 *   meeting an item held by a transaction is refused (TransactionConflictException); a
 *   transaction whose ClientRequestToken is in progress is refused
 *   (TransactionInProgressException); reads meet nothing, and see what was last committed.
 *   A transaction's conditions are decided at `begin` (its prepare): it holds its items from
 *   then, so nothing can change them before `finish` commits. A single write and a read are
 *   decided at `finish`, against what is committed then (single writes on one item do not hold
 *   each other up: DynamoDB applies them in turn). `handle` is `begin` and `finish` at once.
 * - ClientRequestToken. Within TOKEN_WINDOW_MS (by the injected clock) of a transaction that
 *   succeeded with a token, the same body with that token is answered 200 and not applied again;
 *   another body, IdempotentParameterMismatchException. A transaction that was cancelled or
 *   refused leaves its token unused: the API reference says a token is valid "for 10 minutes
 *   after the first request that uses it is completed", without saying whether a cancelled one
 *   counts; a copy of a cancelled transaction evaluated afresh is the conservative reading (the
 *   store must then cope with a retry that applies), and the one Alex DeBrie's "DynamoDB
 *   Transactions: Use Cases and Examples" describes ("if it failed the first time, DynamoDB
 *   will apply the writes").
 * - Limits: an item over 400 KB (ValidationException; in a transaction, ValidationError at the
 *   item), a transaction of more than 100 actions or 4 MB, or with two actions on one item
 *   (ValidationException).
 * - A Query page ends at its Limit or once the items it read reach 1 MB (before projection):
 *   LastEvaluatedKey is then the last item's key, even when nothing follows, as DynamoDB gives it.
 *   The simulator may end one sooner (BeginOptions.pageItems), as 1 MB of larger items would.
 * - Capacity, counted and never enforced (`consumed`), by partition key value as capacity.ts
 *   counts it: a read unit per 4 KB read (half for an eventually consistent read), a Query's
 *   items counted whole before projection and rounded up once a page; a write unit per 1 KB of
 *   the larger of the item before and after; a transaction's items twice. A single write whose
 *   condition failed is charged; a request refused or cancelled is not.
 *
 * Not modelled: DynamoDB's reserved words (a bare `name` is accepted here), numbers beyond
 * JavaScript's precision (arithmetic is a double's), sort key conditions, indexes, Scan,
 * BatchWriteItem, TransactGetItems, ReturnValues other than NONE, ReturnConsumedCapacity; a
 * transaction's 4 MB counts the items it puts and the keys of its other actions, not an update's
 * values.
 *
 * Faults (throttles, 500s) are the simulator's to decide: it sends one of the answers of
 * answers.ts instead of calling `begin`, or (a 500 after applying) after `finish`. What the
 * simulator cannot be told apart from a bug throws Unsupported: an operation, a parameter or an
 * expression form this class does not model.
 *
 * The table is the store's (serverless.yml's TodosTable): partition key `pk` (a string), sort key
 * `id` (a number); every TableName names one, created empty when first used.
 */

/** How long a ClientRequestToken identifies a transaction after it succeeded. */
export const TOKEN_WINDOW_MS = 10 * 60_000;
export const MAX_ITEM_BYTES = 400 * 1024;
export const MAX_TRANSACTION_ACTIONS = 100;
export const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;
export const QUERY_PAGE_BYTES = 1024 * 1024;

const PARTITION_KEY = 'pk';
const SORT_KEY = 'id';
const READ_UNIT_BYTES = 4096;
const WRITE_UNIT_BYTES = 1024;

/** An item as the store reads it: plain values. */
export type Item = Record<string, unknown>;

/** A request taken in: `finish` makes it take effect, and returns its answer. */
export interface InProgress {
  readonly id: number;
  finish(): Answer;
}

/** What the simulator decides of one request, besides its faults. */
export interface BeginOptions {
  /** A Query's page ends after this many items, with its LastEvaluatedKey, as if they had reached 1 MB. */
  readonly pageItems?: number;
}

/** What `begin` did: answered at once (refused, or a transaction's replay), or took the request in. */
export type Begun = { readonly answer: Answer } | { readonly inProgress: InProgress };

/** Capacity units one partition key value consumed, counted as capacity.ts counts them. */
export interface ConsumedCapacity {
  readonly table: string;
  readonly pk: string;
  readonly readUnits: number;
  readonly writeUnits: number;
}

// ---- Requests, as this class holds them ----------------------------------------------------

interface Key {
  readonly pk: string;
  readonly id: number;
}

type Action = 'Put' | 'Update' | 'Delete' | 'ConditionCheck';

/** One write, parsed and checked: a single write, or one action of a transaction. */
interface Write {
  readonly action: Action;
  readonly table: string;
  readonly key: Key;
  readonly item?: AttributeMap;
  readonly update?: Update;
  readonly condition?: Condition;
  readonly returnOld: boolean;
}

type Read =
  | {
      readonly operation: 'GetItem';
      readonly table: string;
      readonly key: Key;
      readonly projection?: readonly string[];
      readonly consistent: boolean;
    }
  | {
      readonly operation: 'Query';
      readonly table: string;
      readonly pk: string;
      readonly limit?: number;
      /** BeginOptions.pageItems. */
      readonly stopAfter?: number;
      readonly after?: number;
      readonly projection?: readonly string[];
      readonly consistent: boolean;
    };

/** A write's effect, decided: the item after it (undefined: none), and whether it writes at all. */
interface Prepared {
  readonly write: Write;
  readonly before: AttributeMap | undefined;
  readonly after: AttributeMap | undefined;
}

interface Common {
  readonly id: number;
  readonly operation: string;
  readonly body: string;
}

/** A request in progress: data only, so a copy of the state (clone) can finish it too. */
type Pending =
  | (Common & { readonly kind: 'read'; readonly read: Read })
  | (Common & { readonly kind: 'write'; readonly write: Write })
  | (Common & {
      readonly kind: 'transaction';
      readonly prepared: readonly Prepared[];
      readonly token?: string;
      readonly request: string;
    });

/** A request in progress before it has its id. */
type Unnumbered<T> = T extends unknown ? Omit<T, 'id'> : never;

interface TokenRecord {
  /** The transaction's body, canonical: another body with the token is a mismatch. */
  readonly request: string;
  readonly completedAt: number;
}

type Table = Map<string, Map<number, AttributeMap>>;

interface State {
  readonly tables: Map<string, Table>;
  readonly tokens: Map<string, TokenRecord>;
  readonly pending: Map<number, Pending>;
  readonly consumed: Map<string, { readUnits: number; writeUnits: number }>;
  nextId: number;
}

// ---- The simulated DynamoDB ------------------------------------------------------------------

export class SimulatedDynamoDb {
  readonly #now: () => number;
  #state: State = { tables: new Map(), tokens: new Map(), pending: new Map(), consumed: new Map(), nextId: 1 };

  /** `now`: the simulator's clock, in ms, for the token window only. */
  constructor({ now }: { readonly now: () => number }) {
    this.#now = now;
  }

  /** Takes the request in, or answers it at once. Throws Unsupported for what is not modelled. */
  begin(operation: string, body: string, options: BeginOptions = {}): Begun {
    try {
      return this.#begin(operation, body, options);
    } catch (error) {
      if (error instanceof Invalid) return { answer: validationException(error.message) };
      throw error;
    }
  }

  /** The request `id` takes effect: its answer. */
  finish(id: number): Answer {
    const pending = this.#state.pending.get(id);
    if (pending === undefined) throw new Error(`no request ${id} is in progress`);
    this.#state.pending.delete(id);
    switch (pending.kind) {
      case 'read':
        return this.#read(pending.read);
      case 'write':
        return this.#writeNow(pending.write);
      case 'transaction':
        return this.#commit(pending);
    }
  }

  /** `begin` and `finish` at once. */
  handle(operation: string, body: string): Answer {
    const begun = this.begin(operation, body);
    return 'answer' in begun ? begun.answer : begun.inProgress.finish();
  }

  /** The requests in progress, in the order they were taken in. */
  inProgress(): { readonly id: number; readonly operation: string; readonly body: string }[] {
    return [...this.#state.pending.values()].map(({ id, operation, body }) => ({ id, operation, body }));
  }

  /** Every committed item of `table`, as plain values, by partition key then sort key. */
  items(table: string): Item[] {
    const partitions = this.#state.tables.get(table) ?? new Map<string, Map<number, AttributeMap>>();
    return [...partitions.keys()]
      .sort(byString)
      .flatMap((pk) => sortedItems(partitions.get(pk)))
      .map((item) => unmarshall(item as Record<string, never>));
  }

  /** Every table's items (see `items`), by table name. */
  snapshot(): Record<string, Item[]> {
    return Object.fromEntries(this.#tableNames().map((table) => [table, this.items(table)]));
  }

  /**
   * A string equal for two states exactly when they answer every request alike: the committed
   * items, the live tokens and the requests in progress (by id). Capacity counters are left out.
   */
  stateKey(): string {
    const now = this.#now();
    const tables = this.#tableNames().map((table) => {
      const partitions = this.#state.tables.get(table);
      return [table, [...(partitions?.keys() ?? [])].sort(byString).map((pk) => sortedItems(partitions?.get(pk)))];
    });
    const tokens = [...this.#state.tokens]
      .filter(([, record]) => now - record.completedAt < TOKEN_WINDOW_MS)
      .sort(([a], [b]) => byString(a, b));
    const pending = [...this.#state.pending.values()].map(({ id, operation, body }) => [id, operation, body]);
    return canonical({ tables, tokens, pending });
  }

  /** An independent copy, requests in progress included (`copy.finish(id)`), on the same clock. */
  clone(): SimulatedDynamoDb {
    const { tables, tokens, pending, consumed, nextId } = this.#state;
    const copy = new SimulatedDynamoDb({ now: this.#now });
    copy.#state = {
      // Items are never changed in place: the copies share them.
      tables: new Map(
        [...tables].map(([name, table]) => [
          name,
          new Map([...table].map(([pk, partition]) => [pk, new Map(partition)])),
        ]),
      ),
      tokens: new Map(tokens),
      pending: new Map(pending),
      consumed: new Map([...consumed].map(([partition, units]) => [partition, { ...units }])),
      nextId,
    };
    return copy;
  }

  /** Capacity units consumed so far, by partition key value: what was applied or read, and single writes whose condition failed. */
  consumed(): ConsumedCapacity[] {
    return [...this.#state.consumed]
      .sort(([a], [b]) => byString(a, b))
      .map(([partition, units]) => {
        const [table = '', pk = ''] = JSON.parse(partition) as string[];
        return { table, pk, ...units };
      });
  }

  // ---- Taking requests in ----

  #begin(operation: string, text: string, { pageItems }: BeginOptions): Begun {
    const body = parseBody(text);
    switch (operation) {
      case 'GetItem':
        return this.#admit({ kind: 'read', operation, body: text, read: parseRead(operation, body) });
      case 'Query': {
        const read = parseRead(operation, body);
        const stopped =
          read.operation === 'Query' && pageItems !== undefined ? { ...read, stopAfter: pageItems } : read;
        return this.#admit({ kind: 'read', operation, body: text, read: stopped });
      }
      case 'PutItem':
      case 'UpdateItem':
      case 'DeleteItem': {
        const write = parseWrite(operation.replace('Item', '') as Action, body, true);
        if (this.#heldByTransaction(itemId(write))) return { answer: transactionConflict() };
        return this.#admit({ kind: 'write', operation, body: text, write });
      }
      case 'TransactWriteItems':
        return this.#beginTransaction(text, body);
      default:
        throw new Unsupported(`the simulated DynamoDB does not model ${operation}`);
    }
  }

  #beginTransaction(text: string, body: Body): Begun {
    checkFields(body, ['TransactItems', 'ClientRequestToken'], 'TransactWriteItems');
    const actions = body.TransactItems;
    if (!Array.isArray(actions) || actions.length === 0 || actions.length > MAX_TRANSACTION_ACTIONS)
      throw new Invalid(
        `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to ${MAX_TRANSACTION_ACTIONS} and greater than or equal to 1`,
      );
    const writes = actions.map((action) => parseTransactAction(action));
    const items = writes.map(itemId);
    if (new Set(items).size !== items.length)
      throw new Invalid('Transaction request cannot include multiple operations on one item');
    if (writes.reduce((sum, write) => sum + requestBytes(write), 0) > MAX_TRANSACTION_BYTES)
      throw new Invalid('Transaction request size exceeds the maximum allowed size of 4 MB');

    const token = optionalString(body, 'ClientRequestToken');
    const request = canonical(body);
    if (token !== undefined) {
      const used = this.#tokenAnswer(token, request);
      if (used !== undefined) return { answer: used };
    }

    const conflicts = items.map((item) => this.#held(item));
    if (conflicts.some(Boolean)) return { answer: cancelled(conflicts.map((held) => (held ? CONFLICT : NONE))) };

    const outcomes = writes.map((write) => this.#outcome(write));
    const reasons = outcomes.map((outcome) => outcome.reason ?? NONE);
    if (outcomes.some((outcome) => outcome.reason !== undefined)) return { answer: cancelled(reasons) };
    const prepared = outcomes.map(({ prepared }) => prepared).filter((each) => each !== undefined);
    return this.#admit({
      kind: 'transaction',
      operation: 'TransactWriteItems',
      body: text,
      prepared,
      request,
      ...(token !== undefined && { token }),
    });
  }

  /** The answer a token gives on its own: in progress, a replay, a mismatch; undefined when unused (or expired). */
  #tokenAnswer(token: string, request: string): Answer | undefined {
    const inFlight = [...this.#state.pending.values()].some(
      (pending) => pending.kind === 'transaction' && pending.token === token,
    );
    if (inFlight) return transactionInProgress();
    const record = this.#state.tokens.get(token);
    if (record === undefined) return undefined;
    if (this.#now() - record.completedAt >= TOKEN_WINDOW_MS) {
      this.#state.tokens.delete(token);
      return undefined;
    }
    return record.request === request ? ok() : idempotentParameterMismatch();
  }

  #admit(pending: Unnumbered<Pending>): Begun {
    const id = this.#state.nextId++;
    this.#state.pending.set(id, { ...pending, id });
    return { inProgress: { id, finish: () => this.finish(id) } };
  }

  /** Whether a request in progress holds the item: any write or transaction. */
  #held(item: string): boolean {
    return [...this.#state.pending.values()].some((pending) => heldItems(pending).includes(item));
  }

  #heldByTransaction(item: string): boolean {
    return [...this.#state.pending.values()].some(
      (pending) => pending.kind === 'transaction' && heldItems(pending).includes(item),
    );
  }

  // ---- Taking effect ----

  /** A transaction's action against what is committed: its effect, or why it is cancelled. */
  #outcome(write: Write): { prepared?: Prepared; reason?: CancellationReason } {
    const before = this.#item(write.table, write.key);
    try {
      const after = effect(write, before);
      if (after === CONDITION_FAILED) return { reason: conditionFailedReason(write.returnOld ? before : undefined) };
      return { prepared: { write, before, after } };
    } catch (error) {
      if (error instanceof Invalid) return { reason: validationErrorReason(error.message) };
      throw error;
    }
  }

  #writeNow(write: Write): Answer {
    const before = this.#item(write.table, write.key);
    let after: AttributeMap | undefined | typeof CONDITION_FAILED;
    try {
      after = effect(write, before);
    } catch (error) {
      if (error instanceof Invalid) return validationException(error.message);
      throw error;
    }
    if (after === CONDITION_FAILED) {
      // A write whose condition failed still consumes write capacity.
      this.#charge(write.table, write.key.pk, 0, writeUnits(before, undefined));
      return conditionalCheckFailed(write.returnOld ? before : undefined);
    }
    this.#store(write.table, write.key, after);
    this.#charge(write.table, write.key.pk, 0, writeUnits(before, after));
    return ok();
  }

  #commit(transaction: Extract<Pending, { kind: 'transaction' }>): Answer {
    for (const { write, before, after } of transaction.prepared) {
      // A transaction counts every item twice: prepare and commit.
      if (write.action === 'ConditionCheck') {
        this.#charge(write.table, write.key.pk, 2 * readUnits(itemBytes(before)), 0);
        continue;
      }
      this.#store(write.table, write.key, after);
      this.#charge(write.table, write.key.pk, 0, 2 * writeUnits(before, after));
    }
    if (transaction.token !== undefined)
      this.#state.tokens.set(transaction.token, { request: transaction.request, completedAt: this.#now() });
    return ok();
  }

  #read(read: Read): Answer {
    const factor = read.consistent ? 1 : 0.5;
    if (read.operation === 'GetItem') {
      const item = this.#item(read.table, read.key);
      this.#charge(read.table, read.key.pk, factor * readUnits(itemBytes(item)), 0);
      return ok(item === undefined ? {} : { Item: project(item, read.projection) });
    }
    const page: AttributeMap[] = [];
    let bytes = 0;
    let cut = false;
    for (const item of sortedItems(this.#state.tables.get(read.table)?.get(read.pk))) {
      if (read.after !== undefined && sortKeyOf(item) <= read.after) continue;
      page.push(item);
      bytes += itemSize(item);
      if (page.length === read.limit || page.length === read.stopAfter || bytes >= QUERY_PAGE_BYTES) {
        cut = true;
        break;
      }
    }
    this.#charge(read.table, read.pk, factor * readUnits(bytes), 0);
    const last = page.at(-1);
    return ok({
      Items: page.map((item) => project(item, read.projection)),
      Count: page.length,
      ScannedCount: page.length,
      ...(cut && last !== undefined && { LastEvaluatedKey: keyAttributes(last) }),
    });
  }

  // ---- The tables ----

  #tableNames(): string[] {
    return [...this.#state.tables.keys()].sort(byString);
  }

  #item(table: string, key: Key): AttributeMap | undefined {
    return this.#state.tables.get(table)?.get(key.pk)?.get(key.id);
  }

  #store(table: string, key: Key, item: AttributeMap | undefined): void {
    const tables = this.#state.tables;
    const partitions = tables.get(table) ?? new Map<string, Map<number, AttributeMap>>();
    tables.set(table, partitions);
    const partition = partitions.get(key.pk) ?? new Map<number, AttributeMap>();
    if (item === undefined) partition.delete(key.id);
    else partition.set(key.id, item);
    if (partition.size === 0) partitions.delete(key.pk);
    else partitions.set(key.pk, partition);
  }

  #charge(table: string, pk: string, readUnits: number, writeUnits: number): void {
    const partition = JSON.stringify([table, pk]);
    const units = this.#state.consumed.get(partition) ?? { readUnits: 0, writeUnits: 0 };
    units.readUnits += readUnits;
    units.writeUnits += writeUnits;
    this.#state.consumed.set(partition, units);
  }
}

// ---- Effects ---------------------------------------------------------------------------------

const CONDITION_FAILED = Symbol('condition failed');

/**
 * The item after `write`, given the item before (undefined: none); CONDITION_FAILED when its
 * condition does not hold. Throws Invalid where DynamoDB refuses the write as it finds the item.
 */
function effect(write: Write, before: AttributeMap | undefined): AttributeMap | undefined | typeof CONDITION_FAILED {
  if (write.item !== undefined && itemSize(write.item) > MAX_ITEM_BYTES)
    throw new Invalid('Item size has exceeded the maximum allowed size');
  if (write.condition !== undefined && !holds(write.condition, before)) return CONDITION_FAILED;
  switch (write.action) {
    case 'Put':
      return write.item;
    case 'Delete':
      return undefined;
    case 'ConditionCheck':
      return before;
    case 'Update': {
      if (write.update === undefined) throw new Error('an Update without its expression');
      const after = applyUpdate(write.update, before, keyMap(write.key));
      if (itemSize(after) > MAX_ITEM_BYTES)
        throw new Invalid('Item size to update has exceeded the maximum allowed size');
      return after;
    }
  }
}

function itemBytes(item: AttributeMap | undefined): number {
  return item === undefined ? 0 : itemSize(item);
}

function readUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / READ_UNIT_BYTES));
}

/** A write counts the larger of the item before and after, in 1 KB units, at least one. */
function writeUnits(before: AttributeMap | undefined, after: AttributeMap | undefined): number {
  return Math.max(1, Math.ceil(Math.max(itemBytes(before), itemBytes(after)) / WRITE_UNIT_BYTES));
}

// ---- Keys and items --------------------------------------------------------------------------

function keyMap(key: Key): AttributeMap {
  return { [PARTITION_KEY]: { S: key.pk }, [SORT_KEY]: { N: String(key.id) } };
}

/** An item's key attributes, as DynamoDB answers them (LastEvaluatedKey). */
function keyAttributes(item: AttributeMap): AttributeMap {
  const { [PARTITION_KEY]: pk, [SORT_KEY]: id } = item;
  if (pk === undefined || id === undefined) throw new Error('an item without its key');
  return { [PARTITION_KEY]: pk, [SORT_KEY]: id };
}

function sortKeyOf(item: AttributeMap): number {
  const id = item[SORT_KEY];
  return id === undefined ? Number.NaN : Number(typed(id).inner);
}

function sortedItems(partition: Map<number, AttributeMap> | undefined): AttributeMap[] {
  if (partition === undefined) return [];
  return [...partition].sort(([a], [b]) => a - b).map(([, item]) => item);
}

function itemId(write: Write): string {
  return JSON.stringify([write.table, write.key.pk, write.key.id]);
}

function heldItems(pending: Pending): string[] {
  if (pending.kind === 'write') return [itemId(pending.write)];
  if (pending.kind === 'transaction') return pending.prepared.map(({ write }) => itemId(write));
  return [];
}

function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The table's key in `map`: a string `pk` and a number `id`; `exact`, nothing else (a Key, not an Item). */
function keyOf(map: AttributeMap, exact: boolean): Key {
  const pk = map[PARTITION_KEY];
  const id = map[SORT_KEY];
  if (pk === undefined || id === undefined) throw new Invalid('One of the required keys was not given a value');
  const partition = typed(pk);
  const sort = typed(id);
  if (partition.type !== 'S' || sort.type !== 'N' || (exact && Object.keys(map).length !== 2))
    throw new Invalid('The provided key element does not match the schema');
  return { pk: String(partition.inner), id: Number(sort.inner) };
}

// ---- Parsing requests ------------------------------------------------------------------------

type Body = Readonly<Record<string, unknown>>;

function parseBody(text: string): Body {
  const body: unknown = text === '' ? {} : JSON.parse(text);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new Invalid('the request body is not an object');
  return body as Body;
}

/** A parameter this class does not model is a bug to fix here, not one to ignore. */
function checkFields(body: Body, known: readonly string[], where: string): void {
  const unknown = Object.keys(body).filter((field) => !known.includes(field));
  if (unknown.length > 0)
    throw new Unsupported(`the simulated DynamoDB does not model ${where}'s ${unknown.join(', ')}`);
}

function optionalString(body: Body, field: string): string | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new Invalid(`${field} must be a string`);
  return value;
}

function requiredString(body: Body, field: string): string {
  const value = optionalString(body, field);
  if (value === undefined) throw new Invalid(`${field} is required`);
  return value;
}

function attributeMap(body: Body, field: string): AttributeMap | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Invalid(`${field} must be a map`);
  return value as AttributeMap;
}

function requiredMap(body: Body, field: string): AttributeMap {
  const value = attributeMap(body, field);
  if (value === undefined) throw new Invalid(`${field} is required`);
  return value;
}

function substitutionsOf(body: Body): Substitutions {
  return new Substitutions(
    attributeMap(body, 'ExpressionAttributeNames') as Readonly<Record<string, string>> | undefined,
    attributeMap(body, 'ExpressionAttributeValues'),
  );
}

const WRITE_FIELDS = [
  'TableName',
  'ConditionExpression',
  'ExpressionAttributeNames',
  'ExpressionAttributeValues',
  'ReturnValuesOnConditionCheckFailure',
];
const ACTION_FIELDS: Record<Action, readonly string[]> = {
  Put: ['Item'],
  Update: ['Key', 'UpdateExpression'],
  Delete: ['Key'],
  ConditionCheck: ['Key'],
};

/** A write, single (`single`: PutItem, UpdateItem, DeleteItem) or an action of a transaction. */
function parseWrite(action: Action, body: Body, single: boolean): Write {
  checkFields(body, [...WRITE_FIELDS, ...ACTION_FIELDS[action], ...(single ? ['ReturnValues'] : [])], action);
  const returnValues = optionalString(body, 'ReturnValues');
  if (returnValues !== undefined && returnValues !== 'NONE')
    throw new Unsupported(`the simulated DynamoDB does not model ReturnValues ${returnValues}`);
  const returnOnFailure = optionalString(body, 'ReturnValuesOnConditionCheckFailure') ?? 'NONE';
  if (returnOnFailure !== 'NONE' && returnOnFailure !== 'ALL_OLD')
    throw new Invalid(`ReturnValuesOnConditionCheckFailure must be NONE or ALL_OLD, not ${returnOnFailure}`);

  const substitutions = substitutionsOf(body);
  const conditionText = optionalString(body, 'ConditionExpression');
  if (action === 'ConditionCheck' && conditionText === undefined) throw new Invalid('ConditionExpression is required');
  const condition = conditionText === undefined ? undefined : parseCondition(conditionText, substitutions);
  const update = action === 'Update' ? parseUpdate(requiredString(body, 'UpdateExpression'), substitutions) : undefined;
  substitutions.checkAllUsed();
  for (const path of [...(update?.set.map(({ path }) => path) ?? []), ...(update?.remove ?? [])]) {
    if (path === PARTITION_KEY || path === SORT_KEY)
      throw new Invalid(`Cannot update attribute ${path}. This attribute is part of the key`);
  }

  const item = action === 'Put' ? requiredMap(body, 'Item') : undefined;
  const key = item === undefined ? keyOf(requiredMap(body, 'Key'), true) : keyOf(item, false);
  return {
    action,
    table: requiredString(body, 'TableName'),
    key,
    returnOld: returnOnFailure === 'ALL_OLD',
    ...(item !== undefined && { item }),
    ...(update !== undefined && { update }),
    ...(condition !== undefined && { condition }),
  };
}

function parseTransactAction(action: unknown): Write {
  const entries: [string, unknown][] =
    typeof action === 'object' && action !== null ? Object.entries(action as Record<string, unknown>) : [];
  const [entry] = entries;
  if (entries.length !== 1 || entry === undefined) throw new Invalid('each of TransactItems must hold one action');
  const [kind, inner] = entry;
  if (!(kind in ACTION_FIELDS)) throw new Unsupported(`the simulated DynamoDB does not model a transaction's ${kind}`);
  if (typeof inner !== 'object' || inner === null) throw new Invalid(`${kind} must be a map`);
  return parseWrite(kind as Action, inner as Body, false);
}

/** What an action adds to its transaction's size: the item it puts, or its key and values. */
function requestBytes(write: Write): number {
  return write.item === undefined ? itemSize(keyMap(write.key)) : itemSize(write.item);
}

const GET_FIELDS = ['TableName', 'Key', 'ConsistentRead', 'ProjectionExpression', 'ExpressionAttributeNames'];
const QUERY_FIELDS = [
  'TableName',
  'KeyConditionExpression',
  'ExpressionAttributeNames',
  'ExpressionAttributeValues',
  'ProjectionExpression',
  'ConsistentRead',
  'Limit',
  'ExclusiveStartKey',
];

function parseRead(operation: 'GetItem' | 'Query', body: Body): Read {
  checkFields(body, operation === 'GetItem' ? GET_FIELDS : QUERY_FIELDS, operation);
  const consistent = body.ConsistentRead === true;
  const table = requiredString(body, 'TableName');
  const substitutions = substitutionsOf(body);
  const projectionText = optionalString(body, 'ProjectionExpression');
  const projection = projectionText === undefined ? undefined : parseProjection(projectionText, substitutions);
  const projected = projection === undefined ? {} : { projection };
  if (operation === 'GetItem') {
    substitutions.checkAllUsed();
    return { operation, table, key: keyOf(requiredMap(body, 'Key'), true), consistent, ...projected };
  }
  const { path, value } = parseKeyCondition(requiredString(body, 'KeyConditionExpression'), substitutions);
  substitutions.checkAllUsed();
  if (path !== PARTITION_KEY)
    throw new Unsupported(`the simulated DynamoDB queries by ${PARTITION_KEY} only, not ${path}`);
  const pk = partitionValue(value);
  const limit = body.Limit;
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1))
    throw new Invalid('Limit must be an integer of at least 1');
  const start = attributeMap(body, 'ExclusiveStartKey');
  const startKey = start === undefined ? undefined : keyOf(start, true);
  if (startKey !== undefined && startKey.pk !== pk) throw new Invalid('The provided starting key is invalid');
  return {
    operation,
    table,
    pk,
    consistent,
    ...projected,
    ...(limit !== undefined && { limit }),
    ...(startKey !== undefined && { after: startKey.id }),
  };
}

function partitionValue(value: AttributeValue): string {
  const { type, inner } = typed(value);
  if (type !== 'S') throw new Invalid('Condition parameter type does not match schema type');
  return String(inner);
}
