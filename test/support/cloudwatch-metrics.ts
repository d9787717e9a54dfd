import { loadAwsServiceSpecSync } from '@aws-cdk/aws-service-spec';
import type { SpecDatabase } from '@aws-cdk/service-spec-types';
import type { Template } from '../../harness/package';

/**
 * Checks every metric that a template's CloudWatch alarms and dashboards name: the metric exists
 * in its namespace, with that set of dimensions, and each dimension that stands for a resource
 * names one of the same template, of the right type. AWS's metrics, and the dimension sets each
 * is published with, are AWS's own data as @aws-cdk/aws-service-spec ships it; the service's own
 * namespace is given by the caller.
 */

let database: SpecDatabase | undefined;
const spec = (): SpecDatabase => (database ??= loadAwsServiceSpecSync());

/** The dimensions whose value is a resource's name, and the type of that resource. */
const RESOURCE_DIMENSIONS: Record<string, string> = {
  ApiId: 'AWS::ApiGatewayV2::Api',
  Stage: 'AWS::ApiGatewayV2::Stage',
  FunctionName: 'AWS::Lambda::Function',
  TableName: 'AWS::DynamoDB::Table',
};

/** A dimension's value: a resource of the template, by logical id, or a literal. */
export type DimensionValue = { readonly ref: string } | string;

export interface MetricUse {
  /** The alarm's logical id, or the dashboard's and the widget's title. */
  readonly where: string;
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: Readonly<Record<string, DimensionValue>>;
}

/** The service's own metrics: their namespace, and their names (published with no dimensions). */
export interface OwnMetrics {
  readonly namespace: string;
  readonly names: readonly string[];
}

type Json = unknown;
const isObject = (value: Json): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function reference(value: Json): DimensionValue {
  if (isObject(value) && typeof value.Ref === 'string') return { ref: value.Ref };
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function alarmMetric(where: string, metric: Json): MetricUse {
  const { Namespace, MetricName, Dimensions } = isObject(metric) ? metric : {};
  const dimensions = Array.isArray(Dimensions) ? (Dimensions as Json[]) : [];
  return {
    where,
    namespace: String(Namespace),
    name: String(MetricName),
    dimensions: Object.fromEntries(
      dimensions.map((dimension) => {
        const { Name, Value } = isObject(dimension) ? dimension : {};
        return [String(Name), reference(Value)];
      }),
    ),
  };
}

/** The metrics an alarm reads: the one at its top, or each MetricStat of its metric math. */
function alarmUses(id: string, properties: Record<string, Json>): { uses: MetricUse[]; problems: string[] } {
  const problems: string[] = [];
  if (properties.MetricName !== undefined) return { uses: [alarmMetric(id, properties)], problems };
  const queries = Array.isArray(properties.Metrics) ? properties.Metrics.filter(isObject) : [];
  if (queries.length === 0) problems.push(`${id}: reads no metric`);
  const ids = new Set(queries.map((query) => query.Id));
  for (const query of queries) {
    // An id in an expression starts with a lowercase letter; functions (FILL, IF) are in capitals.
    const named = typeof query.Expression === 'string' ? (query.Expression.match(/\b[a-z]\w*\b/g) ?? []) : [];
    for (const name of named) {
      if (!ids.has(name))
        problems.push(`${id}: the expression of ${String(query.Id)} reads "${name}", not a metric of the alarm`);
    }
  }
  if (queries.filter((query) => query.ReturnData !== false).length !== 1) {
    problems.push(`${id}: must return exactly one series (ReturnData)`);
  }
  const uses = queries
    .filter((query) => query.MetricStat !== undefined)
    .map((query) =>
      alarmMetric(`${id} (${String(query.Id)})`, isObject(query.MetricStat) ? query.MetricStat.Metric : {}),
    );
  return { uses, problems };
}

/** What a `${LogicalId}` becomes, so that the body parses; no JSON text of ours has it. */
const MARK = '<ref>';

/**
 * A dashboard's body, with each `${LogicalId}` of its Fn::Sub (what CloudFormation puts the
 * resource's name in) made a reference. Every `${…}` must name a resource or a pseudo parameter.
 */
function dashboardBody(id: string, body: Json, template: Template): { body: Json; problems: string[] } {
  const problems: string[] = [];
  const text = isObject(body) ? body['Fn::Sub'] : body;
  if (typeof text !== 'string')
    return { body: {}, problems: [`${id}: DashboardBody is neither a string nor an Fn::Sub of one`] };
  const substituted = text.replace(/\$\{([^}!]+)\}/g, (_all, name: string) => {
    const [resource = '', attribute] = name.split('.');
    if (!name.startsWith('AWS::') && !(resource in template.Resources)) {
      problems.push(`${id}: \${${name}} names no resource of the stack`);
    }
    return attribute === undefined && !name.startsWith('AWS::') ? `${MARK}${resource}` : `<${name}>`;
  });
  try {
    return { body: JSON.parse(substituted) as Json, problems };
  } catch (error) {
    return { body: {}, problems: [...problems, `${id}: DashboardBody is not JSON: ${String(error)}`] };
  }
}

/** The metrics of a graph widget: `[namespace, name, key, value, …, { options }]` each. */
function widgetUses(where: string, metrics: Json): MetricUse[] {
  if (!Array.isArray(metrics)) return [];
  return metrics
    .filter((entry): entry is Json[] => Array.isArray(entry) && !(entry.length === 1 && isObject(entry[0])))
    .map((entry) => {
      const fields = entry.filter((field) => !isObject(field)).map(String);
      const [namespace = '', name = '', ...pairs] = fields;
      const dimensions: Record<string, DimensionValue> = {};
      for (let i = 0; i < pairs.length; i += 2) {
        const value = pairs[i + 1] ?? '';
        dimensions[pairs[i] ?? ''] = value.startsWith(MARK) ? { ref: value.slice(MARK.length) } : value;
      }
      return { where, namespace, name, dimensions };
    });
}

/** Every metric the template's alarms and dashboards name, and what is wrong in how they name them. */
export function metricUses(template: Template): { uses: MetricUse[]; problems: string[] } {
  const uses: MetricUse[] = [];
  const problems: string[] = [];
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type === 'AWS::CloudWatch::Alarm') {
      const found = alarmUses(id, resource.Properties);
      uses.push(...found.uses);
      problems.push(...found.problems);
    } else if (resource.Type === 'AWS::CloudWatch::Dashboard') {
      const parsed = dashboardBody(id, resource.Properties.DashboardBody, template);
      problems.push(...parsed.problems);
      const widgets = isObject(parsed.body) && Array.isArray(parsed.body.widgets) ? parsed.body.widgets : [];
      widgets.filter(isObject).forEach((widget, i) => {
        if (widget.type !== 'metric') return;
        const properties = isObject(widget.properties) ? widget.properties : {};
        const where = `${id} widget ${i} "${String(properties.title)}"`;
        const found = widgetUses(where, properties.metrics);
        if (found.length === 0) problems.push(`${where}: shows no metric`);
        uses.push(...found);
      });
    }
  }
  return { uses, problems };
}

/** Each dimension set a metric is published with: names, and the value a name must have, if any. */
function dimensionSets(
  namespace: string,
  name: string,
  own: OwnMetrics,
): Map<string, string | undefined>[] | undefined {
  if (namespace === own.namespace) return own.names.includes(name) ? [new Map()] : undefined;
  const metrics = spec()
    .lookup('metric', 'namespace', 'equals', namespace)
    .filter((metric) => metric.name === name);
  if (metrics.length === 0) return undefined;
  return metrics.flatMap((metric) =>
    spec()
      .follow('usesDimensionSet', metric)
      .map(({ entity }) => new Map(entity.dimensions.map((dimension) => [dimension.name, dimension.value]))),
  );
}

function namespaceExists(namespace: string, own: OwnMetrics): boolean {
  return namespace === own.namespace || spec().lookup('metric', 'namespace', 'equals', namespace).length > 0;
}

/** Every way the template's alarms and dashboards name a metric or a resource that does not exist. */
export function metricProblems(template: Template, own: OwnMetrics): string[] {
  const { uses, problems } = metricUses(template);
  for (const use of uses) {
    const what = `${use.where}: ${use.namespace} ${use.name}`;
    if (!namespaceExists(use.namespace, own)) {
      problems.push(`${what}: no such namespace`);
      continue;
    }
    const sets = dimensionSets(use.namespace, use.name, own);
    if (sets === undefined) {
      problems.push(`${what}: no such metric in ${use.namespace}`);
      continue;
    }
    const keys = Object.keys(use.dimensions).sort();
    const fits = sets.some(
      (set) =>
        [...set.keys()].sort().join() === keys.join() &&
        // A value in the set is a constraint unless it only repeats the name (a placeholder).
        [...set].every(([key, value]) => value === undefined || value === key || use.dimensions[key] === value),
    );
    if (!fits) problems.push(`${what}: not published with dimensions ${JSON.stringify(use.dimensions)}`);
    for (const [key, value] of Object.entries(use.dimensions)) {
      const type = RESOURCE_DIMENSIONS[key];
      if (type === undefined) continue;
      const target = typeof value === 'string' ? undefined : template.Resources[value.ref];
      if (target?.Type !== type) {
        problems.push(`${what}: ${key} ${JSON.stringify(value)} names no ${type} of the stack`);
      }
    }
  }
  return problems;
}
