import { Refusal } from './errors';
import type { Answer } from './http';
import { errorFields } from './log';
import type { Metric } from './metrics';

/**
 * What one request's line in the log says, and which of the service's metrics (lib/metrics.ts) it
 * counts: a function of the request and its answer alone, with no clock and no I/O, so that what a
 * log reader and a dashboard see is tested without running a handler (test/unit/access-log.test.ts).
 * httpHandler (lib/http.ts) measures the request, writes the line (lib/log.ts) and the metrics'
 * fields (lib/metrics.ts).
 */

/** The request as the log names it. */
export interface LoggedRequest {
  /** The method, route and path `{id}` as the event has them: undefined in an event that is not API Gateway's. */
  readonly method: string | undefined;
  readonly route: string | undefined;
  readonly pathId: string | undefined;
  /** Lambda's id of the invocation. */
  readonly requestId: string;
  /** The handler's own time, from the event's arrival to its answer. */
  readonly durationMs: number;
  /** The first request of this container: a cold start. */
  readonly coldStart: boolean;
}

/** How the request was answered: the handler's answer, and what it threw when it failed. */
export interface Answered extends Answer {
  readonly error?: unknown;
}

export interface AccessLogEntry {
  readonly level: 'info' | 'error';
  readonly fields: Record<string, unknown>;
  readonly metrics: readonly Metric[];
}

/** A logged id is kept short: the log is for finding requests, not for storing input. */
export const MAX_LOGGED_ID_LENGTH = 32;

/**
 * The request's line and its metrics. Never the body or the title. A 4xx is the client's: logged
 * at `info`, without the error. A 5xx is ours: at `error`, with the error's stack and causes.
 */
export function accessLog(request: LoggedRequest, answered: Answered): AccessLogEntry {
  const status = answered.response.statusCode;
  const failure = (status ?? 500) >= 500 ? answered.error : undefined;
  // The path's {id} as sent; for a POST, the id of the record it created (or replayed).
  const todoId = request.pathId ?? answered.todoId?.toString();
  return {
    level: failure === undefined ? 'info' : 'error',
    fields: {
      message: 'request',
      method: request.method,
      route: request.route,
      status,
      durationMs: request.durationMs,
      requestId: request.requestId,
      todoId: todoId?.slice(0, MAX_LOGGED_ID_LENGTH),
      error: errorFields(failure),
    },
    metrics: countedMetrics(request, status, answered.replayed === true, failure),
  };
}

/**
 * The metrics a request counts, in this order: a cold start; a replayed answer, which never counts
 * again as what it replays, or else a record created or deleted, by the method and status of its
 * answer; and the cause of a 503 from the store.
 */
function countedMetrics(
  request: LoggedRequest,
  status: number | undefined,
  replayed: boolean,
  failure: unknown,
): Metric[] {
  const metrics: Metric[] = [];
  if (request.coldStart) metrics.push('ColdStart');
  if (replayed) metrics.push('Replayed');
  else if (request.method === 'POST' && status === 201) metrics.push('Created');
  else if (request.method === 'DELETE' && status === 200) metrics.push('Deleted');
  if (failure instanceof Refusal && failure.metric !== undefined) metrics.push(failure.metric);
  return metrics;
}
