import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { InvalidInput } from './errors';
import type { IdempotencyClaim } from './todos';

/**
 * The Idempotency-Key request header (draft-ietf-httpapi-idempotency-key-header): a client that
 * sends one with a POST, PUT or DELETE may send the same request again after any failure, and
 * gets the first answer, whatever happened in between. The stores keep what a claim needs.
 */

/** How long a key is remembered: the draft lets the server choose, and Stripe keeps 24 hours. */
export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** Characters in a key, as Stripe allows them. */
export const MAX_KEY_LENGTH = 255;

/**
 * RFC 8941's sf-string, the key's form in the draft: printable ASCII in double quotes, where a
 * quote or a backslash is escaped with a backslash: `"8e03978e-40d5-43e8-bc93-6894a57f9324"`.
 * Here of 1 to MAX_KEY_LENGTH characters, an escaped one counting once. A string has one such
 * form, so the header's value, quotes and all, names the key: it needs no unescaping.
 */
const KEY = new RegExp(`^"(?:[ !#-[\\]-~]|\\\\["\\\\]){1,${MAX_KEY_LENGTH}}"$`);

/**
 * The request's If-Match and If-None-Match, as they go into the fingerprint: each after a space,
 * which a path never holds, and If-None-Match by name, which a well-formed If-Match never holds
 * (a malformed one is a 400 before any claim), so no request without them, or with other ones,
 * has the same fingerprint. If-None-Match only where it is a condition, on a PUT or a DELETE: a
 * POST ignores it, and its fingerprint stays what it was before it was read (a key claimed before
 * a deploy still answers its retry after it).
 */
function preconditions(event: APIGatewayProxyEventV2): string {
  const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = event.headers;
  const conditional = event.requestContext.http.method !== 'POST';
  return (
    (ifMatch === undefined ? '' : ` ${ifMatch}`) +
    (ifNoneMatch === undefined || !conditional ? '' : ` If-None-Match: ${ifNoneMatch}`)
  );
}

/**
 * The request's claim on its Idempotency-Key, or undefined without one. A key that is not the
 * draft's quoted string, or that is empty or longer than MAX_KEY_LENGTH, is a 400. The request
 * is fingerprinted by its method, path, If-Match, If-None-Match and body exactly as sent, so that
 * the key answers that request only. Without them the fingerprint is what it was before conditional
 * requests, so a key claimed before a deploy still answers its retry after it.
 */
export function idempotencyClaim(
  event: APIGatewayProxyEventV2,
  body: string | undefined,
): IdempotencyClaim | undefined {
  const key = event.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (!KEY.test(key)) {
    throw new InvalidInput(
      `Idempotency-Key must be a quoted string of 1 to ${MAX_KEY_LENGTH} printable ASCII characters`,
    );
  }
  return {
    // The key as sent: at most 257 printable characters, and never part of an expression.
    key,
    // node:crypto is loaded by the first keyed request, not at load: requiring it costs about
    // 3 ms of every cold start (npm run bench -- coldInit), which requests without a key need not pay.
    fingerprint: process
      .getBuiltinModule('node:crypto')
      .createHash('sha256')
      .update(`${event.requestContext.http.method} ${event.rawPath}${preconditions(event)}\n${body ?? ''}`)
      .digest('base64url'),
    expiresAt: Date.now() + KEY_LIFETIME_MS,
  };
}
