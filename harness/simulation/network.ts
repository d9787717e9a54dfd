import { REQUEST_TIMEOUT_MS, RequestFailure, type Transport } from '../../lib/aws/https';
import {
  inProgress,
  internalError,
  provisionedThroughputExceeded,
  throttlingException,
  transactionConflict,
  transactionThrottled,
  cancelled,
  CONFLICT,
  NONE,
  type Answer,
} from './answers';
import type { Runtime } from '../../lib/runtime';
import { claimKey } from '../../lib/dynamodb/claims';
import { outcomeKey } from '../../lib/dynamodb/queue';
import { COUNTER_KEY, TODO_PARTITION } from '../../lib/dynamodb/table';
import type { SimulatedDynamoDb } from './dynamodb';

/**
 * The network between the store's containers and the simulated DynamoDB, owned by the
 * simulator: every copy the store's client sends goes through `transport`, and the fault script
 * says what happens to it. Time is the simulator's fake clock: each leg takes LEG_MS, DynamoDB
 * serves a request in SERVICE_MS, and a copy with no answer in time fails as the real client's
 * does, after REQUEST_TIMEOUT_MS, with its fate unknown.
 */

/** What can happen to one copy of a write (docs/testing.md, "The simulator"). */
export type Fault =
  /** Held in the network: it reaches DynamoDB later (see Step.landsAfter), and its answer never comes. */
  | 'held'
  /** Applied, and its answer lost. */
  | 'lost'
  /** ProvisionedThroughputExceededException: not applied. */
  | 'throttle'
  /** A transaction cancelled with ThrottlingError (a single write: ThrottlingException). */
  | 'throttling error'
  /** A transaction cancelled with TransactionConflict (a single write: TransactionConflictException). */
  | 'conflict'
  /** TransactionInProgressException: a copy with the same token is said to be running. */
  | 'in progress'
  | '500 before'
  | '500 after';

export const FAULTS: readonly Fault[] = [
  'held',
  'lost',
  'throttle',
  'throttling error',
  'conflict',
  'in progress',
  '500 before',
  '500 after',
];

/** One fault of a script; a held copy lands just before the copy `landsAfter` copies later is sent, or at the end. */
export interface Step {
  readonly fault: Fault;
  readonly landsAfter?: number;
}

/** The places a held copy may land: just before each of the next few copies, or after every other. */
export const LANDINGS = [0, 1, 2, 3, 4, Infinity];

/** Every fault a copy can meet, held copies once for each place they can land. */
export const ALPHABET: readonly Step[] = FAULTS.flatMap((fault): Step[] =>
  fault === 'held' ? LANDINGS.map((landsAfter) => ({ fault, landsAfter })) : [{ fault }],
);

/** What the copies of writes meet: a script, fault by fault, or a fault drawn for each at a rate. */
export type Faults = readonly Step[] | { readonly rate: number; readonly random: () => number };

const LEG_MS = 1;
const SERVICE_MS = 2;

/** Every kind of request the store sends (lib/dynamodb/client.ts): a summary counts each, none left out. */
export const REQUEST_KINDS = ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems'] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];
const WRITES: readonly string[] = ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems'];
/** The writes that are not transactions: a fault's answer to one of these is a single write's (see `refusal`). */
export const SINGLE_WRITES: readonly string[] = ['PutItem', 'UpdateItem', 'DeleteItem'];

/**
 * The kinds of the roles a transaction's actions play (lib/dynamodb/transaction.ts: `counter`,
 * `record …`, `claim …`, `intent …`, `outcome …`). The roles never go on the wire: the network
 * tells them by each action's key, as lib/dynamodb/table.ts lays the table out; `other` is an
 * action on a key of none of these (a role added since, which this should learn).
 */
export const ROLE_KINDS = ['counter', 'record', 'claim', 'intent', 'outcome', 'other'] as const;
export type RoleKind = (typeof ROLE_KINDS)[number];

/** How many copies met a fault: by request kind, and, for a transaction's, once for each kind of role it holds. */
export interface FaultedCopies {
  readonly byKind: Record<RequestKind, number>;
  readonly byRole: Record<RoleKind, number>;
}

export function noFaultedCopies(): FaultedCopies {
  return {
    byKind: Object.fromEntries(REQUEST_KINDS.map((kind) => [kind, 0])) as Record<RequestKind, number>,
    byRole: Object.fromEntries(ROLE_KINDS.map((kind) => [kind, 0])) as Record<RoleKind, number>,
  };
}

/** `into` plus `more`, kind by kind: a scenario's counts over its runs. */
export function addFaultedCopies(into: FaultedCopies, more: FaultedCopies): void {
  for (const kind of REQUEST_KINDS) into.byKind[kind] += more.byKind[kind];
  for (const kind of ROLE_KINDS) into.byRole[kind] += more.byRole[kind];
}

const CLAIM_PREFIX = claimKey('').pk;
const OUTCOME_PREFIX = outcomeKey('').pk;

/** The kind of role an action on this key plays: the counter's own item, or an intent under its partition, and so on. */
function roleKindOf(pk: string, id: string): RoleKind {
  if (pk === COUNTER_KEY.pk) return id === String(COUNTER_KEY.id) ? 'counter' : 'intent';
  if (pk === TODO_PARTITION) return 'record';
  if (pk.startsWith(CLAIM_PREFIX)) return 'claim';
  if (pk.startsWith(OUTCOME_PREFIX)) return 'outcome';
  return 'other';
}

type WireKey = Record<string, { readonly S?: string; readonly N?: string } | undefined>;
type WireAction = Record<string, { readonly Key?: WireKey; readonly Item?: WireKey } | undefined>;

/** The kinds of role a TransactWriteItems body's actions play, each once. */
function roleKinds(body: string): Set<RoleKind> {
  const { TransactItems } = JSON.parse(body) as { TransactItems: WireAction[] };
  const kinds = new Set<RoleKind>();
  for (const action of TransactItems) {
    for (const inner of Object.values(action)) {
      const key = inner?.Key ?? inner?.Item;
      if (key !== undefined) kinds.add(roleKindOf(key.pk?.S ?? '', key.id?.N ?? ''));
    }
  }
  return kinds;
}

/** One line of a run's trace. */
export type TraceLine = string;

interface Delivery {
  readonly operation: string;
  readonly body: string;
  readonly copy: number;
  readonly step: Step | undefined;
  readonly reply: Reply;
}

/**
 * The client's side of one copy: its answer or its timeout, whichever is due first, unless the
 * request's signal aborts first. A copy given up on still reaches DynamoDB: only its answer goes.
 */
class Reply {
  readonly #timers: (() => void)[] = [];
  readonly #onAbort = () => {
    this.#settle();
    this.reject(this.signal.reason as Error);
  };

  constructor(
    private readonly runtime: Runtime,
    private readonly signal: AbortSignal,
    private readonly resolve: (answer: { status: number; body: Record<string, unknown> }) => void,
    private readonly reject: (error: Error) => void,
    readonly note: (line: string) => void,
  ) {
    signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  answerIn(ms: number, answer: Answer): void {
    if (this.signal.aborted) return;
    this.#timers.push(
      this.runtime.after(ms, () => {
        this.note(`answered ${answer.status} ${errorName(answer)}`);
        this.#settle();
        this.resolve({ status: answer.status, body: JSON.parse(answer.body) as Record<string, unknown> });
      }),
    );
  }

  timeoutIn(ms: number): void {
    this.#timers.push(
      this.runtime.after(ms, () => {
        this.note(`no answer within ${ms} ms`);
        this.#settle();
        this.reject(new RequestFailure('TimeoutError', 'no answer (simulated)', true));
      }),
    );
  }

  #settle(): void {
    for (const cancel of this.#timers) cancel();
    this.signal.removeEventListener('abort', this.#onAbort);
  }
}

export class Network {
  /** Copies of writes sent since the faults were turned on: the script's faults go to the first ones, in order. */
  #writes = 0;
  /** Undefined until the scenario has set up: no faults, and no copy counted. */
  #faults: Faults | undefined;
  readonly #held: { landsAt: number; operation: string; body: string; copy: number }[] = [];
  readonly trace: TraceLine[] = [];
  /** The operation of each copy of a write sent while faults were on, in order: the explorer's view of what a fault meets. */
  readonly copies: string[] = [];
  /** The copies that met a fault, counted for the summary of `npm run simulate`. */
  readonly faulted: FaultedCopies = noFaultedCopies();

  constructor(
    private readonly dynamodb: SimulatedDynamoDb,
    private readonly runtime: Runtime,
    /** The run's time, for the trace: ms since it started. */
    private readonly now: () => number,
    /** Called after every request that takes effect: the simulator checks its invariants there. */
    private readonly afterStep: (step: string) => void = () => undefined,
  ) {}

  /** From now on, the copies of writes meet `script`'s faults, in order. */
  startFaults(faults: Faults): void {
    this.#faults = faults;
  }

  /** How many copies of writes were sent: a script longer than this had faults that met nothing. */
  get writesSent(): number {
    return this.#writes;
  }

  readonly transport: Transport = (operation, body, signal) => {
    const counted = this.#faults !== undefined && WRITES.includes(operation);
    const copy = counted ? ++this.#writes : 0;
    if (counted) this.#landHeld(copy);
    const step = counted ? this.#stepFor(copy) : undefined;
    if (counted) this.copies.push(operation);
    if (step !== undefined) this.#count(operation, body);
    const kind = counted ? `copy ${copy}` : WRITES.includes(operation) ? 'set-up' : 'read';
    const label = `${kind} ${operation}${summary(body)}`;
    this.#log(`${label}: sent${step === undefined ? '' : ` (${step.fault})`}`);
    return new Promise((resolve, reject) => {
      const reply = new Reply(this.runtime, signal, resolve, reject, (line) => {
        this.#log(`${label}: ${line}`);
      });
      this.#deliver({ operation, body, copy, step, reply });
    });
  };

  #count(operation: string, body: string): void {
    if (operation in this.faulted.byKind) this.faulted.byKind[operation as RequestKind]++;
    if (operation !== 'TransactWriteItems') return;
    for (const kind of roleKinds(body)) this.faulted.byRole[kind]++;
  }

  /** What becomes of one copy under its step of the script: it reaches DynamoDB or not, and its answer comes back or not. */
  #deliver({ operation, body, copy, step, reply }: Delivery): void {
    const arrive = (then: (answered: Answer) => void) => {
      this.#arrive(operation, body, then);
    };
    if (step === undefined) {
      arrive((answered) => {
        reply.answerIn(LEG_MS, answered);
      });
      return;
    }
    switch (step.fault) {
      case 'held':
        this.#held.push({ landsAt: copy + 1 + (step.landsAfter ?? Infinity), operation, body, copy });
        reply.timeoutIn(REQUEST_TIMEOUT_MS);
        return;
      case 'lost':
        arrive((answered) => {
          reply.note(`applied as ${answered.status}, answer lost`);
        });
        reply.timeoutIn(REQUEST_TIMEOUT_MS);
        return;
      case '500 after':
        arrive((answered) => {
          reply.note(`applied as ${answered.status}, answered 500`);
          reply.answerIn(LEG_MS, internalError());
        });
        return;
      default:
        reply.answerIn(2 * LEG_MS, refusal(step.fault, operation, body));
    }
  }

  /** A copy reaches DynamoDB after a leg, and takes effect after its service time (it is in progress meanwhile). */
  #arrive(operation: string, body: string, then: (answered: Answer) => void): void {
    this.runtime.after(LEG_MS, () => {
      const begun = this.dynamodb.begin(operation, body);
      if ('answer' in begun) {
        then(begun.answer);
        return;
      }
      this.runtime.after(SERVICE_MS, () => {
        const answered = begun.inProgress.finish();
        this.afterStep(`${operation} (${String(this.now())} ms)`);
        then(answered);
      });
    });
  }

  /** The fault the `copy`th copy of a write meets: the script's, or one drawn at the rate (or none). */
  #stepFor(copy: number): Step | undefined {
    const faults = this.#faults;
    if (faults === undefined) return undefined;
    if (!('rate' in faults)) return faults[copy - 1];
    const { rate, random } = faults;
    return random() < rate ? ALPHABET[Math.floor(random() * ALPHABET.length)] : undefined;
  }

  /** Every held copy lands now (the run is over: nothing is in flight for longer than this). */
  landAll(): void {
    this.#landHeld(Infinity);
  }

  #landHeld(before: number): void {
    for (const held of this.#held.filter(({ landsAt }) => landsAt <= before)) {
      this.#held.splice(this.#held.indexOf(held), 1);
      const answered = this.dynamodb.handle(held.operation, held.body);
      this.#log(`copy ${held.copy} lands late: ${answered.status} ${errorName(answered)}`);
      this.afterStep(`copy ${held.copy} landed late`);
    }
  }

  #log(line: string): void {
    this.trace.push(`${String(this.now()).padStart(6)} ms  ${line}`);
  }
}

/** The answer a fault gives instead of DynamoDB's, for this operation. */
function refusal(fault: Fault, operation: string, body: string): Answer {
  const transaction = operation === 'TransactWriteItems';
  const actions = transaction ? (JSON.parse(body) as { TransactItems: unknown[] }).TransactItems.length : 1;
  switch (fault) {
    case 'throttle':
      return provisionedThroughputExceeded();
    case 'throttling error':
      return transaction ? transactionThrottled(actions, 0) : throttlingException();
    case 'conflict':
      return transaction ? cancelled([CONFLICT, ...Array<typeof NONE>(actions - 1).fill(NONE)]) : transactionConflict();
    case 'in progress':
      return transaction ? inProgress() : transactionConflict();
    default:
      return internalError();
  }
}

function errorName(answer: Answer): string {
  const { __type, CancellationReasons } = JSON.parse(answer.body) as {
    __type?: string;
    CancellationReasons?: { Code: string }[];
  };
  if (__type === undefined) return 'ok';
  const name = __type.slice(__type.lastIndexOf('#') + 1);
  return CancellationReasons ? `${name} [${CancellationReasons.map(({ Code }) => Code).join(', ')}]` : name;
}

/** What a request touches, for the trace: its keys, never its items. */
function summary(body: string): string {
  const keys: string[] = [];
  // Every map that holds a key (an item, a Key), wherever its attributes stand: a record the queue
  // numbers has its id after its other fields.
  function visit(value: unknown): void {
    if (typeof value !== 'object' || value === null) return;
    const { pk, id } = value as { pk?: { S?: unknown }; id?: { N?: unknown } };
    if (typeof pk?.S === 'string' && typeof id?.N === 'string') keys.push(`${pk.S}/${id.N}`);
    for (const inner of Object.values(value)) visit(inner);
  }
  visit(JSON.parse(body));
  const unique = keys.filter((key, i) => keys.indexOf(key) === i);
  return unique.length === 0 ? '' : ` ${unique.slice(0, 6).join(' ')}${unique.length > 6 ? ' …' : ''}`;
}
