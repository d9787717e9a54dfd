import { expect } from '@jest/globals';
import { bodyOf } from './event';
import type { HttpResponse } from '../../lib/http';
import { SEED_TODOS, type Todo } from '../../lib/todos';
import type { ApiResponse } from './client';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Path values that name no record: not numbers, not integers, not positive, or past any id. */
export const NOT_FOUND_IDS = [
  '99',
  'abc',
  '1.5',
  '-1',
  '0',
  '-0',
  '1e309',
  'Infinity',
  'NaN',
  '',
  ' ',
  '9'.repeat(400),
];

/** Bodies that are not one JSON object: malformed JSON, no body, and JSON of another kind. */
export const NOT_AN_OBJECT_BODIES = [
  '{',
  '{"title": "x",}',
  'not json',
  '',
  '[]',
  '[{"title":"x"}]',
  'null',
  '"title"',
  '42',
  'true',
];

/** Seed record `id` as a fresh store holds it (lib/todos.ts's SEED_TODOS), for a test to patch or compare whole. */
export function seed(id: 1 | 2): Todo {
  const todo = SEED_TODOS.find((seeded) => seeded.id === id);
  if (todo === undefined) throw new Error(`SEED_TODOS has no record ${id}`);
  return todo;
}

/** What a handler answered (unit tests) or what came back over HTTP (e2e tests). */
export type Answer = HttpResponse | ApiResponse;

/**
 * A JSON answer with this status and body. A handler's answer must carry no header but its
 * content type; over HTTP the gateway adds its own, so only the content type is ours to check.
 */
export function expectJson(answer: Answer, status: number, body: unknown): void {
  if ('status' in answer) {
    expect({ status: answer.status, contentType: answer.contentType, body: answer.json() }).toEqual({
      status,
      contentType: JSON_TYPE,
      body,
    });
  } else {
    expect({ status: answer.statusCode, headers: answer.headers, body: bodyOf(answer) }).toEqual({
      status,
      headers: { 'content-type': JSON_TYPE },
      body,
    });
  }
}

/** 201 Created with the new record, whose address is in Location. */
export function expectCreated(answer: Answer, todo: Todo): void {
  if ('status' in answer) {
    expectJson(answer, 201, todo);
    expect(answer.headers.get('location')).toBe(`/todos/${todo.id}`);
  } else {
    expect({ status: answer.statusCode, headers: answer.headers, body: bodyOf(answer) }).toEqual({
      status: 201,
      headers: {
        'content-type': JSON_TYPE,
        location: `/todos/${todo.id}`,
        etag: expect.stringMatching(/^"[\w-]{22}"$/),
      },
      body: todo,
    });
  }
}

export function expectTodoNotFound(answer: Answer): void {
  expectJson(answer, 404, { error: 'Todo not found' });
}

export function expectBadRequest(answer: Answer): void {
  expectJson(answer, 400, { error: expect.any(String) });
}

export function expectPayloadTooLarge(answer: Answer): void {
  expectJson(answer, 413, { error: expect.stringContaining('larger than 65536 bytes') });
}

/**
 * A POST/PUT body of exactly `bytes` UTF-8 bytes, valid whatever a title's limit: a short title, and
 * a field no version reads as padding (`{"title":"x","padding":"yyy…"}`).
 */
export function bodyOfBytes(bytes: number): string {
  const frame = '{"title":"x","padding":""}';
  return `{"title":"x","padding":"${'y'.repeat(bytes - frame.length)}"}`;
}

/** The one JSON line a request logs: every field, exactly (the body and title are never among them). */
export function requestLogLine(
  fields: {
    method: string;
    route: string;
    status: number;
    requestId: unknown;
    todoId?: unknown;
  },
  metrics: readonly string[] = [],
): unknown {
  return {
    level: 'info',
    time: expect.any(Number),
    message: 'request',
    durationMs: expect.any(Number),
    ...fields,
    ...(metrics.length === 0
      ? {}
      : {
          _aws: {
            Timestamp: expect.any(Number),
            CloudWatchMetrics: [
              { Namespace: expect.any(String), Dimensions: [[]], Metrics: metrics.map((Name) => ({ Name })) },
            ],
          },
          ...Object.fromEntries(metrics.map((name) => [name, 1])),
        }),
  };
}
