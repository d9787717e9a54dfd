import { expect } from '@jest/globals';
import type { HttpResponse } from '../../lib/http';
import { bodyOf } from './event';

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

export function expectTodoNotFound(response: HttpResponse): void {
  expect(response.statusCode).toBe(404);
  expect(response.headers).toEqual({ 'content-type': 'application/json; charset=utf-8' });
  expect(bodyOf(response)).toEqual({ error: 'Todo not found' });
}

export function expectBadRequest(response: HttpResponse): void {
  expect(response.statusCode).toBe(400);
  expect(response.headers).toEqual({ 'content-type': 'application/json; charset=utf-8' });
  expect(bodyOf(response)).toEqual({ error: expect.any(String) });
}

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

/** A POST/PUT body of exactly `bytes` UTF-8 bytes: `{"title":"xxx…"}`. */
export function bodyOfBytes(bytes: number): string {
  const frame = '{"title":""}';
  return `{"title":"${'x'.repeat(bytes - frame.length)}"}`;
}

export function expectPayloadTooLarge(response: HttpResponse): void {
  expect(response.statusCode).toBe(413);
  expect(response.headers).toEqual({ 'content-type': 'application/json; charset=utf-8' });
  expect(bodyOf(response)).toEqual({ error: expect.stringContaining('larger than 65536 bytes') });
}

/** The one JSON line a request logs: every field, exactly (the body and title are never among them). */
export function requestLogLine(fields: {
  method: string;
  route: string;
  status: number;
  requestId: unknown;
  todoId?: unknown;
}): unknown {
  return {
    level: 'info',
    time: expect.any(Number),
    message: 'request',
    durationMs: expect.any(Number),
    ...fields,
  };
}
