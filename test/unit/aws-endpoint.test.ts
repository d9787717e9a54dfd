import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { partition } from '@aws-sdk/core/client';
import { dynamoDbEndpoint, partitionOf } from '../../lib/aws/endpoint';
import { dynamoDb } from '../../lib/dynamodb/client';

/**
 * Where DynamoDB is (lib/aws/endpoint.ts): the host in each partition AWS documents, with FIPS and
 * dual-stack; the shared settings of the AWS SDKs and their order; and all of it against the AWS
 * SDK's own DynamoDB client, which resolves the same settings by its endpoint rules.
 */

/** `dynamoDbEndpoint`'s URL (or its refusal) for `region`, with these settings and no endpoint given. */
function endpointIn(region: string, env: NodeJS.ProcessEnv = {}, given?: string): string {
  try {
    return dynamoDbEndpoint(region, given, env).url.href;
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

const FIPS = { AWS_USE_FIPS_ENDPOINT: 'true' };
const DUAL_STACK = { AWS_USE_DUALSTACK_ENDPOINT: 'true' };
const BOTH = { ...FIPS, ...DUAL_STACK };

describe('DynamoDB’s host in each partition', () => {
  it.each([
    ['aws', 'eu-west-1', 'amazonaws.com', 'api.aws'],
    ['aws-cn', 'cn-north-1', 'amazonaws.com.cn', 'api.amazonwebservices.com.cn'],
    ['aws-iso', 'us-iso-east-1', 'c2s.ic.gov', 'api.aws.ic.gov'],
    ['aws-iso-b', 'us-isob-east-1', 'sc2s.sgov.gov', 'api.aws.scloud'],
    ['aws-iso-e', 'eu-isoe-west-1', 'cloud.adc-e.uk', 'api.cloud-aws.adc-e.uk'],
    ['aws-iso-f', 'us-isof-south-1', 'csp.hci.ic.gov', 'api.aws.hci.ic.gov'],
    ['aws-eusc', 'eusc-de-east-1', 'amazonaws.eu', 'api.amazonwebservices.eu'],
  ])('%s (%s): its domain, FIPS, dual-stack and both', (_, region, domain, dualStack) => {
    expect([
      endpointIn(region),
      endpointIn(region, FIPS),
      endpointIn(region, DUAL_STACK),
      endpointIn(region, BOTH),
    ]).toEqual([
      `https://dynamodb.${region}.${domain}/`,
      `https://dynamodb-fips.${region}.${domain}/`,
      `https://dynamodb.${region}.${dualStack}/`,
      `https://dynamodb-fips.${region}.${dualStack}/`,
    ]);
  });

  it('aws-us-gov (us-gov-west-1): FIPS is its usual host, without dual-stack', () => {
    const region = 'us-gov-west-1';
    expect([
      endpointIn(region),
      endpointIn(region, FIPS),
      endpointIn(region, DUAL_STACK),
      endpointIn(region, BOTH),
    ]).toEqual([
      'https://dynamodb.us-gov-west-1.amazonaws.com/',
      'https://dynamodb.us-gov-west-1.amazonaws.com/',
      'https://dynamodb.us-gov-west-1.api.aws/',
      'https://dynamodb-fips.us-gov-west-1.api.aws/',
    ]);
  });

  it('a region of no partition is in aws, as for the SDK', () => {
    expect([partitionOf('xx-nowhere-1').id, partitionOf('cn-north').id, partitionOf('us-gov-west-1').id]).toEqual([
      'aws',
      'aws',
      'aws-us-gov',
    ]);
  });

  it('region "local" is DynamoDB Local’s default address, signed for us-east-1, as for the SDK', () => {
    const local = dynamoDbEndpoint('local', undefined, {});
    expect({ url: local.url.href, signingRegion: local.signingRegion }).toEqual({
      url: 'http://localhost:8000/',
      signingRegion: 'us-east-1',
    });
  });
});

describe('the AWS SDKs’ shared settings, in their order', () => {
  const ENDPOINTS = {
    AWS_ENDPOINT_URL_DYNAMODB: 'http://dynamodb.internal:8000',
    AWS_ENDPOINT_URL: 'http://everything.internal:4566',
  };

  it('the endpoint given (DYNAMODB_ENDPOINT) first, then AWS_ENDPOINT_URL_DYNAMODB, then AWS_ENDPOINT_URL, then the region’s', () => {
    expect([
      endpointIn('eu-west-1', ENDPOINTS, 'http://127.0.0.1:8000'),
      endpointIn('eu-west-1', ENDPOINTS),
      endpointIn('eu-west-1', { AWS_ENDPOINT_URL: ENDPOINTS.AWS_ENDPOINT_URL }),
      endpointIn('eu-west-1', {}),
    ]).toEqual([
      'http://127.0.0.1:8000/',
      'http://dynamodb.internal:8000/',
      'http://everything.internal:4566/',
      'https://dynamodb.eu-west-1.amazonaws.com/',
    ]);
  });

  it('an empty one is none, and AWS_IGNORE_CONFIGURED_ENDPOINT_URLS sets both URLs aside, not the one given', () => {
    expect([
      endpointIn('eu-west-1', { ...ENDPOINTS, AWS_ENDPOINT_URL_DYNAMODB: '' }, ''),
      endpointIn('eu-west-1', { ...ENDPOINTS, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' }),
      endpointIn('eu-west-1', { ...ENDPOINTS, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' }, 'http://127.0.0.1:8000'),
    ]).toEqual([
      'http://everything.internal:4566/',
      'https://dynamodb.eu-west-1.amazonaws.com/',
      'http://127.0.0.1:8000/',
    ]);
  });

  it('refuses what the SDK refuses: FIPS or dual-stack with an endpoint named, or with region "local"', () => {
    expect([
      endpointIn('eu-west-1', FIPS, 'http://127.0.0.1:8000'),
      endpointIn('eu-west-1', { ...DUAL_STACK, AWS_ENDPOINT_URL: 'http://127.0.0.1:8000' }),
      endpointIn('eu-west-1', {}, 'https://dynamodb.eu-west-1.api.aws'),
      endpointIn('local', FIPS),
      endpointIn('local', DUAL_STACK),
    ]).toEqual([
      'refused: Invalid Configuration: FIPS and custom endpoint are not supported',
      'refused: Invalid Configuration: Dualstack and custom endpoint are not supported',
      'refused: Invalid Configuration: Dualstack and custom endpoint are not supported',
      'refused: Invalid Configuration: FIPS and local endpoint are not supported',
      'refused: Invalid Configuration: Dualstack and local endpoint are not supported',
    ]);
  });

  it('reads a setting as the SDK does: "true" is true, unset or "false" is false', () => {
    expect([
      endpointIn('eu-west-1', { AWS_USE_FIPS_ENDPOINT: 'false', AWS_USE_DUALSTACK_ENDPOINT: 'false' }),
      endpointIn('eu-west-1', { AWS_USE_FIPS_ENDPOINT: 'true', AWS_USE_DUALSTACK_ENDPOINT: 'false' }),
    ]).toEqual(['https://dynamodb.eu-west-1.amazonaws.com/', 'https://dynamodb-fips.eu-west-1.amazonaws.com/']);
  });
});

describe('against the AWS SDK’s own DynamoDB client', () => {
  /** The SDK's endpoint rules for DynamoDB, as its client runs them. */
  const sdkRules = new DynamoDBClient({ region: 'us-east-1' }).config.endpointProvider;

  /**
   * One region of each partition, and one it does not list (yet) that its pattern holds. Not the
   * partitions' `<id>-global` names, which the SDK places in their partitions and lib/aws/endpoint.ts
   * in aws: DynamoDB is regional, and has no table at either host.
   */
  const REGIONS = [
    ...['us-east-1', 'eu-central-2', 'ap-southeast-7', 'mx-central-1', 'il-central-1', 'zz-future-1'],
    ...['cn-northwest-1', 'cn-south-9'],
    ...['us-gov-east-1', 'us-gov-north-9'],
    ...['us-iso-west-1', 'us-iso-north-9'],
    ...['us-isob-east-1', 'us-isob-west-9'],
    ...['eu-isoe-west-1', 'eu-isoe-north-9'],
    ...['us-isof-east-1', 'us-isof-north-9'],
    ...['eusc-de-east-1', 'eusc-de-west-9'],
    ...['cn-north', 'us-gov-a-b-1', 'aws-global', 'local'],
  ];
  const SETTINGS = [
    ['none', {}],
    ['FIPS', FIPS],
    ['dual-stack', DUAL_STACK],
    ['FIPS and dual-stack', BOTH],
  ] as const;

  it.each(SETTINGS)('resolves every partition’s regions as the SDK does, with %s', (_, env) => {
    const { AWS_USE_FIPS_ENDPOINT, AWS_USE_DUALSTACK_ENDPOINT } = env as NodeJS.ProcessEnv;
    for (const region of REGIONS) {
      let sdk: string;
      try {
        sdk = sdkRules({
          Region: region,
          UseFIPS: AWS_USE_FIPS_ENDPOINT === 'true',
          UseDualStack: AWS_USE_DUALSTACK_ENDPOINT === 'true',
        }).url.href;
      } catch {
        sdk = 'refused';
      }
      expect({ region, url: endpointIn(region, env).replace(/^refused: .*/, 'refused') }).toEqual({ region, url: sdk });
    }
  });

  it('puts each region in the partition the SDK does', () => {
    for (const region of REGIONS.filter((name) => name !== 'local')) {
      const { name, dnsSuffix, dualStackDnsSuffix } = partition(region);
      const ours = partitionOf(region);
      expect({ region, id: ours.id, dnsSuffix: ours.dnsSuffix, dualStackDnsSuffix: ours.dualStackDnsSuffix }).toEqual({
        region,
        id: name,
        dnsSuffix,
        dualStackDnsSuffix,
      });
    }
  });

  it('refuses an endpoint named with FIPS or dual-stack, and its own dual-stack host named, as the SDK does', () => {
    const cases = [
      { Endpoint: 'http://127.0.0.1:8000', UseFIPS: true, UseDualStack: false },
      { Endpoint: 'http://127.0.0.1:8000', UseFIPS: false, UseDualStack: true },
      { Endpoint: 'https://dynamodb.eu-west-1.api.aws', UseFIPS: false, UseDualStack: false },
      { Endpoint: 'https://dynamodb.us-east-1.api.aws', UseFIPS: false, UseDualStack: false },
      { Endpoint: 'http://127.0.0.1:8000/', UseFIPS: false, UseDualStack: false },
    ];
    for (const { Endpoint, UseFIPS, UseDualStack } of cases) {
      let sdk: string;
      try {
        sdk = sdkRules({ Region: 'eu-west-1', Endpoint, UseFIPS, UseDualStack }).url.href;
      } catch {
        sdk = 'refused';
      }
      const env = { ...(UseFIPS && FIPS), ...(UseDualStack && DUAL_STACK) };
      expect({ Endpoint, url: endpointIn('eu-west-1', env, Endpoint).replace(/^refused: .*/, 'refused') }).toEqual({
        Endpoint,
        url: sdk,
      });
    }
  });
});

describe('the store’s client', () => {
  const savedEnv = { ...process.env };
  let servers: Server[] = [];
  afterEach(async () => {
    process.env = { ...savedEnv };
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    servers = [];
  });

  it('sends its requests to AWS_ENDPOINT_URL_DYNAMODB when no endpoint is given', async () => {
    const hosts: (string | undefined)[] = [];
    const server = createServer((request, response) => {
      hosts.push(request.headers.host);
      response.setHeader('content-type', 'application/x-amz-json-1.0');
      response.end('{}');
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    Object.assign(process.env, { AWS_ENDPOINT_URL_DYNAMODB: `http://${address}`, AWS_ENDPOINT_URL: 'http://unused:1' });
    const client = dynamoDb({ region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' } });
    await client.getItem(
      { TableName: 'todos', Key: { pk: 'A', id: 1 }, ConsistentRead: true },
      new AbortController().signal,
    );
    expect(hosts).toEqual([address]);
  });
});
