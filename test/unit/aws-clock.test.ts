import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import aws4 from 'aws4';
import { SigningClock } from '../../lib/aws/clock';
import { dynamoDb } from '../../lib/dynamodb/client';
import { DynamoDbTodoStore } from '../../lib/dynamodb/store';

/**
 * A clock that is off (lib/aws/clock.ts): AWS refuses a request signed more than 5 minutes from
 * its own time; the client corrects its clock by the refusal's Date header and signs again, once.
 * First the clock alone, on a time the test sets; then the store's client against a stand-in
 * DynamoDB whose time is an hour ahead of this machine's, which checks each signature and its time
 * as DynamoDB does. An hour is far past the 5 minutes either way: no test here depends on timing.
 */

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const HOUR_MS = 3_600_000;
const EXPIRED = 'com.amazon.coral.service#InvalidSignatureException';

describe('the signing clock', () => {
  it('signs at this machine’s time until AWS says otherwise', () => {
    const clock = new SigningClock(() => T0);
    expect(clock.amzDate()).toBe('20260101T120000Z');
  });

  it('takes AWS’s time from a refusal of a request signed more than 5 minutes from it, and signs at that time from then on', () => {
    let now = T0;
    const clock = new SigningClock(() => now);
    const signedAt = clock.amzDate();
    expect(clock.corrected(EXPIRED, new Date(T0 + HOUR_MS).toUTCString(), signedAt)).toBe(true);
    now += 10_000;
    expect(clock.amzDate()).toBe('20260101T130010Z');
  });

  it('is corrected the other way as well: a machine clock ahead of AWS’s signs at AWS’s time after the refusal', () => {
    let now = T0;
    const clock = new SigningClock(() => now);
    expect(clock.corrected(EXPIRED, new Date(T0 - HOUR_MS).toUTCString(), clock.amzDate())).toBe(true);
    now += 10_000;
    expect(clock.amzDate()).toBe('20260101T110010Z');
  });

  it.each([
    ['a refusal of another kind', 'com.amazonaws.dynamodb.v20120810#ValidationException', T0 + HOUR_MS],
    ['a refusal of a request signed near AWS’s time (a wrong secret key)', EXPIRED, T0 + 4 * 60_000],
  ])('is not corrected by %s', (_, type, awsTime) => {
    const clock = new SigningClock(() => T0);
    expect(clock.corrected(type, new Date(awsTime).toUTCString(), clock.amzDate())).toBe(false);
    expect(clock.amzDate()).toBe('20260101T120000Z');
  });

  it('is not corrected by a refusal without a Date', () => {
    const clock = new SigningClock(() => T0);
    expect(clock.corrected(EXPIRED, undefined, clock.amzDate())).toBe(false);
  });

  it('corrects every request signed before the correction, not the first refused alone', () => {
    const clock = new SigningClock(() => T0);
    const signedAt = clock.amzDate();
    const awsTime = new Date(T0 + HOUR_MS).toUTCString();
    expect([clock.corrected(EXPIRED, awsTime, signedAt), clock.corrected(EXPIRED, awsTime, signedAt)]).toEqual([
      true,
      true,
    ]);
  });
});

const CREDENTIALS = { accessKeyId: 'AKIDCLOCK', secretAccessKey: 'secret' };
const REGION = 'eu-west-1';

/** An X-Amz-Date (20240102T030405Z) as milliseconds since 1970. */
function timeOf(amzDate: string): number {
  return Date.parse(amzDate.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'));
}

/** Whether `headers` carry a SigV4 signature of the request, made at the time its X-Amz-Date says. */
function signedAtItsDate(headers: IncomingHttpHeaders, body: string): boolean {
  const signed = aws4.sign(
    {
      host: String(headers.host),
      path: '/',
      method: 'POST',
      service: 'dynamodb',
      region: REGION,
      body,
      headers: {
        'content-type': String(headers['content-type']),
        'x-amz-target': String(headers['x-amz-target']),
        'x-amz-date': String(headers['x-amz-date']),
      },
    },
    CREDENTIALS,
  );
  return (signed.headers as Record<string, string>).Authorization === headers.authorization;
}

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  servers = [];
});

/**
 * DynamoDB as it checks a request's time, an hour ahead of this machine: a request signed more
 * than 5 minutes from `checkedAt` is refused as DynamoDB refuses it (400, InvalidSignatureException,
 * "Signature expired"), the answer dated `answeredAt` (by default the same time). Every request's
 * X-Amz-Date is kept, and a signature that is not of its X-Amz-Date fails the test.
 */
async function dynamoDbAhead({
  checkedAt = () => Date.now() + HOUR_MS,
  answeredAt = checkedAt,
}: { checkedAt?: () => number; answeredAt?: () => number } = {}) {
  const signedAt: number[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const amzDate = String(request.headers['x-amz-date']);
      const valid = signedAtItsDate(request.headers, Buffer.concat(chunks).toString('utf8'));
      signedAt.push(valid ? timeOf(amzDate) : NaN);
      const late = Math.abs(timeOf(amzDate) - checkedAt()) > 5 * 60_000;
      response.setHeader('date', new Date(answeredAt()).toUTCString());
      response.setHeader('content-type', 'application/x-amz-json-1.0');
      if (!late) {
        response.end('{}');
        return;
      }
      response.statusCode = 400;
      response.end(
        JSON.stringify({
          __type: EXPIRED,
          message: `Signature expired: ${amzDate} is now earlier than the time allowed (5 min.)`,
        }),
      );
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { client: dynamoDb({ endpoint, region: REGION, credentials: CREDENTIALS }), signedAt };
}

const getItem = { TableName: 'todos', Key: { pk: 'A', id: 1 }, ConsistentRead: true } as const;
const forever = () => new AbortController().signal;

/** How far from this machine's clock a request was signed, in minutes, rounded. */
const minutesAhead = (signedAt: number) => Math.round((signedAt - Date.now()) / 60_000) || 0;

describe('a request refused for the time it was signed at', () => {
  it('is signed again at AWS’s time, once, and the requests after it are signed at AWS’s time at once', async () => {
    const { client, signedAt } = await dynamoDbAhead();
    await expect(client.getItem(getItem, forever())).resolves.toBeUndefined();
    expect(signedAt.map(minutesAhead)).toEqual([0, 60]);
    await client.getItem(getItem, forever());
    expect(signedAt.map(minutesAhead)).toEqual([0, 60, 60]);
  });

  it('is signed again, each, when many were in flight before the clock was corrected', async () => {
    const { client, signedAt } = await dynamoDbAhead();
    await Promise.all(Array.from({ length: 5 }, () => client.getItem(getItem, forever())));
    expect(signedAt.map(minutesAhead).sort((a, b) => a - b)).toEqual([0, 0, 0, 0, 0, 60, 60, 60, 60, 60]);
  });

  it('fails saying how far off the clock is, when refused again at the time AWS gave', async () => {
    // The answers' Date disagrees with the time the signatures are checked against: a correction cannot help.
    const { client, signedAt } = await dynamoDbAhead({ answeredAt: () => Date.now() + 2 * HOUR_MS });
    const refused = client.getItem(getItem, forever());
    await expect(refused).rejects.toMatchObject({
      name: 'InvalidSignatureException',
      message: expect.stringMatching(/^the clock is off by 7(199|200) s\b.*Signature expired/) as unknown,
    });
    expect(signedAt.map(minutesAhead)).toEqual([0, 120]);
  });

  it('is answered by the store, off AWS, with how far off the clock is, not with advice to set credentials', async () => {
    const { client } = await dynamoDbAhead({ answeredAt: () => Date.now() + 2 * HOUR_MS });
    const store = new DynamoDbTodoStore(client, 'todos');
    await expect(store.get(1)).rejects.toMatchObject({
      name: 'StoreMisconfigured',
      message: expect.stringMatching(/^DynamoDB refused the request: the clock is off by 7(199|200) s\b/) as unknown,
    });
  });

  it('is not signed again when the clock was right: another fault of the signature (a wrong secret key, say)', async () => {
    // Checked an hour ahead, but the answer is dated this machine's time: the clock was not the cause.
    const { client, signedAt } = await dynamoDbAhead({ answeredAt: () => Date.now() });
    await expect(client.getItem(getItem, forever())).rejects.toMatchObject({
      name: 'InvalidSignatureException',
      message: expect.stringMatching(/^Signature expired/) as unknown,
    });
    expect(signedAt.map(minutesAhead)).toEqual([0]);
  });
});
