// @ts-check
'use strict';

/**
 * The stage's CloudWatch alarms: on the API, each function and, on the DynamoDB store's stack, the
 * table and the store's 503s, each with its threshold and the reason for it (docs/operations.md
 * lists them, and what they cost). Each notifies the alarm topic (alarm-topic.cjs).
 */

const { STORE_METRICS, TABLE_OPERATIONS, metric } = require('./metrics.cjs');

/**
 * Thresholds, and why (AlarmDescription repeats each reason: it is what the notification shows).
 * Counts are over 5 minutes unless a single event is already worth a look.
 */
/** 5xx answers in 5 minutes: a few are one container's bad moment, which a client's retry absorbs. */
const SERVER_ERRORS = 5;
/** The share of 4xx answers, over two 5-minute periods in a row, with at least this many requests. */
const CLIENT_ERROR_RATE = 0.1;
const CLIENT_ERROR_MIN_REQUESTS = 50;
/** p99 latency, as a share of the shortest function timeout. */
const LATENCY_SHARE_OF_TIMEOUT = 0.5;
/** The store's 503s in 5 minutes, as for SERVER_ERRORS: they are some of them. */
const STORE_UNAVAILABLE = 5;
/** DynamoDB's own errors in 5 minutes: the SDK retries each (lib/dynamodb/client.ts). */
const TABLE_SYSTEM_ERRORS = 5;

/**
 * @typedef {import('./stack.cjs').Stack} Stack
 * @typedef {import('./stack.cjs').Resource} Resource
 * @typedef {import('./metrics.cjs').Metric} Metric
 * @typedef {import('./metrics.cjs').DimensionValue} DimensionValue
 *
 * One alarm: a metric, or metric math over up to 10 of them; it is in ALARM when the value reaches
 * the threshold in `periods` periods in a row.
 * @typedef {{
 *   id: string,
 *   name: string,
 *   why: string,
 *   period: number,
 *   periods?: number,
 *   threshold: number,
 *   metric?: Metric,
 *   math?: { expression: string, label: string, metrics: Record<string, Metric> },
 * }} AlarmSpec
 */

/**
 * Every alarm of the stack, as resources by logical id.
 * @param {Stack} stack
 * @returns {Record<string, Resource>}
 */
function alarms(stack) {
  const specs = [...apiAlarms(stack), ...stack.functions.flatMap(functionAlarms)];
  if (stack.table !== undefined) specs.push(...tableAlarms(stack, stack.table));
  return Object.fromEntries(specs.map((spec) => [spec.id, alarm(stack, spec)]));
}

/**
 * @param {Stack} stack
 * @returns {AlarmSpec[]}
 */
function apiAlarms(stack) {
  const api = { ApiId: { Ref: stack.api } };
  const timeoutMs = stack.timeoutSeconds * 1000;
  return [
    {
      id: 'ApiServerErrorsAlarm',
      name: 'api-5xx',
      why:
        `${SERVER_ERRORS} or more 5xx answers in 5 minutes. The API answers 5xx only when it fails: 500 a bug, ` +
        '502 or 504 a function that crashed or timed out, 503 the store. One can be a single bad moment that ' +
        "the client's retry absorbs; several in 5 minutes are a pattern.",
      period: 300,
      threshold: SERVER_ERRORS,
      metric: metric('AWS/ApiGateway', '5xx', api, 'Sum'),
    },
    {
      id: 'ApiClientErrorRateAlarm',
      name: 'api-4xx-rate',
      why:
        `${CLIENT_ERROR_RATE * 100}% or more of the answers are 4xx, for 10 minutes, with at least ` +
        `${CLIENT_ERROR_MIN_REQUESTS} requests in each 5. Single 404s, 400s and 429s are normal; a tenth of all ` +
        "answers means a client release that sends what the API refuses, or callers held at the stage's throttle (429).",
      period: 300,
      periods: 2,
      threshold: CLIENT_ERROR_RATE,
      math: {
        expression: `IF(requests >= ${CLIENT_ERROR_MIN_REQUESTS}, FILL(clientErrors, 0) / requests, 0)`,
        label: 'Share of answers that are 4xx',
        metrics: {
          requests: metric('AWS/ApiGateway', 'Count', api, 'Sum'),
          clientErrors: metric('AWS/ApiGateway', '4xx', api, 'Sum'),
        },
      },
    },
    {
      id: 'ApiLatencyAlarm',
      name: 'api-p99-latency',
      why:
        `p99 latency at or above ${timeoutMs * LATENCY_SHARE_OF_TIMEOUT} ms, half the function timeout ` +
        `(${stack.timeoutSeconds} s), for 10 minutes. A request that reaches the timeout fails (503 at its ` +
        'deadline); warm requests take tens of milliseconds and cold starts under a second, so the slowest ' +
        'requests are then halfway to failing.',
      period: 300,
      periods: 2,
      threshold: timeoutMs * LATENCY_SHARE_OF_TIMEOUT,
      metric: metric('AWS/ApiGateway', 'Latency', api, 'p99'),
    },
  ];
}

/**
 * @param {Stack['functions'][number]} fn
 * @returns {AlarmSpec[]}
 */
function functionAlarms({ name, logicalId, short }) {
  const dimensions = { FunctionName: { Ref: logicalId } };
  return [
    {
      id: `${short}ErrorsAlarm`,
      name: `${name}-errors`,
      why:
        `${name} failed an invocation. The handlers answer every error they catch (lib/http.ts), so a ` +
        'Lambda error is a crash, an out-of-memory, a timeout or a failed start: each is worth a look.',
      period: 60,
      threshold: 1,
      metric: metric('AWS/Lambda', 'Errors', dimensions, 'Sum'),
    },
    {
      id: `${short}ThrottlesAlarm`,
      name: `${name}-throttles`,
      why:
        `Lambda refused to run ${name}: its reserved concurrency (reservedConcurrency) or the account's ` +
        'concurrency was used up, and a caller got an error instead of an answer.',
      period: 60,
      threshold: 1,
      metric: metric('AWS/Lambda', 'Throttles', dimensions, 'Sum'),
    },
  ];
}

/**
 * The DynamoDB store's alarms: the table's and the store's 503s.
 * @param {Stack} stack
 * @param {string} tableId the table's logical id
 * @returns {AlarmSpec[]}
 */
function tableAlarms(stack, tableId) {
  const table = { TableName: { Ref: tableId } };
  const operations = Object.fromEntries(
    TABLE_OPERATIONS.map((operation) => [
      lowerFirst(operation),
      metric('AWS/DynamoDB', 'SystemErrors', { ...table, Operation: operation }, 'Sum'),
    ]),
  );
  const storeErrors = Object.fromEntries(
    STORE_METRICS.map((name) => [lowerFirst(name), metric(stack.namespace, name, {}, 'Sum')]),
  );
  return [
    {
      id: 'TableThrottlesAlarm',
      name: 'dynamodb-throttles',
      why:
        "DynamoDB throttled a read or a write. An on-demand table throttles only past a partition's limits " +
        '(every record shares one partition key: 3,000 reads and 1,000 writes a second), past twice its ' +
        "previous peak, or at the account's table quota. The SDK retries, so callers may not see it yet: " +
        'this comes before the 503s.',
      period: 60,
      threshold: 1,
      math: {
        expression: sumOf(['reads', 'writes']),
        label: 'Throttled reads and writes',
        metrics: {
          reads: metric('AWS/DynamoDB', 'ReadThrottleEvents', table, 'Sum'),
          writes: metric('AWS/DynamoDB', 'WriteThrottleEvents', table, 'Sum'),
        },
      },
    },
    {
      id: 'TableSystemErrorsAlarm',
      name: 'dynamodb-system-errors',
      why:
        `${TABLE_SYSTEM_ERRORS} or more DynamoDB internal errors (HTTP 500) in 5 minutes, over the operations ` +
        "the store sends. The SDK retries each, so a few are invisible; several are a problem on AWS's side " +
        '(see the AWS Health Dashboard) that the 503s will follow.',
      period: 300,
      threshold: TABLE_SYSTEM_ERRORS,
      math: { expression: sumOf(Object.keys(operations)), label: 'DynamoDB system errors', metrics: operations },
    },
    {
      id: 'StoreUnavailableAlarm',
      name: 'store-503s',
      why:
        `${STORE_UNAVAILABLE} or more 503s from the store in 5 minutes: DynamoDB did not answer before the ` +
        "request's deadline (StoreTimeouts) or failed (StoreErrors); the dashboard shows which. These are " +
        "in the API's 5xx too: this alarm says the store is the cause.",
      period: 300,
      threshold: STORE_UNAVAILABLE,
      math: { expression: sumOf(Object.keys(storeErrors)), label: '503s from the store', metrics: storeErrors },
    },
  ];
}

/**
 * A metric's id in an alarm's math: ids start with a lower-case letter.
 * @param {string} name
 */
function lowerFirst(name) {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

/**
 * `FILL(a, 0) + FILL(b, 0) + …`: a series with no data point at a time counts 0 there, so one quiet
 * metric does not blank the sum.
 * @param {string[]} ids
 */
function sumOf(ids) {
  return ids.map((id) => `FILL(${id}, 0)`).join(' + ');
}

/**
 * @param {Record<string, DimensionValue>} dimensions
 * @returns {{ Name: string, Value: unknown }[]}
 */
function alarmDimensions(dimensions) {
  return Object.entries(dimensions).map(([Name, Value]) => ({ Name, Value }));
}

/**
 * @param {Stack} stack
 * @param {AlarmSpec} spec
 * @returns {Resource}
 */
function alarm(stack, spec) {
  const periods = spec.periods ?? 1;
  const common = {
    AlarmName: `${stack.prefix}-${spec.name}`,
    AlarmDescription: `${spec.why} (docs/operations.md)`,
    // OK too: the owner learns that it is over without opening the console.
    AlarmActions: [{ Ref: 'AlarmTopic' }],
    OKActions: [{ Ref: 'AlarmTopic' }],
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    Threshold: spec.threshold,
    EvaluationPeriods: periods,
    DatapointsToAlarm: periods,
    // No traffic, no data: an idle stage stays OK.
    TreatMissingData: 'notBreaching',
  };
  if (spec.metric !== undefined) {
    const { namespace, name, dimensions, stat } = spec.metric;
    return {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: {
        ...common,
        Namespace: namespace,
        MetricName: name,
        Dimensions: alarmDimensions(dimensions),
        Period: spec.period,
        ...(/^p\d/.test(stat) ? { ExtendedStatistic: stat } : { Statistic: stat }),
      },
    };
  }
  const math = spec.math;
  if (math === undefined) throw new Error(`${spec.id}: neither a metric nor math`);
  return {
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      ...common,
      Metrics: [
        ...Object.entries(math.metrics).map(([Id, { namespace, name, dimensions, stat }]) => ({
          Id,
          MetricStat: {
            Metric: { Namespace: namespace, MetricName: name, Dimensions: alarmDimensions(dimensions) },
            Period: spec.period,
            Stat: stat,
          },
          ReturnData: false,
        })),
        { Id: 'result', Expression: math.expression, Label: math.label, ReturnData: true },
      ],
    },
  };
}

module.exports = { alarms };
