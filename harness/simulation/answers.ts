import {
  CONFLICT_REASON,
  FINE,
  THROTTLED_REASON,
  internalServerError,
  throughputExceeded,
  transactionCanceled,
  transactionConflictException,
  transactionInProgress,
  type Answer as ProfileAnswer,
  type CancellationReason as ProfileReason,
} from '../aws-dynamodb/answers';
import type { AttributeMap } from './attribute-values';

/**
 * The simulated DynamoDB's answers, on the wire: an HTTP status and the JSON text of the body,
 * as DynamoDB's JSON protocol has them (`__type` names the error; the client, lib/dynamodb/
 * client.ts, reads the code after `#`, the `message` or `Message`, and a cancellation's
 * `CancellationReasons`). The answers the AWS profile also gives (harness/aws-dynamodb/answers.ts)
 * are those, in text; the fault answers here are what the simulator sends instead of one, when it
 * decides a request is throttled or meets a 500.
 */

export interface Answer {
  readonly status: number;
  /** The body's JSON text. */
  readonly body: string;
}

const PREFIX = 'com.amazonaws.dynamodb.v20120810#';

function wire({ status, body }: ProfileAnswer): Answer {
  return { status, body: JSON.stringify(body) };
}

export function ok(output: object = {}): Answer {
  return { status: 200, body: JSON.stringify(output) };
}

function refused(type: string, message: string, extra: object = {}): Answer {
  return { status: 400, body: JSON.stringify({ __type: type, message, ...extra }) };
}

export const CONDITION_FAILED_MESSAGE = 'The conditional request failed';

/** A single write whose condition failed, with the item it found when asked (ALL_OLD). */
export function conditionalCheckFailed(item?: AttributeMap): Answer {
  return refused(`${PREFIX}ConditionalCheckFailedException`, CONDITION_FAILED_MESSAGE, item && { Item: item });
}

/** A request DynamoDB refuses whole, as invalid. */
export function validationException(message: string): Answer {
  return refused('com.amazon.coral.validate#ValidationException', message);
}

/** A TransactWriteItems whose ClientRequestToken served another request within the last 10 minutes. */
export function idempotentParameterMismatch(): Answer {
  return refused(
    `${PREFIX}IdempotentParameterMismatchException`,
    'The request uses the same client token as a previous, but non-identical request.',
  );
}

/** Why one action of a transaction was cancelled ("None": it was fine). */
export interface CancellationReason extends ProfileReason {
  readonly Item?: AttributeMap;
}

export const NONE: CancellationReason = FINE;
export const CONFLICT: CancellationReason = CONFLICT_REASON;
export const THROTTLED: CancellationReason = THROTTLED_REASON;

export function conditionFailedReason(item: AttributeMap | undefined): CancellationReason {
  return { Code: 'ConditionalCheckFailed', Message: CONDITION_FAILED_MESSAGE, ...(item && { Item: item }) };
}

export function validationErrorReason(message: string): CancellationReason {
  return { Code: 'ValidationError', Message: message };
}

/** A TransactWriteItems cancelled: one reason an action, in the order the actions went in. */
export function cancelled(reasons: readonly CancellationReason[]): Answer {
  return wire(transactionCanceled(reasons));
}

/** A PutItem, UpdateItem or DeleteItem that met a transaction in progress on its item. */
export function transactionConflict(): Answer {
  return wire(transactionConflictException);
}

/** A TransactWriteItems whose ClientRequestToken is that of a transaction still in progress. */
export function inProgress(): Answer {
  return wire(transactionInProgress);
}

// ---- Faults the simulator decides on ---------------------------------------------------------

/** A request past its partition's throughput (the SDK, and the store's client, retry it). */
export function provisionedThroughputExceeded(): Answer {
  return wire(throughputExceeded);
}

/** A request past the account's or the table's request rate (on-demand tables). */
export function throttlingException(): Answer {
  return refused(
    'com.amazon.coral.availability#ThrottlingException',
    'Rate of requests exceeds the allowed throughput.',
  );
}

/** A transaction throttled at its `at`th action (from 0), of `actions`. */
export function transactionThrottled(actions: number, at: number): Answer {
  return cancelledAt(actions, at, THROTTLED);
}

/** A transaction that met another at its `at`th action (from 0), of `actions`. */
export function transactionConflicted(actions: number, at: number): Answer {
  return cancelledAt(actions, at, CONFLICT);
}

function cancelledAt(actions: number, at: number, reason: CancellationReason): Answer {
  if (at < 0 || at >= actions) throw new RangeError(`no action ${at} in a transaction of ${actions}`);
  return cancelled(Array.from({ length: actions }, (_, index) => (index === at ? reason : NONE)));
}

/** DynamoDB's 500, before or after it applied the request: the simulator decides which. */
export function internalError(): Answer {
  return wire(internalServerError);
}
