// @ts-check
'use strict';

/**
 * What tells the owner of a deployed stage that it is failing and how it is doing: at package time
 * (so `serverless deploy` too), this plugin adds to the stack
 * - CloudWatch alarms on the API, each function and, on the DynamoDB store's stack, the table and
 *   the store's 503s, each with its threshold and the reason for it below (docs/operations.md
 *   lists them, and what they cost);
 * - the SNS topic they notify, and an email subscription to it when an address is given;
 * - one CloudWatch dashboard for the stage;
 * each naming the resources of the same stack by Ref, so a stage's alarms watch that stage only.
 *
 * It reads `custom.operations` in serverless.yml: `alarms` (`on`, or `off` for none of the above)
 * and `alarmEmail` (an address, or empty for no subscription).
 */

const { problemWith } = require('./stage-params.cjs');

/** The table's logical id (serverless.yml, custom.stores.dynamodb): only that store's stack has it. */
const TABLE = 'TodosTable';

/**
 * The DynamoDB operations the store sends (lib/dynamodb-*.ts): SystemErrors and
 * SuccessfulRequestLatency exist only per operation. test/system/operations.test.ts holds this
 * list to lib/.
 */
const TABLE_OPERATIONS = ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'TransactWriteItems'];

/**
 * The service's own metrics (lib/metrics.ts, `Metric`), in the namespace the functions write them
 * to (TODO_METRICS_NAMESPACE). test/system/operations.test.ts holds these lists to that type.
 */
const RECORD_METRICS = ['Created', 'Deleted', 'Replayed'];
const COLD_START_METRICS = ['ColdStart'];
/** Only the DynamoDB store answers 503 (lib/errors.ts, StoreUnavailable); the memory store cannot. */
const STORE_METRICS = ['StoreTimeouts', 'StoreErrors'];

/** Lambda's timeout when neither the function nor the provider sets one. */
const FRAMEWORK_DEFAULT_TIMEOUT_S = 6;

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
/** DynamoDB's own errors in 5 minutes: the SDK retries each (lib/dynamodb-client.ts). */
const TABLE_SYSTEM_ERRORS = 5;

/**
 * @typedef {{ Type: string, Properties: Record<string, unknown>, [key: string]: unknown }} Resource
 * @typedef {{ Resources: Record<string, Resource>, Outputs?: Record<string, unknown> }} Template
 * @typedef {{
 *   service: {
 *     service: string,
 *     custom: { operations?: { alarms?: unknown, alarmEmail?: unknown } },
 *     provider: { timeout?: number, environment?: Record<string, unknown>, compiledCloudFormationTemplate: Template },
 *     getAllFunctions(): string[],
 *     getFunction(name: string): { timeout?: number },
 *   },
 *   getProvider(name: 'aws'): {
 *     getStage(): string,
 *     naming: {
 *       getLambdaLogicalId(name: string): string,
 *       getNormalizedFunctionName(name: string): string,
 *       getHttpApiLogicalId(): string,
 *     },
 *   },
 *   classes: { Error: new (message: string, code?: string) => Error },
 * }} Serverless
 *
 * A dimension's value: a resource of the stack (by logical id), or a literal.
 * @typedef {{ Ref: string } | string} DimensionValue
 * @typedef {{
 *   namespace: string,
 *   name: string,
 *   dimensions: Record<string, DimensionValue>,
 *   stat: string,
 *   label?: string,
 * }} Metric
 *
 * What the alarms and the dashboard are built from: the stack's resources and settings.
 * @typedef {{
 *   prefix: string,
 *   api: string,
 *   functions: { name: string, logicalId: string, short: string }[],
 *   table: string | undefined,
 *   namespace: string,
 *   timeoutSeconds: number,
 * }} Stack
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

class OperationsPlugin {
  /** @param {Serverless} serverless */
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      // After resources.Resources are merged in: only then does the template hold the table.
      'after:aws:package:finalize:mergeCustomProviderResources': () => {
        this.addOperations();
      },
    };
  }

  addOperations() {
    const { alarms: wanted, alarmEmail } = this.settings();
    if (wanted === 'off') return;
    const template = this.serverless.service.provider.compiledCloudFormationTemplate;
    const stack = this.stack(template);
    const alarms = Object.fromEntries(alarmSpecs(stack).map((spec) => [spec.id, alarm(stack, spec)]));
    const added = {
      ...topic(stack, alarmEmail, Object.keys(alarms)),
      ...alarms,
      Dashboard: dashboard(stack, Object.keys(alarms)),
    };
    for (const id of Object.keys(added)) {
      if (id in template.Resources) {
        throw new this.serverless.classes.Error(`scripts/operations.cjs: the stack has a ${id} already`);
      }
    }
    Object.assign(template.Resources, added);
    template.Outputs = {
      ...template.Outputs,
      AlarmTopicArn: { Description: 'The SNS topic the alarms notify', Value: { Ref: 'AlarmTopic' } },
      DashboardUrl: {
        Description: 'The CloudWatch dashboard of the stage',
        Value: {
          'Fn::Sub':
            'https://console.aws.amazon.com/cloudwatch/home?region=${AWS::Region}#dashboards/dashboard/${Dashboard}',
        },
      },
    };
  }

  /**
   * `custom.operations`, as resolved: scripts/serverless-local.cjs checked what it could see before
   * the framework resolved anything, and a value serverless.yml builds from variables is checked here.
   */
  settings() {
    const { alarms = 'on', alarmEmail = '' } = this.serverless.service.custom.operations ?? {};
    const problem =
      problemWith('alarms', alarms) ?? (alarmEmail === '' ? undefined : problemWith('alarmEmail', alarmEmail));
    if (problem !== undefined) throw new this.serverless.classes.Error(problem, 'TODO_INVALID_PARAM');
    return { alarms: String(alarms), alarmEmail: String(alarmEmail) };
  }

  /** @param {Template} template */
  stack(template) {
    const { service } = this.serverless;
    const provider = this.serverless.getProvider('aws');
    const api = provider.naming.getHttpApiLogicalId();
    const namespace = service.provider.environment?.TODO_METRICS_NAMESPACE;
    if (!(api in template.Resources) || typeof namespace !== 'string') {
      throw new this.serverless.classes.Error(
        'scripts/operations.cjs needs an HTTP API and provider.environment.TODO_METRICS_NAMESPACE',
      );
    }
    const names = service.getAllFunctions();
    /** @type {Stack} */
    const stack = {
      prefix: `${service.service}-${provider.getStage()}`,
      api,
      functions: names.map((name) => ({
        name,
        logicalId: provider.naming.getLambdaLogicalId(name),
        short: provider.naming.getNormalizedFunctionName(name),
      })),
      table: TABLE in template.Resources ? TABLE : undefined,
      namespace,
      // The alarm must fire before the first function's requests are cut off.
      timeoutSeconds: Math.min(
        ...names.map(
          (name) => service.getFunction(name).timeout ?? service.provider.timeout ?? FRAMEWORK_DEFAULT_TIMEOUT_S,
        ),
      ),
    };
    return stack;
  }
}

/**
 * The topic, its policy and the subscription. Not encrypted: CloudWatch cannot publish to a topic
 * under the AWS managed key (aws/sns), and a customer managed key costs $1 a month, which an idle
 * stage would then cost. What the topic carries is an alarm's name, state, threshold and reason:
 * nothing of a request, a record or a caller. (No Control Tower rule that cfn-guard runs here
 * covers SNS, so cfn-guard-exceptions.yaml has no entry for it; docs/operations.md says why.)
 * @param {Stack} stack
 * @param {string} email
 * @param {string[]} alarmIds the logical ids of the alarms that notify it
 * @returns {Record<string, Resource>}
 */
function topic(stack, email, alarmIds) {
  return {
    AlarmTopic: {
      Type: 'AWS::SNS::Topic',
      Properties: { TopicName: `${stack.prefix}-alarms`, DisplayName: `${stack.prefix} alarms` },
    },
    // Only this stage's alarms may publish (the default policy lets the whole account).
    AlarmTopicPolicy: {
      Type: 'AWS::SNS::TopicPolicy',
      Properties: {
        Topics: [{ Ref: 'AlarmTopic' }],
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Sid: 'ThisStagesAlarms',
              Effect: 'Allow',
              Principal: { Service: 'cloudwatch.amazonaws.com' },
              Action: 'sns:Publish',
              Resource: { Ref: 'AlarmTopic' },
              // Each alarm by its ARN: a name pattern would let the alarms of a stage whose name
              // starts with this one's (prod, prod-eu) publish here too.
              Condition: {
                ArnEquals: { 'aws:SourceArn': alarmIds.map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] })) },
                StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
              },
            },
          ],
        },
      },
    },
    // SNS mails the address a confirmation link first; nothing is delivered until it is followed.
    ...(email === ''
      ? {}
      : {
          AlarmEmailSubscription: {
            Type: 'AWS::SNS::Subscription',
            Properties: { TopicArn: { Ref: 'AlarmTopic' }, Protocol: 'email', Endpoint: email },
          },
        }),
  };
}

/**
 * @param {string} namespace
 * @param {string} name
 * @param {Record<string, DimensionValue>} dimensions
 * @param {string} stat
 * @param {string} [label]
 * @returns {Metric}
 */
const metric = (namespace, name, dimensions, stat, label) => ({
  namespace,
  name,
  dimensions,
  stat,
  ...(label === undefined ? {} : { label }),
});

/**
 * `FILL(a, 0) + FILL(b, 0) + …`: a series with no data point at a time counts 0 there, so one quiet
 * metric does not blank the sum.
 * @param {string[]} ids
 */
const sumOf = (ids) => ids.map((id) => `FILL(${id}, 0)`).join(' + ');

/**
 * Every alarm of the stack.
 * @param {Stack} stack
 * @returns {AlarmSpec[]}
 */
function alarmSpecs(stack) {
  const api = { ApiId: { Ref: stack.api } };
  const timeoutMs = stack.timeoutSeconds * 1000;
  /** @type {AlarmSpec[]} */
  const specs = [
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
    ...stack.functions.flatMap(({ name, logicalId, short }) => {
      const fn = { FunctionName: { Ref: logicalId } };
      /** @type {AlarmSpec[]} */
      const perFunction = [
        {
          id: `${short}ErrorsAlarm`,
          name: `${name}-errors`,
          why:
            `${name} failed an invocation. The handlers answer every error they catch (lib/http.ts), so a ` +
            'Lambda error is a crash, an out-of-memory, a timeout or a failed start: each is worth a look.',
          period: 60,
          threshold: 1,
          metric: metric('AWS/Lambda', 'Errors', fn, 'Sum'),
        },
        {
          id: `${short}ThrottlesAlarm`,
          name: `${name}-throttles`,
          why:
            `Lambda refused to run ${name}: its reserved concurrency (reservedConcurrency) or the account's ` +
            'concurrency was used up, and a caller got an error instead of an answer.',
          period: 60,
          threshold: 1,
          metric: metric('AWS/Lambda', 'Throttles', fn, 'Sum'),
        },
      ];
      return perFunction;
    }),
  ];
  if (stack.table === undefined) return specs;
  const table = { TableName: { Ref: stack.table } };
  const operations = Object.fromEntries(
    TABLE_OPERATIONS.map((operation) => [
      operation.charAt(0).toLowerCase() + operation.slice(1),
      metric('AWS/DynamoDB', 'SystemErrors', { ...table, Operation: operation }, 'Sum'),
    ]),
  );
  const service = Object.fromEntries(
    STORE_METRICS.map((name) => [
      name.charAt(0).toLowerCase() + name.slice(1),
      metric(stack.namespace, name, {}, 'Sum'),
    ]),
  );
  specs.push(
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
      math: { expression: sumOf(Object.keys(service)), label: '503s from the store', metrics: service },
    },
  );
  return specs;
}

/**
 * @param {Record<string, DimensionValue>} dimensions
 * @returns {{ Name: string, Value: unknown }[]}
 */
const alarmDimensions = (dimensions) => Object.entries(dimensions).map(([Name, Value]) => ({ Name, Value }));

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

/**
 * A graph of these metrics. Dimension values that are resources become `${LogicalId}`, which the
 * dashboard's Fn::Sub turns into the deployed resource's name.
 * @param {string} title
 * @param {Metric[]} metrics
 * @param {{ stat?: string, period?: number }} [options]
 */
function graph(title, metrics, options = {}) {
  return {
    type: 'metric',
    properties: {
      title,
      view: 'timeSeries',
      region: '${AWS::Region}',
      period: options.period ?? 60,
      ...(options.stat === undefined ? {} : { stat: options.stat }),
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
 * The stage's dashboard: a row per part, three graphs a row, and the alarms' states on top.
 * @param {Stack} stack
 * @param {string[]} alarmIds
 * @returns {Resource}
 */
function dashboard(stack, alarmIds) {
  const api = { ApiId: { Ref: stack.api } };
  const byFunction = (/** @type {string} */ name, /** @type {string} */ stat) =>
    stack.functions.map((fn) => metric('AWS/Lambda', name, { FunctionName: { Ref: fn.logicalId } }, stat, fn.name));
  const table = stack.table === undefined ? undefined : { TableName: { Ref: stack.table } };
  const own = (/** @type {string[]} */ names) => names.map((name) => metric(stack.namespace, name, {}, 'Sum', name));
  /** @type {[string, object[]][]} */
  const sections = [
    [
      'Alarms',
      [
        {
          type: 'alarm',
          properties: {
            title: 'Alarms (docs/operations.md says why each threshold)',
            alarms: alarmIds.map((id) => `\${${id}.Arn}`),
            sortBy: 'stateUpdatedTimestamp',
          },
        },
      ],
    ],
    [
      'API',
      [
        graph('Requests', [metric('AWS/ApiGateway', 'Count', api, 'Sum', 'Requests')]),
        graph(
          'Latency (ms)',
          ['p50', 'p90', 'p99'].map((stat) => metric('AWS/ApiGateway', 'Latency', api, stat, stat)),
        ),
        graph('4xx and 5xx answers', [
          metric('AWS/ApiGateway', '4xx', api, 'Sum', '4xx'),
          metric('AWS/ApiGateway', '5xx', api, 'Sum', '5xx'),
        ]),
      ],
    ],
    [
      'Functions',
      [
        ...['p50', 'p90', 'p99'].map((stat) => graph(`Duration ${stat} (ms)`, byFunction('Duration', stat))),
        graph('Errors', byFunction('Errors', 'Sum')),
        graph('Throttles', byFunction('Throttles', 'Sum')),
        graph('Concurrent executions', byFunction('ConcurrentExecutions', 'Maximum')),
      ],
    ],
    ...(table === undefined
      ? []
      : /** @type {[string, object[]][]} */ ([
          [
            'DynamoDB',
            [
              graph(
                'Latency of successful requests (ms)',
                TABLE_OPERATIONS.map((operation) =>
                  metric(
                    'AWS/DynamoDB',
                    'SuccessfulRequestLatency',
                    { ...table, Operation: operation },
                    'Average',
                    operation,
                  ),
                ),
              ),
              graph('Consumed capacity units', [
                metric('AWS/DynamoDB', 'ConsumedReadCapacityUnits', table, 'Sum', 'Read'),
                metric('AWS/DynamoDB', 'ConsumedWriteCapacityUnits', table, 'Sum', 'Write'),
              ]),
              graph('Throttles and system errors', [
                metric('AWS/DynamoDB', 'ReadThrottleEvents', table, 'Sum', 'Throttled reads'),
                metric('AWS/DynamoDB', 'WriteThrottleEvents', table, 'Sum', 'Throttled writes'),
                ...TABLE_OPERATIONS.map((operation) =>
                  metric(
                    'AWS/DynamoDB',
                    'SystemErrors',
                    { ...table, Operation: operation },
                    'Sum',
                    `${operation} system errors`,
                  ),
                ),
              ]),
            ],
          ],
        ])),
    [
      `The service's own metrics (${stack.namespace})`,
      [
        graph('Records created and deleted, replays', own(RECORD_METRICS)),
        graph('Cold starts', own(COLD_START_METRICS)),
        ...(table === undefined ? [] : [graph("503s by cause (the store's)", own(STORE_METRICS))]),
      ],
    ],
  ];
  const widgets = [];
  let y = 0;
  for (const [title, graphs] of sections) {
    widgets.push({ type: 'text', x: 0, y, width: 24, height: 1, properties: { markdown: `## ${title}` } });
    y += 1;
    graphs.forEach((widget, i) => {
      const alone = graphs.length === 1;
      widgets.push({
        ...widget,
        x: alone ? 0 : (i % 3) * 8,
        y: y + Math.floor(i / 3) * 6,
        width: alone ? 24 : 8,
        height: 6,
      });
    });
    y += Math.ceil(graphs.length / 3) * 6;
  }
  return {
    Type: 'AWS::CloudWatch::Dashboard',
    Properties: {
      DashboardName: stack.prefix,
      DashboardBody: { 'Fn::Sub': JSON.stringify({ widgets }) },
    },
  };
}

module.exports = OperationsPlugin;
module.exports.TABLE_OPERATIONS = TABLE_OPERATIONS;
module.exports.SERVICE_METRICS = [...RECORD_METRICS, ...COLD_START_METRICS, ...STORE_METRICS];
