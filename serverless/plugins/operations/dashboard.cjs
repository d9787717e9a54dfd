// @ts-check
'use strict';

/**
 * The stage's CloudWatch dashboard: the alarms' states on top, then a row per part (the API, the
 * functions, the table on the DynamoDB store's stack, the service's own metrics), three graphs a
 * row. Each graph names the resources of the same stack, so a stage's dashboard shows that stage.
 */

const { COLD_START_METRICS, RECORD_METRICS, STORE_METRICS, TABLE_OPERATIONS, metric } = require('./metrics.cjs');

/** The three percentiles a latency graph shows. */
const PERCENTILES = ['p50', 'p90', 'p99'];

/**
 * @typedef {import('./stack.cjs').Stack} Stack
 * @typedef {import('./stack.cjs').Resource} Resource
 * @typedef {import('./metrics.cjs').Metric} Metric
 * @typedef {{ type: string, properties: Record<string, unknown> }} Widget
 * @typedef {{ title: string, widgets: Widget[] }} Section
 */

/**
 * @param {Stack} stack
 * @param {string[]} alarmIds the logical ids of the stack's alarms
 * @returns {Resource}
 */
function dashboard(stack, alarmIds) {
  /** @type {Section[]} */
  const sections = [
    alarmsSection(alarmIds),
    apiSection(stack),
    functionsSection(stack),
    ...(stack.table === undefined ? [] : [tableSection(stack.table)]),
    serviceSection(stack),
  ];
  return {
    Type: 'AWS::CloudWatch::Dashboard',
    Properties: {
      DashboardName: stack.prefix,
      DashboardBody: { 'Fn::Sub': JSON.stringify({ widgets: laidOut(sections) }) },
    },
  };
}

/**
 * @param {string[]} alarmIds
 * @returns {Section}
 */
function alarmsSection(alarmIds) {
  return {
    title: 'Alarms',
    widgets: [
      {
        type: 'alarm',
        properties: {
          title: 'Alarms (docs/operations.md says why each threshold)',
          alarms: alarmIds.map((id) => `\${${id}.Arn}`),
          sortBy: 'stateUpdatedTimestamp',
        },
      },
    ],
  };
}

/**
 * @param {Stack} stack
 * @returns {Section}
 */
function apiSection(stack) {
  const api = { ApiId: { Ref: stack.api } };
  return {
    title: 'API',
    widgets: [
      graph('Requests', [metric('AWS/ApiGateway', 'Count', api, 'Sum', 'Requests')]),
      graph(
        'Latency (ms)',
        PERCENTILES.map((stat) => metric('AWS/ApiGateway', 'Latency', api, stat, stat)),
      ),
      graph('4xx and 5xx answers', [
        metric('AWS/ApiGateway', '4xx', api, 'Sum', '4xx'),
        metric('AWS/ApiGateway', '5xx', api, 'Sum', '5xx'),
      ]),
    ],
  };
}

/**
 * @param {Stack} stack
 * @returns {Section}
 */
function functionsSection(stack) {
  /** @param {string} name @param {string} stat */
  function byFunction(name, stat) {
    return stack.functions.map((fn) =>
      metric('AWS/Lambda', name, { FunctionName: { Ref: fn.logicalId } }, stat, fn.name),
    );
  }
  return {
    title: 'Functions',
    widgets: [
      ...PERCENTILES.map((stat) => graph(`Duration ${stat} (ms)`, byFunction('Duration', stat))),
      graph('Errors', byFunction('Errors', 'Sum')),
      graph('Throttles', byFunction('Throttles', 'Sum')),
      graph('Concurrent executions', byFunction('ConcurrentExecutions', 'Maximum')),
    ],
  };
}

/**
 * @param {string} tableId the table's logical id
 * @returns {Section}
 */
function tableSection(tableId) {
  const table = { TableName: { Ref: tableId } };
  /** @param {string} name @param {string} stat @param {(operation: string) => string} label */
  function byOperation(name, stat, label) {
    return TABLE_OPERATIONS.map((operation) =>
      metric('AWS/DynamoDB', name, { ...table, Operation: operation }, stat, label(operation)),
    );
  }
  return {
    title: 'DynamoDB',
    widgets: [
      graph(
        'Latency of successful requests (ms)',
        byOperation('SuccessfulRequestLatency', 'Average', (operation) => operation),
      ),
      graph('Consumed capacity units', [
        metric('AWS/DynamoDB', 'ConsumedReadCapacityUnits', table, 'Sum', 'Read'),
        metric('AWS/DynamoDB', 'ConsumedWriteCapacityUnits', table, 'Sum', 'Write'),
      ]),
      graph('Throttles and system errors', [
        metric('AWS/DynamoDB', 'ReadThrottleEvents', table, 'Sum', 'Throttled reads'),
        metric('AWS/DynamoDB', 'WriteThrottleEvents', table, 'Sum', 'Throttled writes'),
        ...byOperation('SystemErrors', 'Sum', (operation) => `${operation} system errors`),
      ]),
    ],
  };
}

/**
 * @param {Stack} stack
 * @returns {Section}
 */
function serviceSection(stack) {
  /** @param {string[]} names */
  function own(names) {
    return names.map((name) => metric(stack.namespace, name, {}, 'Sum', name));
  }
  return {
    title: `The service's own metrics (${stack.namespace})`,
    widgets: [
      graph('Records created and deleted, replays', own(RECORD_METRICS)),
      graph('Cold starts', own(COLD_START_METRICS)),
      ...(stack.table === undefined ? [] : [graph("503s by cause (the store's)", own(STORE_METRICS))]),
    ],
  };
}

/**
 * A graph of these metrics. Dimension values that are resources become `${LogicalId}`, which the
 * dashboard's Fn::Sub turns into the deployed resource's name.
 * @param {string} title
 * @param {Metric[]} metrics
 * @returns {Widget}
 */
function graph(title, metrics) {
  return {
    type: 'metric',
    properties: {
      title,
      view: 'timeSeries',
      region: '${AWS::Region}',
      period: 60,
      metrics: metrics.map(({ namespace, name, dimensions, stat, label }) => [
        namespace,
        name,
        ...Object.entries(dimensions).flatMap(([key, value]) => [
          key,
          typeof value === 'string' ? value : `\${${value.Ref}}`,
        ]),
        { stat, ...(label === undefined ? {} : { label }) },
      ]),
    },
  };
}

/**
 * The sections' widgets placed on the dashboard's 24-column grid: each section's title in a row
 * of its own, then its widgets three to a row, or one alone across the row.
 * @param {Section[]} sections
 */
function laidOut(sections) {
  const placed = [];
  let y = 0;
  for (const { title, widgets } of sections) {
    placed.push({ type: 'text', x: 0, y, width: 24, height: 1, properties: { markdown: `## ${title}` } });
    y += 1;
    const alone = widgets.length === 1;
    widgets.forEach((widget, i) => {
      placed.push({
        ...widget,
        x: alone ? 0 : (i % 3) * 8,
        y: y + Math.floor(i / 3) * 6,
        width: alone ? 24 : 8,
        height: 6,
      });
    });
    y += Math.ceil(widgets.length / 3) * 6;
  }
  return placed;
}

module.exports = { dashboard };
