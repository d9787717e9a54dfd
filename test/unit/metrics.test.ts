import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { event, invoke, type EventOptions } from '../support/event';
import { readLogLevel } from '../../lib/log';
import type { TodoStore } from '../../lib/todos';
import { logLines } from '../support/logs';

/**
 * The service's own metrics (lib/metrics.ts): fields of the request's log line in CloudWatch's
 * Embedded Metric Format. Each line is checked against the format's specification
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * the `_aws` block, its timestamp, namespace, dimension sets and metric definitions, and a
 * number at the root for every metric it names.
 */

type Line = Record<string, unknown>;

/** Every way a line breaks the Embedded Metric Format's specification; empty when it keeps it. */
function emfViolations(line: Line): string[] {
  const problems: string[] = [];
  const aws = line._aws as Record<string, unknown> | undefined;
  if (typeof aws !== 'object') return ['no _aws object'];
  if (!Number.isInteger(aws.Timestamp) || (aws.Timestamp as number) < 0) problems.push('Timestamp is not epoch ms');
  const directives = aws.CloudWatchMetrics;
  if (!Array.isArray(directives) || directives.length === 0)
    return [...problems, 'CloudWatchMetrics is not a non-empty array'];
  for (const directive of directives as Record<string, unknown>[]) {
    const { Namespace, Dimensions, Metrics } = directive;
    if (
      typeof Namespace !== 'string' ||
      Namespace.length < 1 ||
      Namespace.length > 255 ||
      !/^[\w.\-/#:]+$/.test(Namespace)
    )
      problems.push(`Namespace ${JSON.stringify(Namespace)} is not 1 to 255 of the allowed characters`);
    if (!Array.isArray(Dimensions)) problems.push('Dimensions is not an array');
    for (const set of (Dimensions ?? []) as unknown[]) {
      if (!Array.isArray(set) || set.length > 30) problems.push('a DimensionSet is not an array of at most 30 keys');
      for (const name of (set ?? []) as unknown[]) {
        const value = typeof name === 'string' ? line[name] : undefined;
        if (typeof value !== 'string' || value.length > 1024)
          problems.push(`dimension ${String(name)} has no string value`);
      }
    }
    if (!Array.isArray(Metrics) || Metrics.length > 100) problems.push('Metrics is not an array of at most 100');
    for (const metric of (Metrics ?? []) as Record<string, unknown>[]) {
      const { Name, Unit, StorageResolution } = metric;
      if (typeof Name !== 'string' || Name.length < 1 || Name.length > 255) problems.push('a metric has no Name');
      const value = typeof Name === 'string' ? line[Name] : undefined;
      const numbers = Array.isArray(value) ? value : [value];
      if (numbers.length > 100 || !numbers.every((n) => typeof n === 'number' && Number.isFinite(n)))
        problems.push(`metric ${String(Name)} has no number at the root`);
      if (Unit !== undefined && typeof Unit !== 'string')
        problems.push(`metric ${String(Name)} has a Unit that is not a string`);
      if (StorageResolution !== undefined && StorageResolution !== 1 && StorageResolution !== 60)
        problems.push(`metric ${String(Name)} has a StorageResolution other than 1 or 60`);
    }
  }
  return problems;
}

/** The metrics a line counts: the names its directives define. */
const metricsOf = (line: Line) =>
  (
    (line._aws as { CloudWatchMetrics?: { Metrics: { Name: string }[] }[] } | undefined)?.CloudWatchMetrics ?? []
  ).flatMap((directive) => directive.Metrics.map((metric) => metric.Name));

describe('the request log line’s metrics', () => {
  const saved = { ...process.env };
  /** The handlers of a container that has just started: each module loaded afresh. */
  let handlers: typeof import('../support/routes');
  let store: TodoStore;
  let errors: typeof import('../../lib/errors');
  beforeEach(async () => {
    process.env.LOG_LEVEL = 'info';
    process.env.TODO_METRICS_NAMESPACE = 'todo-api/test';
    await jest.isolateModulesAsync(async () => {
      handlers = await import('../support/routes');
      errors = await import('../../lib/errors');
      const memory = await import('../../lib/memory-store');
      memory.resetMemoryStore();
      store = memory.memoryStore;
    });
  });
  afterEach(() => {
    process.env = { ...saved };
    readLogLevel();
  });
  const call = async (handler: APIGatewayProxyHandlerV2, options: EventOptions) =>
    logLines(() => invoke(handler, event(options)));

  it('counts a cold start on a container’s first request only', async () => {
    const get = handlers.getTodo(store);
    const [first] = await call(get, { id: '1' });
    const [second] = await call(get, { id: '1' });
    expect(first && metricsOf(first)).toEqual(['ColdStart']);
    expect(first).toMatchObject({ ColdStart: 1 });
    expect(second).not.toHaveProperty('_aws');
  });

  it.each([
    ['a POST that created a record', 'createTodo', { method: 'POST', body: { title: 't' } }, ['Created']],
    ['a DELETE that deleted one', 'deleteTodo', { method: 'DELETE', id: '2' }, ['Deleted']],
    ['a GET', 'getTodo', { id: '1' }, []],
    ['a PUT', 'updateTodo', { method: 'PUT', id: '1', body: { completed: true } }, []],
    ['a refused POST', 'createTodo', { method: 'POST', rawBody: '{' }, []],
    ['a DELETE of no record', 'deleteTodo', { method: 'DELETE', id: '99' }, []],
  ] as const)('counts %s as %j', async (_case, name, options, metrics) => {
    const handler = handlers[name](store);
    await call(handler, { id: '1' }); // the cold start
    const [line] = await call(handler, options);
    expect(line && metricsOf(line)).toEqual(metrics);
    for (const metric of metrics) expect(line).toHaveProperty(metric, 1);
  });

  it('counts a replay of an Idempotency-Key, not a second creation', async () => {
    const post = handlers.createTodo(store);
    const keyed = { method: 'POST', body: { title: 't' }, headers: { 'idempotency-key': '"k"' } } as const;
    const [created] = await call(post, keyed);
    const [replayed] = await call(post, keyed);
    expect(created && metricsOf(created)).toEqual(['ColdStart', 'Created']);
    expect(replayed && metricsOf(replayed)).toEqual(['Replayed']);
  });

  it.each([
    ['StoreTimeouts', true],
    ['StoreErrors', false],
  ])('counts a 503 by its cause: %s', async (metric, timedOut) => {
    // The error type of this container's modules, not the test's.
    const failure = new errors.StoreUnavailable('DynamoDB did not answer', { timedOut });
    const failing: TodoStore = { ...store, get: () => Promise.reject(failure) };
    const get = handlers.getTodo(failing);
    await call(handlers.getTodo(store), { id: '1' });
    const [line] = await call(get, { id: '1' });
    expect(line).toMatchObject({ status: 503, level: 'error' });
    expect(line && metricsOf(line)).toEqual([metric]);
  });

  it('writes every line with metrics as the Embedded Metric Format specifies, in the stage’s namespace', async () => {
    const post = handlers.createTodo(store);
    const lines = [
      ...(await call(post, { method: 'POST', body: { title: 'a' } })),
      ...(await call(post, { method: 'POST', body: { title: 'b' }, headers: { 'idempotency-key': '"k"' } })),
      ...(await call(post, { method: 'POST', body: { title: 'b' }, headers: { 'idempotency-key': '"k"' } })),
      ...(await call(handlers.deleteTodo(store), { method: 'DELETE', id: '1' })),
    ];
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      expect(emfViolations(line)).toEqual([]);
      expect(line._aws).toMatchObject({ CloudWatchMetrics: [{ Namespace: 'todo-api/test', Dimensions: [[]] }] });
    }
  });

  it('finds what breaks the specification (the check can fail)', () => {
    const good = {
      _aws: { Timestamp: 1, CloudWatchMetrics: [{ Namespace: 'n', Dimensions: [[]], Metrics: [{ Name: 'M' }] }] },
      M: 1,
    };
    expect(emfViolations(good)).toEqual([]);
    expect(emfViolations({ ...good, M: 'one' })).toEqual(['metric M has no number at the root']);
    expect(emfViolations({ M: 1 })).toEqual(['no _aws object']);
    expect(emfViolations({ ...good, _aws: { ...good._aws, Timestamp: '1' } })).toEqual(['Timestamp is not epoch ms']);
    expect(
      emfViolations({
        ...good,
        _aws: { Timestamp: 1, CloudWatchMetrics: [{ Namespace: '', Dimensions: [['d']], Metrics: [{ Name: 'M' }] }] },
      }),
    ).toEqual(['Namespace "" is not 1 to 255 of the allowed characters', 'dimension d has no string value']);
  });
});
