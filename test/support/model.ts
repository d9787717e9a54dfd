import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import type fc from 'fast-check';
import type { Method } from './event';
import { BODY_LIMIT, FIELDS, recordFrom } from './todo-fields';

/**
 * A reference model of docs/spec.md (a list and a counter) and the command that drives the service
 * and the model side by side: after every command the status, the body and the whole list must
 * equal the model's. The model restates the contract from the spec and the README's answers to
 * what it leaves open; it shares no code with the service. A record's fields, and what a POST and a
 * PUT may do with each, are todo-fields.ts's. The random commands are in arbitraries.ts.
 */

export interface Request {
  readonly method: Method;
  /** undefined for /todos; otherwise the `{id}` path value, decoded. */
  readonly id?: string;
  readonly body?: string;
  /** The Idempotency-Key header's value, as sent. */
  readonly key?: string;
  /** If-Match (GET, PUT, DELETE), as sent. */
  readonly ifMatch?: string;
  /** If-None-Match (GET, PUT, DELETE), as sent. */
  readonly ifNoneMatch?: string;
}

export interface Reply {
  readonly status: number;
  /** The media type, without parameters. */
  readonly mediaType: string;
  /** Parsed JSON, or the text for text/plain. */
  readonly body: unknown;
  /** Whether it said `Idempotent-Replayed: true`. */
  readonly replayed: boolean;
  /** Its ETag, if any: learned by the model (which cannot compute one), never compared. */
  readonly etag?: string;
}

/** How a command reaches the service: through the handlers, or over HTTP. */
export type Send = (request: Request) => Promise<Reply>;

/** A record: its id, and the fields of todo-fields.ts. */
type ModelTodo = { id: number } & Record<string, unknown>;

export interface Model {
  todos: ModelTodo[];
  nextId: number;
  /** Ids the model has seen deleted, to aim commands at. */
  deleted: number[];
  /** Each claimed Idempotency-Key: the request it came with, and the reply it got. */
  claims: Map<string, { request: string; reply: Reply }>;
  /** Keyed requests sent so far, as sent: a retry sends one of them again. */
  sent: Request[];
  /** Makes this run's keys its own, on a service that outlives runs. */
  keyPrefix: string;
  /** Each ETag seen (without `W/`), and the JSON of the Todo or list it came with: a tag names one content. */
  tags: Map<string, string>;
  /**
   * The list's tag as last answered (without `W/`). It names the list's version, which every
   * applied write moves, whether or not the content comes back to the same bytes: so only this
   * one is a match for If-None-Match, where a Todo's tag matches whatever answer has its content.
   */
  listTag?: string;
}

export interface Real {
  send: Send;
}

/** A seed record: as a POST that sets no field would make it, with the spec's `completed` (recordFrom keeps the fields' order). */
function seedRecord(id: number, completed: boolean): ModelTodo {
  return { ...recordFrom({ title: '' }, id), id, completed };
}

export function seededModel(): Model {
  return {
    // docs/spec.md: record 1 not completed, record 2 completed; every other field as a POST that
    // sets none would make it (todo-fields.ts). Their titles are learnt from the first list (adoptSeedTitles).
    todos: [seedRecord(1, false), seedRecord(2, true)],
    nextId: 3,
    deleted: [],
    claims: new Map(),
    sent: [],
    keyPrefix: randomUUID(),
    tags: new Map(),
  };
}

// ---- The contract, restated -------------------------------------------------------------

const json = (status: number, body: unknown): Reply => ({
  status,
  mediaType: 'application/json',
  body,
  replayed: false,
});
const anyError = (status: number) => json(status, { error: expect.any(String) });
const NOT_FOUND = json(404, { error: 'Todo not found' });

type Parsed = { object: Record<string, unknown> } | { reply: Reply };

function parseBody(body: string | undefined): Parsed {
  if (body === undefined || body === '') return { reply: anyError(400) };
  if (Buffer.byteLength(body, 'utf8') > BODY_LIMIT) return { reply: anyError(413) };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { reply: anyError(400) };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { reply: anyError(400) };
  return { object: value as Record<string, unknown> };
}

/** docs/spec.md §4: the path value is converted to a number; no match means no record. */
function indexOf(model: Model, id: string | undefined): number {
  const wanted = Number(id);
  return model.todos.findIndex((todo) => todo.id === wanted);
}

/**
 * The draft's key: an sf-string of printable ASCII in double quotes (a quote or backslash in it
 * escaped with a backslash), here of 1 to 255 characters.
 */
const KEY = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\]){1,255}"$/;

/** docs/spec.md §4 and the README: a path value that is a positive whole number may name a record. */
const mayNameARecord = (id: string | undefined) => Number.isSafeInteger(Number(id)) && Number(id) >= 1;

/**
 * What the service must answer, applying the request to the model, with its Idempotency-Key
 * (docs/design.md, "Retrying"): the key is checked first, then the body, then the id; a request that
 * changes nothing (a 404, an empty PUT) is answered as without its key; otherwise a key claimed
 * before answers its first reply again (422 for another request), and a write claims its key.
 * GET takes no key.
 */
export function expectedReply(model: Model, request: Request): Reply {
  const { key } = request;
  if (key === undefined || request.method === 'GET') return replyTo(model, request);
  if (!KEY.test(key)) return anyError(400);
  // What the request gets without its key, tried on a copy: a refusal before any store is asked.
  const alone = replyTo(copyOf(model), request);
  // An empty PUT writes nothing, so it claims nothing: a 412 included.
  const emptyPut = request.method === 'PUT' && [200, 404, 412].includes(alone.status) && !changes(request.body);
  const earlyRefusal =
    alone.status === 400 || alone.status === 413 || (alone.status === 404 && !mayNameARecord(request.id));
  if (earlyRefusal || emptyPut) return replyTo(model, request);
  // If-None-Match is part of the request where it is a condition: not on a POST, which ignores it.
  const ifNoneMatch = request.method === 'POST' ? undefined : request.ifNoneMatch;
  const fingerprint = JSON.stringify([request.method, request.id, request.body, request.ifMatch, ifNoneMatch]);
  const claim = model.claims.get(key);
  if (claim !== undefined) {
    if (claim.request !== fingerprint) return anyError(422);
    return { ...claim.reply, replayed: true };
  }
  const reply = replyTo(model, request);
  if ([200, 201, 412].includes(reply.status)) model.claims.set(key, { request: fingerprint, reply });
  return reply;
}

const copyOf = (model: Model): Model => ({
  ...structuredClone({ todos: model.todos, nextId: model.nextId, deleted: model.deleted }),
  claims: new Map(),
  sent: [],
  keyPrefix: model.keyPrefix,
  tags: model.tags,
  ...(model.listTag !== undefined && { listTag: model.listTag }),
});

/** A PUT body that asks for a change: a JSON object with a field a PUT may set. */
function changes(body: string | undefined): boolean {
  const parsed = JSON.parse(body ?? '{}') as Record<string, unknown>;
  return FIELDS.some((field) => field.onUpdate && Object.hasOwn(parsed, field.name));
}

/** Whether each field of `body` that a POST (or a PUT) reads is accepted; a required one must be there. */
function validFields(body: Record<string, unknown>, method: 'POST' | 'PUT'): boolean {
  return FIELDS.every((field) => {
    const reads = method === 'POST' ? field.onCreate !== 'ignored' : field.onUpdate;
    if (!reads) return true;
    if (!Object.hasOwn(body, field.name)) return !(method === 'POST' && field.onCreate === 'required');
    const value = body[field.name];
    return (method === 'PUT' && field.clearable && value === null) || field.accepts(value);
  });
}

/** The record after a PUT of `body` (accepted): each field it sets, set, or cleared by `null`. */
function patched(current: ModelTodo, body: Record<string, unknown>): ModelTodo {
  const updated: ModelTodo = { id: current.id };
  // In the fields' order, as the answer has them: a tag names the bytes of a record's JSON.
  for (const { name, onUpdate } of FIELDS) {
    const value = onUpdate && Object.hasOwn(body, name) ? body[name] : current[name];
    if (value !== null && value !== undefined) updated[name] = value;
  }
  return updated;
}

/**
 * RFC 9110 §8.8.3, restated: `*`, or a comma-separated list of quoted tags, each maybe weak.
 * (One tag's characters: anything printable but a quote.)
 */
const TAG_LIST = /^\s*(?:\*|(?:W\/)?"[^"\s]*"(?:\s*,\s*(?:W\/)?"[^"\s]*")*)\s*$/;
const PRECONDITION_FAILED = anyError(412);
const NOT_MODIFIED: Reply = { status: 304, mediaType: '', body: '', replayed: false };

/**
 * Whether `header` names `content` by one of its tags: weakly (If-None-Match) or strongly
 * (If-Match), where a weak tag never matches, the list's own (an array's) included.
 */
function names(model: Model, header: string, content: unknown, comparison: 'weak' | 'strong'): boolean {
  if (header.trim() === '*') return true;
  if (comparison === 'strong' && Array.isArray(content)) return false;
  const tags = header.match(/(?:W\/)?"[^"]*"/g) ?? [];
  if (Array.isArray(content)) return tags.some((tag) => tag.replace(/^W\//, '') === model.listTag);
  return tags.some(
    (tag) =>
      !(comparison === 'strong' && tag.startsWith('W/')) &&
      model.tags.get(tag.replace(/^W\//, '')) === JSON.stringify(content),
  );
}

/** Whether the request's If-Match or If-None-Match is malformed: a 400. */
const malformedTags = ({ ifMatch, ifNoneMatch }: Request) =>
  [ifMatch, ifNoneMatch].some((tags) => tags !== undefined && !TAG_LIST.test(tags));

/**
 * RFC 9110 §13.2.2, restated: If-Match first, by the strong comparison (a weak tag, the list's
 * included, never matches; `*` does), then If-None-Match, by the weak comparison. Undefined when
 * both hold; else what failed.
 */
function failedCondition(model: Model, request: Request, content: unknown): 'If-Match' | 'If-None-Match' | undefined {
  if (request.ifMatch !== undefined && !names(model, request.ifMatch, content, 'strong')) return 'If-Match';
  if (request.ifNoneMatch !== undefined && names(model, request.ifNoneMatch, content, 'weak')) return 'If-None-Match';
  return undefined;
}

/** A GET's answer: 412 when If-Match fails, 304 when If-None-Match names what it would answer (a malformed one is a 400). */
function conditionalGet(model: Model, request: Request, content: unknown): Reply {
  if (malformedTags(request)) return anyError(400);
  const failed = failedCondition(model, request, content);
  if (failed === 'If-Match') return PRECONDITION_FAILED;
  return failed === 'If-None-Match' ? NOT_MODIFIED : json(200, content);
}

/**
 * The record a PUT or DELETE may write, by its index, or the answer instead: the id is checked
 * before the conditions (a malformed one is a 400), the conditions before the record (404, then
 * 412 when either fails).
 */
function writable(model: Model, request: Request): number | Reply {
  if (!mayNameARecord(request.id)) return NOT_FOUND;
  if (malformedTags(request)) return anyError(400);
  const index = indexOf(model, request.id);
  const current = model.todos[index];
  if (current === undefined) return NOT_FOUND;
  if (failedCondition(model, request, current) !== undefined) return PRECONDITION_FAILED;
  return index;
}

function replyTo(model: Model, request: Request): Reply {
  if (request.method === 'GET' && request.id === undefined) return conditionalGet(model, request, model.todos);
  if (request.method === 'GET') {
    const index = indexOf(model, request.id);
    return index < 0 ? NOT_FOUND : conditionalGet(model, request, model.todos[index]);
  }
  if (request.method === 'DELETE') {
    const index = writable(model, request);
    if (typeof index !== 'number') return index;
    const [removed] = model.todos.splice(index, 1);
    if (removed) model.deleted.push(removed.id);
    return { status: 200, mediaType: 'text/plain', body: 'Deleted', replayed: false };
  }
  const parsed = parseBody(request.body);
  if ('reply' in parsed) return parsed.reply;
  const body = parsed.object;
  if (request.method === 'POST') {
    if (!validFields(body, 'POST')) return anyError(400);
    const todo = recordFrom(body, model.nextId++) as ModelTodo;
    model.todos.push(todo);
    return json(201, todo);
  }
  // PUT: the body is checked before the id.
  if (!validFields(body, 'PUT')) return anyError(400);
  const index = writable(model, request);
  if (typeof index !== 'number') return index;
  const current = model.todos[index];
  if (current === undefined) return NOT_FOUND;
  const updated = patched(current, body);
  model.todos[index] = updated;
  return json(200, updated);
}

// ---- The command ------------------------------------------------------------------------

/** Which id a command aims at: resolved against the model when it runs. */
export type IdRef =
  | { kind: 'existing'; pick: number }
  | { kind: 'deleted'; pick: number }
  | { kind: 'next' }
  | { kind: 'raw'; value: string };

function resolveId(model: Model, ref: IdRef): string {
  switch (ref.kind) {
    case 'existing':
      return String(model.todos[ref.pick % Math.max(model.todos.length, 1)]?.id ?? 1);
    case 'deleted':
      return String(model.deleted[ref.pick % Math.max(model.deleted.length, 1)] ?? model.nextId - 1);
    case 'next':
      return String(model.nextId);
    case 'raw':
      return ref.value;
  }
}

/** Seed records' titles are sample text, not contract: the model learns them from the first list. */
export function adoptSeedTitles(model: Model, list: unknown): void {
  if (!Array.isArray(list)) return;
  for (const todo of model.todos) {
    const seen = list.find((item: { id?: unknown }) => item.id === todo.id) as { title?: unknown } | undefined;
    if (todo.title === '' && typeof seen?.title === 'string') todo.title = seen.title;
  }
}

/** Which tags a command's If-Match or If-None-Match names: one the model has seen (maybe made weak), or a value as it is. */
export type TagRef = { kind: 'seen'; pick: number; weak: boolean } | { kind: 'raw'; value: string };

function resolveTags(model: Model, ref: TagRef): string {
  if (ref.kind === 'raw') return ref.value;
  const seen = [...model.tags.keys()];
  const tag = seen[ref.pick % Math.max(seen.length, 1)] ?? '"none"';
  return ref.weak ? `W/${tag}` : tag;
}

/** Which Idempotency-Key a command carries: one of this run's few, or a value as it is (a malformed one, say). */
export type KeyRef = { kind: 'run'; pick: number } | { kind: 'raw'; value: string };

function resolveKey(model: Model, ref: KeyRef): string {
  return ref.kind === 'run' ? `"${model.keyPrefix}-${ref.pick}"` : ref.value;
}

/** Sends `request`, checks the reply and the whole list against the model's, and keeps a keyed request for a retry. */
async function exchange(model: Model, real: Real, request: Request, label: string): Promise<void> {
  const expected = expectedReply(model, request);
  const { etag, ...actual } = await real.send(request);
  expect({ request: label, ...actual }).toEqual({ request: label, ...expected });
  learnTag(model, etag, actual, label);
  const { etag: listTag, ...list } = await real.send({ method: 'GET' });
  expect({ after: label, ...list }).toEqual({ after: label, ...json(200, model.todos) });
  learnTag(model, listTag, list, label);
  if (request.key !== undefined) model.sent.push(request);
}

/**
 * What an answer's ETag names, for later conditional requests; and the contract of tags: a Todo
 * or list answer always has one, and one tag never names two contents.
 */
function learnTag(model: Model, etag: string | undefined, reply: Omit<Reply, 'etag'>, label: string): void {
  if (reply.status === 304 || reply.mediaType !== 'application/json' || reply.status >= 300) return;
  expect({ answer: label, etag }).toEqual({ answer: label, etag: expect.stringMatching(/^(W\/)?"[^"]+"$/) });
  if (etag === undefined) return;
  const tag = etag.replace(/^W\//, '');
  const content = JSON.stringify(reply.body);
  expect({ answer: label, names: model.tags.get(tag) ?? content }).toEqual({ answer: label, names: content });
  model.tags.set(tag, content);
  if (Array.isArray(reply.body)) model.listTag = tag;
}

const describeRequest = ({ method, id, body, key, ifMatch, ifNoneMatch }: Request) =>
  `${method} /todos${id === undefined ? '' : `/${id}`}${key === undefined ? '' : ` [Idempotency-Key: ${key}]`}` +
  (ifMatch === undefined ? '' : ` [If-Match: ${ifMatch}]`) +
  (ifNoneMatch === undefined ? '' : ` [If-None-Match: ${ifNoneMatch}]`) +
  (body === undefined ? '' : ` ${body.length > 120 ? `${body.slice(0, 120)}… (${body.length} chars)` : body}`);

export class HttpCommand implements fc.AsyncCommand<Model, Real> {
  #resolved = '';

  constructor(
    readonly method: Method,
    readonly idRef: IdRef | undefined,
    readonly body: string | undefined,
    readonly keyRef?: KeyRef,
    readonly ifMatchRef?: TagRef,
    readonly ifNoneMatchRef?: TagRef,
  ) {}

  check(): boolean {
    return true;
  }

  async run(model: Model, real: Real): Promise<void> {
    const id = this.idRef === undefined ? undefined : resolveId(model, this.idRef);
    const request: Request = {
      method: this.method,
      ...(id === undefined ? {} : { id }),
      ...(this.body === undefined ? {} : { body: this.body }),
      ...(this.keyRef === undefined ? {} : { key: resolveKey(model, this.keyRef) }),
      ...(this.ifMatchRef === undefined ? {} : { ifMatch: resolveTags(model, this.ifMatchRef) }),
      ...(this.ifNoneMatchRef === undefined ? {} : { ifNoneMatch: resolveTags(model, this.ifNoneMatchRef) }),
    };
    this.#resolved = describeRequest(request);
    await exchange(model, real, request, this.#resolved);
  }

  toString(): string {
    return (
      this.#resolved ||
      describeRequest({
        method: this.method,
        ...(this.body === undefined ? {} : { body: this.body }),
      })
    );
  }
}

/** A client's retry: a keyed request sent earlier, sent again exactly. */
export class RetryCommand implements fc.AsyncCommand<Model, Real> {
  #resolved = '';

  constructor(readonly pick: number) {}

  check(model: Readonly<Model>): boolean {
    return model.sent.length > 0;
  }

  async run(model: Model, real: Real): Promise<void> {
    const request = model.sent[this.pick % model.sent.length];
    if (request === undefined) throw new Error('no keyed request to retry');
    this.#resolved = `retry: ${describeRequest(request)}`;
    await exchange(model, real, request, this.#resolved);
  }

  toString(): string {
    return this.#resolved || `retry #${this.pick}`;
  }
}

/** For a service whose state cannot be reset (a live server): a model of its current state. */
export async function modelOfLiveState(send: Send): Promise<Model> {
  // A probe record tells the next id; deleting it keeps the list as it was.
  const probe = await send({ method: 'POST', body: '{"title":"probe"}' });
  const { id } = probe.body as { id: number };
  await send({ method: 'DELETE', id: String(id) });
  const list = await send({ method: 'GET' });
  return {
    todos: structuredClone(list.body) as ModelTodo[],
    nextId: id + 1,
    deleted: [id],
    claims: new Map(),
    sent: [],
    keyPrefix: randomUUID(),
    tags: new Map(),
  };
}

/** Turns what the service answered into a Reply: media type without parameters, JSON parsed. */
export function toReply(
  status: number,
  headers: { get(name: string): string | null | undefined },
  text: string,
): Reply {
  const mediaType = (headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  const etag = headers.get('etag');
  return {
    status,
    // A 304 has no body, and says nothing of a media type.
    mediaType: status === 304 ? '' : mediaType,
    body: mediaType === 'application/json' && status !== 304 ? (JSON.parse(text) as unknown) : text,
    replayed: headers.get('idempotent-replayed') === 'true',
    ...(etag === null || etag === undefined ? {} : { etag }),
  };
}

/** The headers a model request sends: its key, If-Match and If-None-Match. */
export function requestHeaders({ key, ifMatch, ifNoneMatch }: Request): Record<string, string> {
  return {
    ...(key === undefined ? {} : { 'idempotency-key': key }),
    ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }),
    ...(ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch }),
  };
}
