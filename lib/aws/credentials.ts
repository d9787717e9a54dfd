/**
 * Where a client's credentials come from: Lambda's environment, or off Lambda the AWS SDK's own
 * chain of providers. Credentials that expire are fetched again a minute before they do: once,
 * however many requests need them at that moment. Fetched by each, a burst of requests at the
 * expiry would start as many fetches (an SSO or STS call, a process run each) as there are
 * requests in flight.
 */

export interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
  /** When they stop working; they are fetched again a minute before. */
  readonly expiration?: Date | undefined;
}

/** How long before their expiration credentials are fetched again. */
const REFRESH_BEFORE_MS = 60_000;

/**
 * `fetch`'s credentials, kept while they have more than a minute left (those without an
 * expiration, for good); one fetch at a time, its result shared by every caller meanwhile. A
 * fetch that fails is not kept: the next call starts another.
 */
export function sharedRefresh<C extends { readonly expiration?: Date | undefined }>(
  fetch: () => Promise<C>,
  now: () => number = Date.now,
): () => Promise<C> {
  let held: C | undefined;
  let fetching: Promise<C> | undefined;
  return () => {
    if (held && (held.expiration === undefined || held.expiration.getTime() - now() > REFRESH_BEFORE_MS))
      return Promise.resolve(held);
    // Started at once, a fetch that throws rejects instead.
    fetching ??= new Promise<C>((resolve) => {
      resolve(fetch());
    })
      .then((credentials) => {
        held = credentials;
        return credentials;
      })
      .finally(() => {
        fetching = undefined;
      });
    return fetching;
  };
}

/**
 * Credentials as Lambda gives them (the environment), or else the AWS SDK's own chain (a profile,
 * SSO, a role), loaded only then: the bundles leave it out (serverless.yml), and a function never
 * needs it. Those that expire are fetched again a minute before they do, once for every request
 * that needs them then (sharedRefresh).
 */
export function credentialsFrom(env: NodeJS.ProcessEnv): () => Promise<Credentials> {
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN } = env;
  if (AWS_ACCESS_KEY_ID && AWS_SECRET_ACCESS_KEY) {
    const fixed = Promise.resolve({
      accessKeyId: AWS_ACCESS_KEY_ID,
      secretAccessKey: AWS_SECRET_ACCESS_KEY,
      sessionToken: AWS_SESSION_TOKEN,
    });
    return () => fixed;
  }
  return sharedRefresh(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only off Lambda, and left out of the bundles
    const { defaultProvider } = require('@aws-sdk/credential-provider-node') as {
      defaultProvider: () => () => Promise<Credentials>;
    };
    return defaultProvider()();
  });
}

/** Credentials as given: fixed ones, where to get them, or by default `credentialsFrom(process.env)`. */
export function credentialSource(
  credentials: Credentials | (() => Promise<Credentials>) | undefined,
): () => Promise<Credentials> {
  if (typeof credentials === 'function') return credentials;
  if (credentials === undefined) return credentialsFrom(process.env);
  return () => Promise.resolve(credentials);
}

/** The errors that say a request's credentials are missing or refused: a set-up to fix, not a failure to retry. */
const CREDENTIALS_ERRORS = [
  'CredentialsProviderError',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'ExpiredTokenException',
];

/**
 * What the developer is to set, when `error` says the credentials are missing or refused off AWS
 * (`npm start`, `invoke local`: Lambda sets AWS_EXECUTION_ENV). On a deployed stage the function's
 * role gives them, and such a failure is not the caller's to fix: undefined, as for any other error.
 */
export function credentialsProblem(error: unknown, service: string): string | undefined {
  if (process.env.AWS_EXECUTION_ENV !== undefined) return undefined;
  if (!(error instanceof Error) || !CREDENTIALS_ERRORS.includes(error.name)) return undefined;
  // Refused again once signed at AWS's time (lib/aws/clock.ts): the credentials are fine, the clock is not.
  if (error.message.startsWith('the clock is off')) {
    return `${service} refused the request: ${error.message} (set this machine's clock)`;
  }
  return (
    `No usable AWS credentials for ${service} (${error.name}): set AWS_PROFILE, or AWS_ACCESS_KEY_ID and ` +
    `AWS_SECRET_ACCESS_KEY (any values do for ${service} Local)`
  );
}
