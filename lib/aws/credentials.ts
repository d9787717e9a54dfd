/**
 * Credentials that expire, fetched again a minute before they do: once, however many requests
 * need them at that moment. Fetched by each, a burst of requests at the expiry would start as many
 * fetches (an SSO or STS call, a process run each) as there are requests in flight.
 */

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
