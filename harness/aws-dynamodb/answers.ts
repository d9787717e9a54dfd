/**
 * The error answers real DynamoDB gives where DynamoDB Local gives none, in the JSON protocol the
 * SDK reads (`__type` names the error; a cancellation lists a reason for each action, in order).
 */

export interface Answer {
  readonly status: number;
  readonly body: unknown;
}

const PREFIX = 'com.amazonaws.dynamodb.v20120810#';

export interface CancellationReason {
  readonly Code: string;
  readonly Message?: string;
}

/** A TransactWriteItems cancelled, with one reason an action ("None" for an action that was fine). */
export function transactionCanceled(reasons: readonly CancellationReason[]): Answer {
  return {
    status: 400,
    body: {
      __type: `${PREFIX}TransactionCanceledException`,
      Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map(({ Code }) => Code).join(', ')}]`,
      CancellationReasons: reasons,
    },
  };
}

export const CONFLICT_REASON: CancellationReason = {
  Code: 'TransactionConflict',
  Message: 'Transaction is ongoing for the item',
};
export const THROTTLED_REASON: CancellationReason = {
  Code: 'ThrottlingError',
  Message: 'Throughput exceeds the current capacity of your table or index.',
};
export const FINE: CancellationReason = { Code: 'None' };

/** A PutItem, UpdateItem or DeleteItem that met a transaction in progress on its item. */
export const transactionConflictException: Answer = {
  status: 400,
  body: { __type: `${PREFIX}TransactionConflictException`, message: 'Transaction is ongoing for the item' },
};

/** A TransactWriteItems whose ClientRequestToken belongs to a transaction still in progress. */
export const transactionInProgress: Answer = {
  status: 400,
  body: {
    __type: `${PREFIX}TransactionInProgressException`,
    Message: 'Transaction from previous request is still in progress',
  },
};

/** A request past its partition's throughput. */
export const throughputExceeded: Answer = {
  status: 400,
  body: {
    __type: `${PREFIX}ProvisionedThroughputExceededException`,
    message:
      'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
  },
};

export const internalServerError: Answer = {
  status: 500,
  body: { __type: `${PREFIX}InternalServerError`, message: 'Internal server error' },
};
