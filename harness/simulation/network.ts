import { REQUEST_TIMEOUT_MS, RequestFailure, type Transport } from '../../lib/aws/https';
import {
  internalError,
  provisionedThroughputExceeded,
  throttlingException,
  transactionConflict,
  transactionConflicted,
  transactionThrottled,
  type Answer,
} from './answers';
import type { Runtime } from '../../lib/runtime';
import { claimKey } from '../../lib/dynamodb/claims';
import { outcomeKey } from '../../lib/dynamodb/queue';
import { COUNTER_KEY, TODO_PARTITION } from '../../lib/dynamodb/table';
import type { BeginOptions, SimulatedDynamoDb } from './dynamodb';
import { ConnectionReset } from './socket';

/**
 * The network between the store's containers and the simulated DynamoDB, owned by the
 * simulator: every copy the store's client sends goes through `transport`, and the fault script
 * says what happens to it. Time is the simulator's fake clock: each leg takes LEG_MS, DynamoDB
 * serves a request in SERVICE_MS, and a copy with no answer in time fails as the real client's
 * does, after REQUEST_TIMEOUT_MS, with its fate unknown.
 */

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
/** The roles a fault may name: every kind an action has (`other` is none's). */
export const ACTION_ROLES = ['counter', 'record', 'claim', 'intent', 'outcome'] as const satisfies readonly RoleKind[];
export type ActionRole = (typeof ACTION_ROLES)[number];

/** What can happen to one copy (docs/testing.md, "The simulator"): the first ten to a write's, the others to a read's. */
export type Fault =
  /** Held in the network: it reaches DynamoDB later (see Step.landsAfter), and its answer never comes. */
  | 'held'
  /** Applied, and its answer lost. */
  | 'lost'
  /** ProvisionedThroughputExceededException: not applied. */
  | 'throttle'
  /** A transaction cancelled with ThrottlingError at one action (Step.at; a single write: ThrottlingException). */
  | 'throttling error'
  /** A transaction cancelled with TransactionConflict at one action (Step.at; a single write: TransactionConflictException). */
  | 'conflict'
  /**
   * Held in the network, and reaching DynamoDB as the next copy of a write is sent: still being
   * applied when that copy arrives, which DynamoDB answers as it finds it (a copy with the same
   * ClientRequestToken, TransactionInProgressException; a transaction on one of its items,
   * TransactionConflict). Its own answer never comes.
   */
  | 'in progress'
  | '500 before'
  | '500 after'
  /**
   * The connection reset once the copy was sent (ECONNRESET), before it reached DynamoDB: not
   * applied, and the client hears it at once, no timeout.
   */
  | 'reset before'
  /** Applied, and the connection reset as its answer came back, mid-answer (ECONNRESET, EPIPE): the client has half a body. */
  | 'reset after'
  /** A read with no answer: it changes nothing, so whether it reached DynamoDB does not matter. */
  | 'read timeout'
  /** A read's ProvisionedThroughputExceededException. */
  | 'read throttle'
  /** A read's ThrottlingException (past the account's or the table's request rate). */
  | 'read throttling error'
  | 'read 500'
  /** A Query's page ending after its first item, with its LastEvaluatedKey, as DynamoDB's 1 MB stop ends one. */
  | 'page cut';

export const WRITE_FAULTS: readonly Fault[] = [
  'held',
  'lost',
  'throttle',
  'throttling error',
  'conflict',
  'in progress',
  '500 before',
  '500 after',
  'reset before',
  'reset after',
];
export const READ_FAULTS: readonly Fault[] = [
  'read timeout',
  'read throttle',
  'read throttling error',
  'read 500',
  'page cut',
];

/**
 * One fault of a script. A held copy lands just before the copy of a write `landsAfter` copies
 * of writes later is sent, or at the end. A conflict or a throttling error on a transaction is at
 * its first action in role `at` (at its first action without `at`, or when none has that role).
 */
export interface Step {
  readonly fault: Fault;
  readonly landsAfter?: number;
  readonly at?: ActionRole;
}

/** The places a held copy may land: just before each of the next few copies, or after every other. */
export const LANDINGS = [0, 1, 2, 3, 4, Infinity];

/** Every fault a copy can meet: a held copy once for each place it can land, a conflict and a throttling error at each role too. */
export const ALPHABET: readonly Step[] = [...WRITE_FAULTS, ...READ_FAULTS].flatMap((fault): Step[] => {
  if (fault === 'held') return LANDINGS.map((landsAfter) => ({ fault, landsAfter }));
  if (fault === 'conflict' || fault === 'throttling error')
    return [{ fault }, ...ACTION_ROLES.map((at) => ({ fault, at }))];
  return [{ fault }];
});

/** Where a held copy lands (see Step.landsAfter; `in progress` as the next copy of a write is sent); undefined for a copy not held. */
export function landingOf({ fault, landsAfter }: Step): number | undefined {
  if (fault === 'in progress') return 0;
  return fault === 'held' ? (landsAfter ?? Infinity) : undefined;
}

/**
 * What a step can land on: a copy of a write, of a read (GetItem or Query), or of a Query. A
 * script's steps are met in order, each by the first copy it can land on sent after the step
 * before it was met; the copies between pass untouched. So a script of a write's faults alone
 * meets the copies of writes as it did before reads could fail, and a copy of a write is
 * numbered among the copies of writes alone (held copies land by those numbers).
 */
export type Channel = 'write' | 'read' | 'query';

export function channelOf(fault: Fault): Channel {
  if (fault === 'page cut') return 'query';
  return READ_FAULTS.includes(fault) ? 'read' : 'write';
}

/** Whether a fault on `channel` can land on a copy of `operation`. */
export function lands(channel: Channel, operation: string): boolean {
  if (channel === 'write') return WRITES.includes(operation);
  if (channel === 'query') return operation === 'Query';
  return operation === 'GetItem' || operation === 'Query';
}

/** What the copies meet: a script, fault by fault, or a fault drawn for each at a rate. */
export type Faults = readonly Step[] | { readonly rate: number; readonly random: () => number };

/** The faults a copy of `operation` can meet, for a draw at a rate. */
function lettersFor(operation: string): readonly Step[] {
  return ALPHABET.filter(({ fault }) => lands(channelOf(fault), operation));
}

const LEG_MS = 1;
const SERVICE_MS = 2;

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

/** The kind of role each action of a TransactWriteItems body plays, in the order they went in. */
function actionRoles(body: string): RoleKind[] {
  const { TransactItems } = JSON.parse(body) as { TransactItems: WireAction[] };
  return TransactItems.map((action) => {
    const [inner] = Object.values(action);
    const key = inner?.Key ?? inner?.Item;
    return roleKindOf(key?.pk?.S ?? '', key?.id?.N ?? '');
  });
}

/**
 * A copy as RunResult.copies keeps it, for the explorer to tell what a fault would meet: its
 * operation, and a transaction's kinds of role after it, each once (`TransactWriteItems
 * counter,record,claim`).
 */
export function copyText(operation: string, body: string): string {
  return operation === 'TransactWriteItems' ? `${operation} ${[...new Set(actionRoles(body))].join(',')}` : operation;
}

/** A copy's operation and kinds of role, from its `copyText`. */
export function copyOf(text: string): { readonly operation: string; readonly roles: readonly string[] } {
  const [operation = '', roles = ''] = text.split(' ');
  return { operation, roles: roles === '' ? [] : roles.split(',') };
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

  /** The connection reset in `ms`: before any answer, or `midAnswer`, with the head and part of this answer's body read. */
  resetIn(ms: number, midAnswer?: Answer): void {
    if (this.signal.aborted) return;
    this.#timers.push(
      this.runtime.after(ms, () => {
        this.note(
          midAnswer ? `connection reset mid-answer (${midAnswer.status} ${errorName(midAnswer)})` : 'connection reset',
        );
        this.#settle();
        this.reject(new ConnectionReset(midAnswer && { status: midAnswer.status, text: midAnswer.body }));
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

/** A copy held in the network, and where it lands. */
interface Held {
  readonly landsAt: number;
  readonly operation: string;
  readonly body: string;
  readonly copy: number;
  /** Landing before the end of the run, it is in progress as the copy it lands before arrives (`in progress`). */
  readonly inProgress: boolean;
}

export class Network {
  /** Copies of writes sent since the faults were turned on: held copies land by these numbers. */
  #writes = 0;
  /** The script's next step to meet: its steps are met in order (see Channel). */
  #met = 0;
  /** Undefined until the scenario has set up: no faults, and no copy counted. */
  #faults: Faults | undefined;
  readonly #held: Held[] = [];
  readonly trace: TraceLine[] = [];
  /** Every copy sent while faults were on, reads too, in order (`copyText`): the explorer's view of what a fault meets. */
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

  /** From now on, the copies meet `faults`: a script's from its first step. */
  startFaults(faults: Faults): void {
    this.#faults = faults;
    this.#met = 0;
  }

  /** How many copies of writes were sent while faults were on. */
  get writesSent(): number {
    return this.#writes;
  }

  readonly transport: Transport = (operation, body, signal) => {
    const on = this.#faults !== undefined;
    const write = WRITES.includes(operation);
    const copy = on && write ? ++this.#writes : 0;
    if (copy > 0) this.#landHeld(copy);
    if (on) this.copies.push(copyText(operation, body));
    const step = this.#stepFor(operation);
    if (step !== undefined) this.#count(operation, body);
    const kind = copy > 0 ? `copy ${copy}` : write ? 'set-up' : 'read';
    const label = `${kind} ${operation}${summary(body)}`;
    const met = step === undefined ? '' : ` (${step.fault}${step.at === undefined ? '' : ` at ${step.at}`})`;
    this.#log(`${label}: sent${met}`);
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
    for (const kind of new Set(actionRoles(body))) this.faulted.byRole[kind]++;
  }

  /** What becomes of one copy under its step of the script: it reaches DynamoDB or not, and its answer comes back or not. */
  #deliver({ operation, body, copy, step, reply }: Delivery): void {
    const arrive = (then: (answered: Answer) => void, options?: BeginOptions) => {
      this.#arrive(operation, body, then, options);
    };
    function answer(answered: Answer): void {
      reply.answerIn(LEG_MS, answered);
    }
    if (step === undefined) {
      arrive(answer);
      return;
    }
    switch (step.fault) {
      case 'held':
      case 'in progress':
        this.#held.push({
          landsAt: copy + 1 + (landingOf(step) ?? Infinity),
          operation,
          body,
          copy,
          inProgress: step.fault === 'in progress',
        });
        reply.timeoutIn(REQUEST_TIMEOUT_MS);
        return;
      case 'read timeout':
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
      case 'reset before':
        reply.resetIn(LEG_MS);
        return;
      case 'reset after':
        arrive((answered) => {
          reply.note(`applied as ${answered.status}`);
          reply.resetIn(LEG_MS, answered);
        });
        return;
      case 'page cut':
        arrive(answer, { pageItems: 1 });
        return;
      default:
        reply.answerIn(2 * LEG_MS, refusal(step, operation, body));
    }
  }

  /** A copy reaches DynamoDB after a leg, and takes effect after its service time (it is in progress meanwhile). */
  #arrive(operation: string, body: string, then: (answered: Answer) => void, options?: BeginOptions): void {
    this.runtime.after(LEG_MS, () => {
      const begun = this.dynamodb.begin(operation, body, options);
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

  /** The fault a copy of `operation` meets: the script's next step if it can land on it, or one drawn at the rate (or none). */
  #stepFor(operation: string): Step | undefined {
    const faults = this.#faults;
    if (faults === undefined) return undefined;
    if ('rate' in faults) {
      const { rate, random } = faults;
      if (random() >= rate) return undefined;
      const letters = lettersFor(operation);
      return letters[Math.floor(random() * letters.length)];
    }
    const step = faults[this.#met];
    if (step === undefined || !lands(channelOf(step.fault), operation)) return undefined;
    this.#met++;
    return step;
  }

  /** Every held copy lands now, each applied at once (the run is over: nothing is in flight for longer than this). */
  landAll(): void {
    this.#landHeld(Infinity);
  }

  #landHeld(before: number): void {
    for (const held of this.#held.filter(({ landsAt }) => landsAt <= before)) {
      this.#held.splice(this.#held.indexOf(held), 1);
      if (held.inProgress && before !== Infinity) {
        this.#landInProgress(held, before);
        continue;
      }
      const answered = this.dynamodb.handle(held.operation, held.body);
      this.#log(`copy ${held.copy} lands late: ${answered.status} ${errorName(answered)}`);
      this.afterStep(`copy ${held.copy} landed late`);
    }
  }

  /** A held copy reaches DynamoDB as copy `before` is sent, and is applied for its service time: that copy arrives meanwhile. */
  #landInProgress(held: Held, before: number): void {
    const begun = this.dynamodb.begin(held.operation, held.body);
    const label = `copy ${held.copy} lands late, as copy ${before} is sent`;
    if ('answer' in begun) {
      this.#log(`${label}: ${begun.answer.status} ${errorName(begun.answer)}`);
      return;
    }
    this.#log(`${label}: in progress`);
    this.runtime.after(SERVICE_MS, () => {
      const answered = begun.inProgress.finish();
      this.#log(`copy ${held.copy} applied late: ${answered.status} ${errorName(answered)}`);
      this.afterStep(`copy ${held.copy} landed late`);
    });
  }

  #log(line: string): void {
    this.trace.push(`${String(this.now()).padStart(6)} ms  ${line}`);
  }
}

/** The answer a fault gives instead of DynamoDB's, for this operation. */
function refusal({ fault, at }: Step, operation: string, body: string): Answer {
  const transaction = operation === 'TransactWriteItems';
  // The first action in role `at`, or the first action.
  const roles = transaction ? actionRoles(body) : [];
  const action = Math.max(0, at === undefined ? 0 : roles.indexOf(at));
  switch (fault) {
    case 'throttle':
    case 'read throttle':
      return provisionedThroughputExceeded();
    case 'throttling error':
      return transaction ? transactionThrottled(roles.length, action) : throttlingException();
    case 'read throttling error':
      return throttlingException();
    case 'conflict':
      return transaction ? transactionConflicted(roles.length, action) : transactionConflict();
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
