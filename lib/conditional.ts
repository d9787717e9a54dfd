import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { InvalidInput, PreconditionFailed } from './errors';
import { SEED_TODOS, todoJson, type Precondition, type Todo } from './todos';

/**
 * Conditional requests (RFC 9110 §13), so that two clients editing one record cannot overwrite
 * each other unseen: every Todo and the list carry an `ETag`; If-Match is evaluated first, on
 * every method (a GET or a write is 412 when it fails), then If-None-Match (a GET is 304 when it
 * names the current tag, a PUT or DELETE is 412). A write's conditions are checked by the store
 * against the very record it writes (lib/todos.ts, Precondition). docs/design.md says why the tag
 * is taken from the content and what it costs.
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

/**
 * How this version of the code shows a record: a deploy that shows records otherwise (a new field,
 * a default) shows the list otherwise at the same version, so the list's tag changes with it.
 */
const REPRESENTATION = JSON.stringify(SEED_TODOS);

/**
 * The list's weak entity tag: of the list's name (a table made again is another list), its
 * version, which every write moves (lib/dynamodb/list.ts), and how this code shows records. So
 * a tag names one state of one list, as the same bytes, and is known from the version alone.
 */
export function listTag(listId: string, version: number): string {
  return `W/${etagOf(`${listId}:${version}:${REPRESENTATION}`)}`;
}

/** The entity tag of a Todo's JSON, as its GET, PUT and POST answers give it. */
export function todoEtag(todo: Todo): string {
  return etagOf(todoJson(todo));
}

/** `*`, or a list of entity tags, each `"…"` or weak `W/"…"` (RFC 9110 §8.8.3). */
const TAGS = /^\s*(?:\*|(?:W\/)?"[!#-~\x80-\xff]*"(?:\s*,\s*(?:W\/)?"[!#-~\x80-\xff]*")*)\s*$/;
const TAG = /(?:W\/)?"[^"]*"/g;

type Header = 'if-match' | 'if-none-match';

/** The header's tags, or '*'; undefined without the header. A malformed one is a 400. */
function tagsIn(event: APIGatewayProxyEventV2, header: Header): '*' | string[] | undefined {
  const value = event.headers[header];
  if (value === undefined) return undefined;
  if (!TAGS.test(value)) {
    throw new InvalidInput(
      `${header === 'if-match' ? 'If-Match' : 'If-None-Match'} must be * or a list of quoted entity tags`,
    );
  }
  return value.trim() === '*' ? '*' : (value.match(TAG) ?? []);
}

function isWeak(tag: string): boolean {
  return tag.startsWith('W/');
}

/** A tag without its weakness: what the weak comparison compares. */
function opaque(tag: string): string {
  return tag.replace(/^W\//, '');
}

/**
 * If-Match holds (RFC 9110 §13.1.1): `*` for anything that exists; otherwise one of its tags
 * equals `etag` by the strong comparison, so a weak tag, on either side, never matches.
 */
function ifMatchHolds(tags: '*' | string[], etag: string): boolean {
  return tags === '*' || (!isWeak(etag) && tags.includes(etag));
}

/** If-None-Match holds (RFC 9110 §13.1.2): it is not `*`, and none of its tags is `etag` by the weak comparison. */
function ifNoneMatchHolds(tags: '*' | string[], etag: string): boolean {
  return tags !== '*' && !tags.some((tag) => opaque(tag) === opaque(etag));
}

/**
 * A GET's conditions, against the answer's tag: 412 (PreconditionFailed) when If-Match fails;
 * then true when If-None-Match fails, and the client's copy is current: the answer is 304 with no
 * body. Both headers are read, so a malformed one is a 400 either way.
 */
export function notModified(event: APIGatewayProxyEventV2, etag: string): boolean {
  const ifMatch = tagsIn(event, 'if-match');
  const ifNoneMatch = tagsIn(event, 'if-none-match');
  if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etag)) throw new PreconditionFailed();
  return ifNoneMatch !== undefined && !ifNoneMatchHolds(ifNoneMatch, etag);
}

/**
 * A GET of the list's conditions, read before the store is asked: a 400 when malformed, a 412 for
 * If-Match other than `*` (the list's tag is weak, and a list always exists); then whether
 * If-None-Match names a tag, which the store asks of the list's tag before it reads any record (a 304).
 */
export function listCondition(event: APIGatewayProxyEventV2): (tag: string) => boolean {
  const ifMatch = tagsIn(event, 'if-match');
  const ifNoneMatch = tagsIn(event, 'if-none-match');
  if (ifMatch !== undefined && ifMatch !== '*') throw new PreconditionFailed();
  return (tag) => ifNoneMatch !== undefined && !ifNoneMatchHolds(ifNoneMatch, tag);
}

/**
 * What a PUT or DELETE's If-Match and If-None-Match ask of the record (lib/todos.ts, Precondition),
 * or undefined when they ask nothing of a record that exists. A missing record is a 404 whatever
 * they say: If-Match and If-None-Match: * alike are answered as without them there.
 */
export function writeCondition(event: APIGatewayProxyEventV2): Precondition | undefined {
  const ifMatch = tagsIn(event, 'if-match');
  const ifNoneMatch = tagsIn(event, 'if-none-match');
  if ((ifMatch === undefined || ifMatch === '*') && ifNoneMatch === undefined) return undefined;
  return (current) => {
    const etag = todoEtag(current);
    return (
      (ifMatch === undefined || ifMatchHolds(ifMatch, etag)) &&
      (ifNoneMatch === undefined || ifNoneMatchHolds(ifNoneMatch, etag))
    );
  };
}

/**
 * What a 412 tells the client: which of the request's conditions failed, and what to do. The
 * store that refuses a write knows only that one did; the request's headers say which (If-Match
 * first, as it is evaluated first), so a retry answered from its Idempotency-Key, whose request
 * has the same headers, says the same.
 */
export function preconditionFailure(event: APIGatewayProxyEventV2): string {
  const ifMatch = tagsIn(event, 'if-match');
  // A GET that fails If-None-Match is a 304: its 412 is If-Match's.
  const ifNoneMatch = event.requestContext.http.method === 'GET' ? undefined : tagsIn(event, 'if-none-match');
  if (ifMatch !== undefined && ifMatch !== '*') {
    if (event.pathParameters?.id === undefined) {
      return "The list's ETag is weak, and If-Match compares strongly: only If-Match: * matches the list";
    }
    if (ifMatch.every(isWeak)) {
      return 'If-Match compares strongly, so a weak tag (W/"...") never matches: send the ETag as the Todo\'s answers give it';
    }
    return ifNoneMatch === undefined
      ? 'The Todo has changed since it was read: read it again (a new ETag) and retry'
      : 'The Todo is not as If-Match and If-None-Match ask: read it again (a new ETag) and decide';
  }
  return ifNoneMatch === '*'
    ? 'The Todo exists, and If-None-Match: * asks that it does not: nothing was changed'
    : 'If-None-Match names the Todo as it is now: nothing was changed';
}
