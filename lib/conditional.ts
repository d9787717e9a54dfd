import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { InvalidInput } from './errors';
import type { Precondition, Todo } from './todos';

/**
 * Conditional requests (RFC 9110 §13), so that two clients editing one record cannot overwrite
 * each other unseen: every Todo and the list carry an `ETag`; a GET with `If-None-Match` naming
 * it is answered 304, and a PUT or DELETE with `If-Match` is written only while the record is
 * still the one the client read (412 otherwise). docs/design.md says why the tag is taken from the
 * content and what it costs.
 */

/**
 * The strong entity tag of a representation: the first 22 base64url characters (132 bits) of the
 * SHA-256 of its body, so two answers have one tag exactly when their bodies are the same bytes,
 * on either store, across restarts and containers.
 */
export function etagOf(body: string): string {
  // node:crypto is loaded by the first tagged answer, not at load: a DynamoDB function has it
  // loaded by then anyway (its requests are signed), and the memory store's only run locally.
  const digest = process.getBuiltinModule('node:crypto').createHash('sha256').update(body).digest('base64url');
  return `"${digest.slice(0, 22)}"`;
}

/** The entity tag of a Todo's JSON, as its GET, PUT and POST answers give it. */
export function todoEtag(todo: Todo): string {
  return etagOf(JSON.stringify(todo));
}

/** `*`, or a list of entity tags, each `"…"` or weak `W/"…"` (RFC 9110 §8.8.3). */
const TAGS = /^\s*(?:\*|(?:W\/)?"[!#-~\x80-\xff]*"(?:\s*,\s*(?:W\/)?"[!#-~\x80-\xff]*")*)\s*$/;
const TAG = /(?:W\/)?"[^"]*"/g;

/** The header's tags, or '*'; undefined without the header. A malformed one is a 400. */
function tagsIn(event: APIGatewayProxyEventV2, header: 'if-match' | 'if-none-match'): '*' | string[] | undefined {
  const value = event.headers[header];
  if (value === undefined) return undefined;
  if (!TAGS.test(value)) {
    throw new InvalidInput(
      `${header === 'if-match' ? 'If-Match' : 'If-None-Match'} must be * or a list of quoted entity tags`,
    );
  }
  return value.trim() === '*' ? '*' : (value.match(TAG) ?? []);
}

/**
 * True when a GET's If-None-Match names the answer's tag (or is `*`): the client's copy is
 * current, and the answer is 304 with no body. The weak comparison, as RFC 9110 §13.1.2 says.
 */
export function notModified(event: APIGatewayProxyEventV2, etag: string): boolean {
  const tags = tagsIn(event, 'if-none-match');
  if (tags === undefined) return false;
  return tags === '*' || tags.some((tag) => opaque(tag) === opaque(etag));
}

/** A tag without its weakness: what the weak comparison compares. */
function opaque(tag: string): string {
  return tag.replace(/^W\//, '');
}

/**
 * What a PUT or DELETE's If-Match asks of the record (lib/todos.ts, Precondition): `*`, that it
 * exists, which every record that is found does; a list, that the record's tag is among them, by
 * the strong comparison (RFC 9110 §13.1.1), so a weak tag never matches. Undefined without it.
 */
export function ifMatch(event: APIGatewayProxyEventV2): Precondition | undefined {
  const tags = tagsIn(event, 'if-match');
  if (tags === undefined || tags === '*') return undefined;
  return (current) => tags.includes(todoEtag(current));
}
