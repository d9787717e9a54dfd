import { describe, expect, it } from '@jest/globals';
import { RequestFailure, httpsTransport, type Answer, type Transport } from '../../lib/aws/https';
import { parseScript } from '../../harness/simulation/explore';
import { SCENARIOS } from '../../harness/simulation/scenarios';
import { ConnectionReset, simulatedWire } from '../../harness/simulation/socket';
import { run } from '../../harness/simulation/world';
import { fakeRuntime } from '../support/fake-runtime';

/**
 * A fault the store's tests did not create before issue 50 (docs/testing.md, "The simulator"): a
 * connection reset once a copy was sent. Each run here is one run of
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
