/**
 * The service's own metrics, in CloudWatch's Embedded Metric Format: fields of the request's log
 * line (lib/http.ts) that CloudWatch Logs turns into metrics as the line arrives, with no agent,
 * no library in the bundle and no call to CloudWatch.
 *
 * Each is a count in the stage's namespace (TODO_METRICS_NAMESPACE, `todo-api/<stage>` from
 * serverless.yml), with no dimensions: six metrics a stage, billed only for the hours they get
 * data, so an idle stage costs nothing. A line carries the `_aws` block only when it has a metric.
 */
export type Metric =
  /** A POST that created a record (not a replay). */
  | 'Created'
  /** A DELETE that deleted one (not a replay). */
  | 'Deleted'
  /** An answer replayed for a retried Idempotency-Key. */
  | 'Replayed'
  /** The first request of a container: a cold start. */
  | 'ColdStart'
  /** A 503 because the store did not answer before the deadline. */
  | 'StoreTimeouts'
  /** A 503 because the store failed (unreachable, throttled, erring). */
  | 'StoreErrors';

/** The namespace when no stage sets one: local runs. */
export const DEFAULT_NAMESPACE = 'todo-api/local';

let namespace: string | undefined;

/**
 * The fields that make a log line an EMF document counting one of each of these metrics; none
 * without metrics. (A unit is optional in EMF: these are counts, and dashboards say so.)
 */
export function metricFields(metrics: readonly (Metric | undefined | false)[]): Record<string, unknown> {
  const names = metrics.filter((name): name is Metric => !!name);
  if (names.length === 0) return {};
  return {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [
        {
          // Read at the first metric, not at load: a process.env lookup costs a cold start too.
          Namespace: (namespace ??= process.env.TODO_METRICS_NAMESPACE ?? DEFAULT_NAMESPACE),
          Dimensions: [[]],
          Metrics: names.map((Name) => ({ Name })),
        },
      ],
    },
    ...Object.fromEntries(names.map((name) => [name, 1])),
  };
}
