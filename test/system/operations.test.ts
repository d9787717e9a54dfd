import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import { servicePackage, type Resource, type Template } from '../../harness/package';
import { PROJECT_ROOT } from '../../harness/project';
import { metricFields } from '../../lib/metrics';
import operationMetrics from '../../serverless/plugins/operations/metrics.cjs';
import { metricProblems, metricUses, type OwnMetrics } from '../support/cloudwatch-metrics';

/**
 * Operations on AWS (serverless/plugins/operations.cjs, docs/operations.md): the alarms, their topic and the
 * dashboard a packaged stage holds, checked against the stack they are in: every metric they name
 * exists, with its dimensions, and every resource they name is one of the same stack. (The
 * commands that read a deployed stage, `npm run logs` and `npm run info`: aws-commands.test.ts.)
 */

/** One `serverless package` takes about 5 s idle; this allows for a busy machine. */
const PACKAGE_WITHIN_MS = 60_000;

const STACKS = {
  // A bare `serverless package`, as a bare `serverless deploy` builds it.
  dynamodb: [],
  memory: ['store=memory'],
  alarmsOff: ['alarms=off'],
  withEmail: ['alarmEmail=a@example.com'],
  capsOff: ['concurrencyCaps=off'],
} as const;
type Stack = keyof typeof STACKS;

const templates: Partial<Record<Stack, Template>> = {};

beforeAll(async () => {
  // One after the other: two packages at once would only share the 2 cores.
  for (const stack of Object.keys(STACKS) as Stack[]) {
    templates[stack] = (await servicePackage([...STACKS[stack]])).template;
  }
}, 5 * PACKAGE_WITHIN_MS);

function template(stack: Stack): Template {
  const found = templates[stack];
  if (found === undefined) throw new Error(`no template for ${stack}`);
  return found;
}

const ofType = (from: Template, type: string): [string, Resource][] =>
  Object.entries(from.Resources).filter(([, resource]) => resource.Type === type);
const alarms = (from: Template) => ofType(from, 'AWS::CloudWatch::Alarm');

/** The names of lib/metrics.ts's `Metric` union, as the source declares them. */
function serviceMetricNames(): string[] {
  const file = join(PROJECT_ROOT, 'lib/metrics.ts');
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const alias = source.statements.find(
    (statement): statement is ts.TypeAliasDeclaration =>
      ts.isTypeAliasDeclaration(statement) && statement.name.text === 'Metric',
  );
  if (alias === undefined || !ts.isUnionTypeNode(alias.type)) throw new Error('lib/metrics.ts: Metric is not a union');
  return alias.type.types.map((member) => {
    if (!ts.isLiteralTypeNode(member) || !ts.isStringLiteral(member.literal)) {
      throw new Error('lib/metrics.ts: Metric is not a union of string literals');
    }
    return member.literal.text;
  });
}

/** The DynamoDB operations the store sends: each `send('<Operation>', …)` under lib/. */
function operationsSent(): string[] {
  const lib = join(PROJECT_ROOT, 'lib');
  const sent = readdirSync(lib, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) =>
      [...readFileSync(join(lib, file), 'utf8').matchAll(/call\(\s*'(\w+)'/g)].map(([, name = '']) => name),
    );
  return [...new Set(sent)].sort();
}

/** The namespace the stack's functions write their metrics to, and the metrics lib/ writes. */
function ownMetrics(from: Template): OwnMetrics {
  const namespaces = new Set(
    ofType(from, 'AWS::Lambda::Function').map(
      ([, fn]) => (fn.Properties.Environment as { Variables: Record<string, string> }).Variables.TODO_METRICS_NAMESPACE,
    ),
  );
  const [namespace] = [...namespaces];
  if (namespaces.size !== 1 || namespace === undefined) throw new Error('the functions disagree on a namespace');
  return { namespace, names: serviceMetricNames() };
}

describe('a default package (the DynamoDB store)', () => {
  it('holds the SNS topic, the alarms and the dashboard, and no email subscription', () => {
    const types = Object.values(template('dynamodb').Resources).map((resource) => resource.Type);
    expect(types.filter((type) => type.startsWith('AWS::SNS::')).sort()).toEqual([
      'AWS::SNS::Topic',
      'AWS::SNS::TopicPolicy',
    ]);
    expect(types.filter((type) => type === 'AWS::CloudWatch::Dashboard')).toHaveLength(1);
    expect(alarms(template('dynamodb')).map(([, alarm]) => alarm.Properties.AlarmName)).toEqual(
      expect.arrayContaining([
        'todo-api-dev-api-5xx',
        'todo-api-dev-api-4xx-rate',
        'todo-api-dev-api-p99-latency',
        'todo-api-dev-createTodo-errors',
        'todo-api-dev-createTodo-throttles',
        'todo-api-dev-dynamodb-throttles',
        'todo-api-dev-dynamodb-system-errors',
        'todo-api-dev-store-503s',
      ]),
    );
    // Three on the API, two per function, three on the store.
    expect(alarms(template('dynamodb'))).toHaveLength(3 + 2 * 5 + 3);
  });

  it('says where the topic and the dashboard are, for `npm run info`', () => {
    expect(template('dynamodb').Outputs).toMatchObject({
      AlarmTopicArn: { Value: { Ref: 'AlarmTopic' } },
      DashboardUrl: { Value: { 'Fn::Sub': expect.stringContaining('#dashboards/dashboard/${Dashboard}') } },
    });
  });

  it('lets only this stage’s alarms publish to the topic', () => {
    const [[, policy] = ['', undefined]] = ofType(template('dynamodb'), 'AWS::SNS::TopicPolicy');
    // By each alarm's ARN: a name pattern would admit the alarms of a stage named with this one's prefix.
    const arns = alarms(template('dynamodb')).map(([id]) => ({ 'Fn::GetAtt': [id, 'Arn'] }));
    expect(arns).toHaveLength(16);
    expect(policy?.Properties).toMatchObject({
      Topics: [{ Ref: 'AlarmTopic' }],
      PolicyDocument: {
        Statement: [
          {
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: {
              ArnEquals: { 'aws:SourceArn': arns },
            },
          },
        ],
      },
    });
  });

  it('alarms on p99 latency at half the functions’ timeout', () => {
    const timeouts = ofType(template('dynamodb'), 'AWS::Lambda::Function').map(([, fn]) => fn.Properties.Timeout);
    expect(new Set(timeouts)).toEqual(new Set([10]));
    expect(template('dynamodb').Resources.ApiLatencyAlarm?.Properties).toMatchObject({
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Threshold: 5_000,
    });
  });

  it('reads DynamoDB’s per-operation metrics for exactly the operations the store sends', () => {
    const named = metricUses(template('dynamodb')).uses.flatMap((use) =>
      typeof use.dimensions.Operation === 'string' ? [use.dimensions.Operation] : [],
    );
    expect([...new Set(named)].sort()).toEqual(operationsSent());
    expect([...operationMetrics.TABLE_OPERATIONS].sort()).toEqual(operationsSent());
  });

  it('shows every one of the service’s own metrics, and only those, in its namespace', () => {
    expect([...operationMetrics.SERVICE_METRICS].sort()).toEqual(serviceMetricNames().sort());
    const own = ownMetrics(template('dynamodb'));
    const shown = metricUses(template('dynamodb')).uses.filter(
      (use) => use.namespace === own.namespace && use.where.startsWith('Dashboard'),
    );
    expect([...new Set(shown.map((use) => use.name))].sort()).toEqual([...own.names].sort());
  });
});

describe.each(['dynamodb', 'memory', 'withEmail'] as const)('the %s stack', (stack) => {
  it('names, in every alarm and every widget, a metric that exists and a resource of the same stack', () => {
    const { uses } = metricUses(template(stack));
    expect(uses.length).toBeGreaterThan(0);
    expect(metricProblems(template(stack), ownMetrics(template(stack)))).toEqual([]);
  });

  it('has every alarm notify the topic, going into ALARM and back to OK, and stay OK without traffic', () => {
    for (const [id, alarm] of alarms(template(stack))) {
      expect({ id, ...alarm.Properties }).toMatchObject({
        id,
        AlarmName: expect.stringMatching(/^todo-api-dev-/),
        AlarmDescription: expect.stringMatching(/^\S.{40,}/),
        AlarmActions: [{ Ref: 'AlarmTopic' }],
        OKActions: [{ Ref: 'AlarmTopic' }],
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it('shows the state of every alarm on the dashboard', () => {
    const [[, dashboard] = ['', undefined]] = ofType(template(stack), 'AWS::CloudWatch::Dashboard');
    const body = (dashboard?.Properties.DashboardBody as { 'Fn::Sub': string })['Fn::Sub'];
    const shown = [...body.matchAll(/\$\{(\w+)\.Arn\}/g)].map(([, id]) => id).sort();
    expect(shown).toEqual(
      alarms(template(stack))
        .map(([id]) => id)
        .sort(),
    );
  });
});

describe('the memory store’s stack', () => {
  it('has no DynamoDB alarm or widget, and no alarm on the store’s 503s, which that store never answers', () => {
    const { uses } = metricUses(template('memory'));
    expect(uses.filter((use) => use.namespace === 'AWS/DynamoDB' || 'TableName' in use.dimensions)).toEqual([]);
    expect(uses.map((use) => use.name)).not.toContain('StoreErrors');
    expect(alarms(template('memory'))).toHaveLength(3 + 2 * 5);
  });
});

describe('stage parameters', () => {
  it('alarms=off: no topic, subscription, alarm or dashboard', () => {
    const types = Object.values(template('alarmsOff').Resources).map((resource) => resource.Type);
    expect(types.filter((type) => type.startsWith('AWS::SNS::') || type.startsWith('AWS::CloudWatch::'))).toEqual([]);
    expect(Object.keys(template('alarmsOff').Outputs ?? {})).not.toContain('DashboardUrl');
  });

  it('concurrencyCaps=off: no function’s concurrency reserved, where a default package reserves each one’s', () => {
    const caps = (stack: Stack) =>
      ofType(template(stack), 'AWS::Lambda::Function').map(([, fn]) => fn.Properties.ReservedConcurrentExecutions);
    expect(caps('dynamodb')).toHaveLength(5);
    expect(caps('dynamodb').every((cap) => Number(cap) > 0)).toBe(true);
    expect(caps('capsOff')).toEqual([undefined, undefined, undefined, undefined, undefined]);
    // The rest of the stack is the default's: its alarms too.
    expect(alarms(template('capsOff'))).toHaveLength(alarms(template('dynamodb')).length);
  });

  it('alarmEmail=a@example.com: subscribes the address to the topic', () => {
    expect(ofType(template('withEmail'), 'AWS::SNS::Subscription')).toEqual([
      [
        'AlarmEmailSubscription',
        {
          Type: 'AWS::SNS::Subscription',
          Properties: { TopicArn: { Ref: 'AlarmTopic' }, Protocol: 'email', Endpoint: 'a@example.com' },
        },
      ],
    ]);
  });
});

describe('planted faults', () => {
  /** The problems the checker finds in a copy of the default stack with one change made to it. */
  function problemsAfter(change: (copy: Template) => void): string[] {
    const copy = structuredClone(template('dynamodb'));
    change(copy);
    return metricProblems(copy, ownMetrics(template('dynamodb')));
  }
  const properties = (copy: Template, id: string): Record<string, unknown> => {
    const resource = copy.Resources[id];
    if (resource === undefined) throw new Error(`no ${id}`);
    return resource.Properties;
  };
  const editDashboard = (copy: Template, edit: (body: string) => string) => {
    const dashboard = properties(copy, 'Dashboard');
    const body = dashboard.DashboardBody as { 'Fn::Sub': string };
    const changed = edit(body['Fn::Sub']);
    if (changed === body['Fn::Sub']) throw new Error('the edit changed nothing');
    dashboard.DashboardBody = { 'Fn::Sub': changed };
  };

  it.each([
    [
      'an alarm on a function the stack does not have',
      (copy: Template) => {
        properties(copy, 'ListTodosErrorsAlarm').Dimensions = [
          { Name: 'FunctionName', Value: { Ref: 'ListTodoLambdaFunction' } },
        ];
      },
      'ListTodosErrorsAlarm: AWS/Lambda Errors: FunctionName {"ref":"ListTodoLambdaFunction"} names no AWS::Lambda::Function',
    ],
    [
      'an alarm on a function named by hand, not by the stack',
      (copy: Template) => {
        properties(copy, 'ListTodosErrorsAlarm').Dimensions = [
          { Name: 'FunctionName', Value: 'todo-api-dev-listTodo' },
        ];
      },
      'FunctionName "todo-api-dev-listTodo" names no AWS::Lambda::Function',
    ],
    [
      'a widget on a function the stack does not have',
      (copy: Template) => {
        editDashboard(copy, (body) => body.replace('${GetTodoLambdaFunction}', '${GetTodosLambdaFunction}'));
      },
      '${GetTodosLambdaFunction} names no resource of the stack',
    ],
    [
      'an alarm on the API’s stage instead of the API',
      (copy: Template) => {
        properties(copy, 'ApiServerErrorsAlarm').Dimensions = [{ Name: 'ApiId', Value: { Ref: 'HttpApiStage' } }];
      },
      'ApiServerErrorsAlarm: AWS/ApiGateway 5xx: ApiId {"ref":"HttpApiStage"} names no AWS::ApiGatewayV2::Api',
    ],
    [
      'an alarm on a metric that does not exist',
      (copy: Template) => {
        properties(copy, 'ListTodosErrorsAlarm').MetricName = 'Error';
      },
      'ListTodosErrorsAlarm: AWS/Lambda Error: no such metric in AWS/Lambda',
    ],
    [
      'a widget on a metric that does not exist (the REST API’s name for 5xx)',
      (copy: Template) => {
        editDashboard(copy, (body) => body.replace('"AWS/ApiGateway","5xx"', '"AWS/ApiGateway","5XXError"'));
      },
      'AWS/ApiGateway 5XXError: not published with dimensions {"ApiId":{"ref":"HttpApi"}}',
    ],
    [
      'a service metric that lib/metrics.ts does not write',
      (copy: Template) => {
        editDashboard(copy, (body) => body.replace('"ColdStart"', '"ColdStarts"'));
      },
      'todo-api/dev ColdStarts: no such metric in todo-api/dev',
    ],
    [
      'an alarm in a namespace that does not exist',
      (copy: Template) => {
        properties(copy, 'ListTodosErrorsAlarm').Namespace = 'AWS/Lambdas';
      },
      'ListTodosErrorsAlarm: AWS/Lambdas Errors: no such namespace',
    ],
    [
      'an alarm on the service’s metrics in another stage’s namespace',
      (copy: Template) => {
        const metrics = properties(copy, 'StoreUnavailableAlarm').Metrics as {
          MetricStat?: { Metric: { Namespace: string } };
        }[];
        const [first] = metrics;
        if (first?.MetricStat) first.MetricStat.Metric.Namespace = 'todo-api/prod';
      },
      'StoreUnavailableAlarm (storeTimeouts): todo-api/prod StoreTimeouts: no such namespace',
    ],
    [
      'a per-operation metric read without its operation',
      (copy: Template) => {
        editDashboard(copy, (body) => body.replace(',"Operation","GetItem"', ''));
      },
      'AWS/DynamoDB SuccessfulRequestLatency: not published with dimensions {"TableName":{"ref":"TodosTable"}}',
    ],
    [
      'an expression that reads a metric the alarm does not have',
      (copy: Template) => {
        const metrics = properties(copy, 'TableThrottlesAlarm').Metrics as { Expression?: string }[];
        const result = metrics.find((query) => query.Expression !== undefined);
        if (result) result.Expression = 'FILL(reads, 0) + FILL(writs, 0)';
      },
      'TableThrottlesAlarm: the expression of result reads "writs", not a metric of the alarm',
    ],
  ])('the checker catches %s', (_fault, change, problem) => {
    expect(problemsAfter(change)).toContainEqual(expect.stringContaining(problem));
  });
});

describe('what the service’s metrics add to its logs (docs/operations.md, Costs)', () => {
  it('adds 148 bytes to a request’s line with one metric and 35 with a second, for a stage named prod', () => {
    const before = process.env.TODO_METRICS_NAMESPACE;
    process.env.TODO_METRICS_NAMESPACE = 'todo-api/prod';
    try {
      // A POST's line as lib/http.ts writes it.
      const line = {
        level: 'info',
        time: Date.now(),
        message: 'request',
        method: 'POST',
        route: 'POST /todos',
        status: 201,
        durationMs: 12.34,
        requestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
        todoId: '1234',
      };
      const added = (...metrics: ('Created' | 'ColdStart')[]) =>
        Buffer.byteLength(JSON.stringify({ ...line, ...metricFields(metrics) })) -
        Buffer.byteLength(JSON.stringify(line));
      expect([added(), added('Created'), added('ColdStart', 'Created')]).toEqual([0, 148, 148 + 35]);
    } finally {
      if (before === undefined) delete process.env.TODO_METRICS_NAMESPACE;
      else process.env.TODO_METRICS_NAMESPACE = before;
    }
  });
});
