import { describe, expect, it } from '@jest/globals';
import { MAX_ATTEMPTS } from '../../lib/dynamodb/client';
import { RequestFailure, httpsTransport, type Answer, type Transport } from '../../lib/aws/https';
import { StoreUnavailable } from '../../lib/errors';
import { parseScript } from '../../harness/simulation/explore';
import { ALPHABET } from '../../harness/simulation/network';
import { ATTEMPT_FAULTS, coveredByRetries } from '../../harness/simulation/retries';
import { SCENARIOS } from '../../harness/simulation/scenarios';
import { ConnectionReset, simulatedWire } from '../../harness/simulation/socket';
import { unavailable } from '../../harness/simulation/clients';
import { run, withOptions, type Scenario } from '../../harness/simulation/world';
import { fakeRuntime } from '../support/fake-runtime';

/**
 * Two of the simulator's faults the store's tests did not create before issue 50 (docs/testing.md,
 * "The simulator"): a connection reset once a copy was sent, and faults few enough that the
 * client's retries must answer them (harness/simulation/retries.ts). Each run here is one run of
 * the simulator, a few milliseconds of CPU.
 */

const T0 = Date.UTC(2026, 10, 26);

function fail(name: string): never {
  throw new Error(`no scenario ${name}`);
}

describe('a connection reset after the copy was sent', () => {
  /** lib/aws/https.ts over simulated sockets whose far side resets the connection: before its answer, or mid-answer. */
  async function resetCopy(midAnswer: boolean): Promise<unknown> {
    const { clock, runtime } = fakeRuntime(T0, () => '00000000-0000-4000-a000-000000000000');
    const carry: Transport = () =>
      new Promise<Answer>((_resolve, reject) => {
        runtime.after(1, () => {
          reject(new ConnectionReset(midAnswer ? { status: 200, text: '{"Item":{"id":{"N":"1"}}}' } : undefined));
        });
      });
    const wire = simulatedWire({ runtime, carry, connectMs: 2, awsNow: runtime.now });
    const transport = httpsTransport(
      {
        url: new URL('https://dynamodb.us-east-1.amazonaws.com'),
        region: 'us-east-1',
        name: 'dynamodb',
        target: 'DynamoDB_20120810',
        credentials: () => Promise.resolve({ accessKeyId: 'simulated', secretAccessKey: 'simulated' }),
        maxSockets: 50,
      },
      wire,
    );
    const ended: { failure?: unknown } = {};
    transport('PutItem', '{}', new AbortController().signal).then(
      () => undefined,
      (failure: unknown) => (ended.failure = failure),
    );
    await clock.runAllAsync();
    return ended.failure;
  }

  it.each([
    ['before its answer', false],
    ['mid-answer', true],
  ])('%s: the transport reports a NetworkError that may have gone (the copy may be applied)', async (_when, mid) => {
    const failure = await resetCopy(mid);
    expect(failure).toBeInstanceOf(RequestFailure);
    expect({ name: (failure as RequestFailure).name, mayHaveGone: (failure as RequestFailure).mayHaveGone }).toEqual({
      name: 'NetworkError',
      mayHaveGone: true,
    });
  });

  it('applied, then reset, then a throttled copy: the POST is stored once and answered with that record', async () => {
    // Taken for never sent, the transaction would be rebuilt from the counter its own copy moved: stored twice.
    const result = await run(
      SCENARIOS['POST alone'] ?? fail('POST alone'),
      parseScript('reset after,throttling error'),
      1,
    );
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('applied as 200'))).toBe(true);
    expect(result.trace.some((line) => line.includes('connection reset mid-answer'))).toBe(true);
  });

  it('reset before it reached DynamoDB: nothing applied, and the client sends it again at once, not after a timeout', async () => {
    const result = await run(SCENARIOS['POST alone'] ?? fail('POST alone'), parseScript('reset before'), 1);
    expect(result.violations).toEqual([]);
    const reset = result.trace.findIndex((line) => line.endsWith('connection reset'));
    expect(reset).toBeGreaterThan(0);
    expect(result.trace.slice(reset + 1).find((line) => line.includes('copy 2'))).toMatch(/^\s+\d{1,3} ms {2}copy 2/);
  });
});

describe('liveness: faults within the client’s retries', () => {
  it(`covers a script with fewer than MAX_ATTEMPTS (${MAX_ATTEMPTS}) 500s and copies unanswered, and any throttles and conflicts besides`, () => {
    const attempts = (count: number) => Array.from({ length: count }, () => '500 before').join(',');
    expect(coveredByRetries(parseScript(attempts(MAX_ATTEMPTS - 1)))).toBe(true);
    expect(coveredByRetries(parseScript(attempts(MAX_ATTEMPTS)))).toBe(false);
    expect(
      coveredByRetries(parseScript(`throttle,throttle,conflict,throttling error,${attempts(MAX_ATTEMPTS - 1)}`)),
    ).toBe(true);
    expect(coveredByRetries({ rate: 0.1, random: Math.random })).toBe(false);
    // Every fault is either counted against the attempts or retried to the deadline: none is forgotten.
    const retriedToTheDeadline = ['throttle', 'throttling error', 'conflict', 'read throttle', 'read throttling error'];
    const cutPageIsNoFailure = ['page cut'];
    expect(
      ALPHABET.map(({ fault }) => fault).filter(
        (fault) =>
          !ATTEMPT_FAULTS.includes(fault) &&
          !retriedToTheDeadline.includes(fault) &&
          !cutPageIsNoFailure.includes(fault),
      ),
    ).toEqual([]);
  });

  it('holds a scenario that answers within the client’s retries to a 2xx: its 503 under a covered script is a violation, under one past them not', async () => {
    const answersOnce: Scenario = withOptions({ answersWithinRetries: true }, async (world) => {
      world.startFaults();
      const answered = await world.answer(Promise.reject(new StoreUnavailable('given up')));
      return () => ('failed' in answered && !unavailable(world, answered) ? [`answered ${answered.failed}`] : []);
    });
    const within = await run(answersOnce, parseScript('throttle,throttle,500 before'), 1);
    expect(within.violations).toEqual(['answered StoreUnavailable']);
    const past = await run(answersOnce, parseScript('500 before,500 before,500 before'), 1);
    expect(past.violations).toEqual([]);
  });
});
