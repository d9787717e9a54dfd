import { expect } from '@jest/globals';
import type fc from 'fast-check';
import type { Method } from '../../harness/event';

/**
 * A reference model of SPEC.md (a list and a counter) and the command that drives the service
 * and the model side by side: after every command the status, the body and the whole list must
 * equal the model's. The model restates the contract from the spec and the README's answers to
 * what it leaves open; it shares no code with the service. The random commands are in
 * arbitraries.ts.
 */

export interface Request {
  readonly method: Method;
  /** undefined for /todos; otherwise the `{id}` path value, decoded. */
  readonly id?: string;
  readonly body?: string;
}

export interface Reply {
  readonly status: number;
  /** The media type, without parameters. */
  readonly mediaType: string;
  /** Parsed JSON, or the text for text/plain. */
  readonly body: unknown;
}

/** How a command reaches the service: through the handlers, or over HTTP. */
export type Send = (request: Request) => Promise<Reply>;

interface ModelTodo {
  id: number;
  title: string;
  completed: boolean;
}

export interface Model {
  todos: ModelTodo[];
  nextId: number;
  /** Ids the model has seen deleted, to aim commands at. */
  deleted: number[];
}

export interface Real {
  send: Send;
}

export const BODY_LIMIT = 65_536;

export function seededModel(): Model {
  return {
    todos: [
      { id: 1, title: '', completed: false },
      { id: 2, title: '', completed: true },
    ],
    nextId: 3,
    deleted: [],
  };
}

// ---- The contract, restated -------------------------------------------------------------

const json = (status: number, body: unknown): Reply => ({ status, mediaType: 'application/json', body });
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

/** SPEC.md §4: the path value is converted to a number; no match means no record. */
function indexOf(model: Model, id: string | undefined): number {
  const wanted = Number(id);
  return model.todos.findIndex((todo) => todo.id === wanted);
}

const own = (object: Record<string, unknown>, key: string) => (Object.hasOwn(object, key) ? object[key] : undefined);

/** What the service must answer, applying the request to the model. */
export function expectedReply(model: Model, request: Request): Reply {
  if (request.method === 'GET' && request.id === undefined) return json(200, model.todos);
  if (request.method === 'GET') {
    const index = indexOf(model, request.id);
    return index < 0 ? NOT_FOUND : json(200, model.todos[index]);
  }
  if (request.method === 'DELETE') {
    const index = indexOf(model, request.id);
    if (index < 0) return NOT_FOUND;
    const [removed] = model.todos.splice(index, 1);
    if (removed) model.deleted.push(removed.id);
    return { status: 200, mediaType: 'text/plain', body: 'Deleted' };
  }
  const parsed = parseBody(request.body);
  if ('reply' in parsed) return parsed.reply;
  const body = parsed.object;
  if (request.method === 'POST') {
    const title = own(body, 'title');
    if (typeof title !== 'string') return anyError(400);
    const todo = { id: model.nextId++, title, completed: false };
    model.todos.push(todo);
    return json(201, todo);
  }
  // PUT: the body is checked before the id.
  const title = own(body, 'title');
  const completed = own(body, 'completed');
  if (Object.hasOwn(body, 'title') && typeof title !== 'string') return anyError(400);
  if (Object.hasOwn(body, 'completed') && typeof completed !== 'boolean') return anyError(400);
  const index = indexOf(model, request.id);
  const current = model.todos[index];
  if (current === undefined) return NOT_FOUND;
  const updated = {
    id: current.id,
    title: typeof title === 'string' ? title : current.title,
    completed: typeof completed === 'boolean' ? completed : current.completed,
  };
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

export class HttpCommand implements fc.AsyncCommand<Model, Real> {
  #resolved = '';

  constructor(
    readonly method: Method,
    readonly idRef: IdRef | undefined,
    readonly body: string | undefined,
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
    };
    this.#resolved = `${this.method} /todos${id === undefined ? '' : `/${id}`}`;
    const expected = expectedReply(model, request);
    const actual = await real.send(request);
    expect({ request: this.#resolved, ...actual }).toEqual({ request: this.#resolved, ...expected });
    const list = await real.send({ method: 'GET' });
    expect({ after: this.#resolved, ...list }).toEqual({ after: this.#resolved, ...json(200, model.todos) });
  }

  toString(): string {
    const target =
      this.#resolved || `${this.method} ${this.idRef === undefined ? '/todos' : JSON.stringify(this.idRef)}`;
    const body =
      this.body === undefined
        ? ''
        : ` ${this.body.length > 120 ? `${this.body.slice(0, 120)}… (${this.body.length} chars)` : this.body}`;
    return `${target}${body}`;
  }
}

/** For a service whose state cannot be reset (a live server): a model of its current state. */
export async function modelOfLiveState(send: Send): Promise<Model> {
  // A probe record tells the next id; deleting it keeps the list as it was.
  const probe = await send({ method: 'POST', body: '{"title":"probe"}' });
  const { id } = probe.body as { id: number };
  await send({ method: 'DELETE', id: String(id) });
  const list = await send({ method: 'GET' });
  return { todos: structuredClone(list.body) as ModelTodo[], nextId: id + 1, deleted: [id] };
}

/** Turns what the service answered into a Reply: media type without parameters, JSON parsed. */
export function toReply(status: number, contentType: string | null | undefined, text: string): Reply {
  const mediaType = (contentType ?? '').split(';')[0]?.trim() ?? '';
  return { status, mediaType, body: mediaType === 'application/json' ? (JSON.parse(text) as unknown) : text };
}
