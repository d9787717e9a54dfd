import { describe, expect, it } from '@jest/globals';
import { RequestFailure, type Transport } from '../../lib/aws/https';
import { dynamoDb } from '../../lib/dynamodb/client';
import { Copies, type Fate } from '../../lib/dynamodb/outcome';

/**
 * The outcome contract (lib/dynamodb/outcome.ts, docs/design.md "What became of a write"): every
 * answer real DynamoDB gives a TransactWriteItems, and every failure on the way, classified for the
 * copy it answers and for the transaction over all its copies, through the store's own client.
 */

const PREFIX = 'com.amazonaws.dynamodb.v20120810#';
type Step = { status: number; body: Record<string, unknown> } | RequestFailure;

function refusal(status: number, type: string, extra: Record<string, unknown> = {}): Step {
  return { status, body: { __type: `${PREFIX}${type}`, message: type, ...extra } };
}
const cancelled = (...codes: string[]) =>
  refusal(400, 'TransactionCanceledException', { CancellationReasons: codes.map((Code) => ({ Code })) });
const OK: Step = { status: 200, body: {} };

/** A client whose copies are answered by `steps`, in turn, the last one again and again. */
function clientAnswering(steps: Step[]) {
  let sent = 0;
  const transport: Transport = (_operation, _body, signal) => {
    const step = steps[Math.min(sent++, steps.length - 1)] ?? OK;
    signal.throwIfAborted();
    return step instanceof RequestFailure ? Promise.reject(step) : Promise.resolve(step);
  };
  return dynamoDb({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, transport });
}

/** Sends one transaction whose copies meet `steps`; its fate over them, and what it failed with. */
async function fateOf(steps: Step[]): Promise<{ fate: Fate; failed?: string }> {
  const copies = new Copies();
  const deadline = new AbortController();
  // Throttles are sent again until the deadline: a short one (the client's pauses are at most a second).
  const timer = setTimeout(() => {
    deadline.abort(new Error('deadline'));
  }, 1_500);
  try {
    await clientAnswering(steps).transactWriteItems([], 'token', deadline.signal, copies);
    return { fate: copies.fate };
  } catch (error) {
    return { fate: copies.fate, failed: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

const timeout = new RequestFailure('TimeoutError', 'no answer', true);
const notConnected = new RequestFailure('TimeoutError', 'no connection', false);
const reset = new RequestFailure('NetworkError', 'socket hang up', true);

describe('what became of a transaction, over every copy sent', () => {
  it('is applied once a copy is answered with success, whatever came before', async () => {
    expect(await fateOf([OK])).toEqual({ fate: 'applied' });
    expect(await fateOf([timeout, refusal(500, 'InternalServerError'), OK])).toEqual({ fate: 'applied' });
  });

  it.each(['ConditionalCheckFailed', 'TransactionConflict', 'ThrottlingError', 'ValidationError', 'None'])(
    'is not applied when its only copy is cancelled, a reason %s',
    async (code) => {
      expect((await fateOf([cancelled(code)])).fate).toBe('not applied');
    },
  );

  it.each([
    'TransactionConflictException',
    'ProvisionedThroughputExceededException',
    'ThrottlingException',
    'RequestLimitExceeded',
  ])('is not applied when every copy was refused with %s (sent again until the deadline)', async (name) => {
    expect(await fateOf([refusal(400, name)])).toEqual({ fate: 'not applied', failed: 'deadline' });
  });

  it('is not applied when refused with IdempotentParameterMismatchException, or when nothing was sent', async () => {
    expect((await fateOf([refusal(400, 'IdempotentParameterMismatchException')])).fate).toBe('not applied');
    expect((await fateOf([notConnected])).fate).toBe('not applied');
  });

  it('is unknown after a 500, which DynamoDB may have applied, or a copy gone with no answer, or one in progress', async () => {
    expect((await fateOf([refusal(500, 'InternalServerError')])).fate).toBe('unknown');
    expect((await fateOf([timeout])).fate).toBe('unknown');
    expect((await fateOf([reset])).fate).toBe('unknown');
    expect((await fateOf([refusal(400, 'TransactionInProgressException')])).fate).toBe('unknown');
  });

  it('stays unknown whatever later copies are refused with, while a copy went with no answer', async () => {
    const refusals = [cancelled('ConditionalCheckFailed'), refusal(400, 'ProvisionedThroughputExceededException')];
    for (const later of refusals) expect((await fateOf([timeout, later])).fate).toBe('unknown');
  });

  it('is not applied after a 500 once a later copy is cancelled for a condition: DynamoDB read the token, and had applied none', async () => {
    expect((await fateOf([refusal(500, 'InternalServerError'), cancelled('ConditionalCheckFailed')])).fate).toBe(
      'not applied',
    );
    // A conflict or a throttle may be found before the token is read: it shows nothing.
    expect((await fateOf([refusal(500, 'InternalServerError'), cancelled('TransactionConflict')])).fate).toBe(
      'unknown',
    );
  });

  it('is kept across the requests that send the transaction again: a new request does not start it over', async () => {
    const copies = new Copies();
    const forever = new AbortController().signal;
    const client = clientAnswering([timeout, timeout, timeout, cancelled('TransactionConflict')]);
    await expect(client.transactWriteItems([], 'token', forever, copies)).rejects.toMatchObject({ fate: 'unknown' });
    await expect(client.transactWriteItems([], 'token', forever, copies)).rejects.toMatchObject({
      name: 'TransactionCanceledException',
      copy: 'not applied',
      fate: 'unknown',
    });
    expect(copies.fate).toBe('unknown');
  });
});
