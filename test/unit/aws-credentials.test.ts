import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { sharedRefresh } from '../../lib/aws/credentials';
import { credentialsFrom, type Credentials } from '../../lib/aws/credentials';

/**
 * Credentials that expire (lib/aws/credentials.ts): fetched again a minute before they do, once
 * for every caller that needs them then; and credentialsFrom, off Lambda, through the AWS SDK's
 * own chain, on a profile whose credential_process counts its runs.
 */

const HOUR_MS = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);

/** A provider that counts its calls, each fetch pending until the test calls `answer`. */
function pendingProvider(expiresInMs: number, clock: { now: number }) {
  let calls = 0;
  let release: () => void = () => undefined;
  let answered = new Promise<void>((resolve) => (release = resolve));
  function provider(): Promise<Credentials> {
    const call = ++calls;
    return answered.then(() => ({
      accessKeyId: `AKID${call}`,
      secretAccessKey: 's',
      expiration: new Date(clock.now + expiresInMs),
    }));
  }
  return {
    provider,
    calls: () => calls,
    answer: () => {
      release();
      answered = new Promise<void>((resolve) => (release = resolve));
    },
  };
}

describe('credentials that expire', () => {
  it('are fetched once for every caller that needs them at the same moment, each caller getting the same', async () => {
    const clock = { now: T0 };
    const { provider, calls, answer } = pendingProvider(HOUR_MS, clock);
    const credentials = sharedRefresh(provider, () => clock.now);
    const first = Array.from({ length: 20 }, () => credentials());
    answer();
    const got = await Promise.all(first);
    expect(calls()).toBe(1);
    expect(new Set(got).size).toBe(1);
  });

  it('are kept until a minute before they expire, then fetched once for all the callers in flight', async () => {
    const clock = { now: T0 };
    const { provider, calls, answer } = pendingProvider(HOUR_MS, clock);
    const credentials = sharedRefresh(provider, () => clock.now);
    const first = credentials();
    answer();
    await first;
    clock.now = T0 + HOUR_MS - 61_000;
    await credentials();
    expect(calls()).toBe(1);

    clock.now = T0 + HOUR_MS - 59_000;
    const burst = Array.from({ length: 50 }, () => credentials());
    answer();
    const renewed = await Promise.all(burst);
    expect(calls()).toBe(2);
    expect(renewed.map(({ accessKeyId }) => accessKeyId)).toEqual(Array(50).fill('AKID2'));
  });

  it('without an expiration are kept for good', async () => {
    let calls = 0;
    const credentials = sharedRefresh((): Promise<Credentials> => {
      calls++;
      return Promise.resolve({ accessKeyId: 'AKID', secretAccessKey: 's' });
    });
    await credentials();
    await credentials();
    expect(calls).toBe(1);
  });

  it('that failed to come are fetched again by the next caller, every caller of the failed fetch told why', async () => {
    let calls = 0;
    const credentials = sharedRefresh((): Promise<Credentials> => {
      calls++;
      return calls === 1
        ? Promise.reject(new Error('the SSO session expired'))
        : Promise.resolve({ accessKeyId: 'AKID', secretAccessKey: 's' });
    });
    const failed = await Promise.allSettled([credentials(), credentials()]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect((await credentials()).accessKeyId).toBe('AKID');
    expect(calls).toBe(2);
  });
});

describe('credentialsFrom, off Lambda', () => {
  const savedEnv = { ...process.env };
  let dir: string | undefined;
  afterEach(() => {
    process.env = { ...savedEnv };
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /**
   * A profile whose credentials come from a credential_process that counts its runs and gives
   * credentials 30 s from their expiration: within the minute before it, so each call past the
   * first finds them due for renewal.
   */
  function expiringProfile(): { runs: () => number } {
    dir = mkdtempSync(join(tmpdir(), 'todo-credentials-'));
    const runs = join(dir, 'runs');
    writeFileSync(runs, '');
    const script = join(dir, 'credentials.js');
    writeFileSync(
      script,
      `require('node:fs').appendFileSync(${JSON.stringify(runs)}, 'x');\n` +
        `console.log(JSON.stringify({ Version: 1, AccessKeyId: 'AKIDPROCESS', SecretAccessKey: 's', SessionToken: 't', ` +
        `Expiration: new Date(Date.now() + 30000).toISOString() }));\n`,
    );
    writeFileSync(join(dir, 'config'), `[profile expiring]\ncredential_process = "${process.execPath}" "${script}"\n`);
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'])
      Reflect.deleteProperty(process.env, name);
    Object.assign(process.env, {
      AWS_PROFILE: 'expiring',
      AWS_CONFIG_FILE: join(dir, 'config'),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
    });
    return { runs: () => readFileSync(runs, 'utf8').length };
  }

  it('fetches credentials due for renewal once for all the requests in flight, not once each', async () => {
    const { runs } = expiringProfile();
    const credentials = credentialsFrom(process.env);
    expect((await credentials()).accessKeyId).toBe('AKIDPROCESS');
    expect(runs()).toBe(1);
    const inFlight = await Promise.all(Array.from({ length: 20 }, () => credentials()));
    expect(inFlight.map(({ accessKeyId }) => accessKeyId)).toEqual(Array(20).fill('AKIDPROCESS'));
    expect(runs()).toBe(2);
  });
});
