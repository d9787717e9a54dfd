/**
 * Where an AWS service's API is, found as the AWS SDKs find it: the endpoint the caller names, or
 * the one the SDKs' shared settings name (AWS_ENDPOINT_URL_<SERVICE>, then AWS_ENDPOINT_URL,
 * unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS), or else the service's host in the region's
 * partition, FIPS and dual-stack as AWS_USE_FIPS_ENDPOINT and AWS_USE_DUALSTACK_ENDPOINT ask.
 * Settings in ~/.aws/config (endpoint_url, use_fips_endpoint…) are not read: Lambda has none.
 */

/** A partition of AWS: its id, and the domains its services' hosts are under. */
export interface Partition {
  readonly id: string;
  readonly dnsSuffix: string;
  readonly dualStackDnsSuffix: string;
}

const AWS: Partition = { id: 'aws', dnsSuffix: 'amazonaws.com', dualStackDnsSuffix: 'api.aws' };

/**
 * The other partitions AWS documents, as the SDK's partitions.json has them (@aws-sdk/core), cut
 * to what a host needs, by what their regions' names start with: each one's regionRegex is
 * `^<start>-\w+-\d+$` (cn-north-1). Every one supports FIPS and dual-stack.
 * test/unit/aws-endpoint.test.ts holds this table to the SDK's own.
 */
const PARTITIONS = new Map<string, Partition>([
  ['cn', { id: 'aws-cn', dnsSuffix: 'amazonaws.com.cn', dualStackDnsSuffix: 'api.amazonwebservices.com.cn' }],
  ['us-gov', { id: 'aws-us-gov', dnsSuffix: 'amazonaws.com', dualStackDnsSuffix: 'api.aws' }],
  ['us-iso', { id: 'aws-iso', dnsSuffix: 'c2s.ic.gov', dualStackDnsSuffix: 'api.aws.ic.gov' }],
  ['us-isob', { id: 'aws-iso-b', dnsSuffix: 'sc2s.sgov.gov', dualStackDnsSuffix: 'api.aws.scloud' }],
  ['eu-isoe', { id: 'aws-iso-e', dnsSuffix: 'cloud.adc-e.uk', dualStackDnsSuffix: 'api.cloud-aws.adc-e.uk' }],
  ['us-isof', { id: 'aws-iso-f', dnsSuffix: 'csp.hci.ic.gov', dualStackDnsSuffix: 'api.aws.hci.ic.gov' }],
  ['eusc-de', { id: 'aws-eusc', dnsSuffix: 'amazonaws.eu', dualStackDnsSuffix: 'api.amazonwebservices.eu' }],
]);

/**
 * The partition of `region`; a region of none is in `aws`, as for the SDK (which needs no pattern of
 * its own then). Not the partitions' `<id>-global` names: DynamoDB is regional.
 */
export function partitionOf(region: string): Partition {
  return PARTITIONS.get(/^(.+)-\w+-\d+$/.exec(region)?.[1] ?? '') ?? AWS;
}

/** The SDKs' shared endpoint settings for the service `id` (`DYNAMODB`: its name in AWS_ENDPOINT_URL_<id>). */
export interface EndpointSettings {
  readonly url: string | undefined;
  readonly fips: boolean;
  readonly dualStack: boolean;
}

/** The first of `values` that is set: an empty value is none, for the SDKs too. */
function firstSet(...values: (string | undefined)[]): string | undefined {
  return values.find((value) => value !== undefined && value !== '');
}

export function endpointSettings(env: NodeJS.ProcessEnv, id: string): EndpointSettings {
  return {
    url:
      env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === 'true'
        ? undefined
        : firstSet(env[`AWS_ENDPOINT_URL_${id}`], env.AWS_ENDPOINT_URL),
    fips: env.AWS_USE_FIPS_ENDPOINT === 'true',
    dualStack: env.AWS_USE_DUALSTACK_ENDPOINT === 'true',
  };
}

/** Where a request goes, and the region it is signed for. */
export interface ServiceEndpoint {
  readonly url: URL;
  readonly signingRegion: string;
}

/**
 * DynamoDB's endpoint in `region`: `given` (DYNAMODB_ENDPOINT, say) before the shared settings,
 * then the rules of the SDK's DynamoDB client (its endpoint ruleset), and what they refuse: FIPS
 * or dual-stack with an endpoint named, or with region `local`, and the dual-stack host named
 * instead of asked for. Not its account endpoints (`<account>.ddb.…`): they need an account id
 * that the credentials Lambda gives do not carry, and the regional endpoint serves every account.
 */
export function dynamoDbEndpoint(region: string, given: string | undefined, env: NodeJS.ProcessEnv): ServiceEndpoint {
  const { url, fips, dualStack } = endpointSettings(env, 'DYNAMODB');
  const { id, dnsSuffix, dualStackDnsSuffix } = partitionOf(region);
  const custom = firstSet(given, url);
  if (custom !== undefined || region === 'local') {
    // Its dual-stack host named is refused too: that one is asked for (AWS_USE_DUALSTACK_ENDPOINT).
    const dual =
      dualStack || (custom !== undefined && new URL(custom).host === `dynamodb.${region}.${dualStackDnsSuffix}`);
    const where = custom === undefined ? 'local' : 'custom';
    if (fips || dual)
      throw new Error(`Invalid Configuration: ${fips ? 'FIPS' : 'Dualstack'} and ${where} endpoint are not supported`);
    if (custom === undefined) return { url: new URL('http://localhost:8000'), signingRegion: 'us-east-1' };
    return { url: new URL(custom), signingRegion: region };
  }
  // GovCloud's DynamoDB is FIPS validated under its usual name.
  const name = fips && (dualStack || id !== 'aws-us-gov') ? 'dynamodb-fips' : 'dynamodb';
  return {
    url: new URL(`https://${name}.${region}.${dualStack ? dualStackDnsSuffix : dnsSuffix}`),
    signingRegion: region,
  };
}
