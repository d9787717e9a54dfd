// @ts-check
'use strict';

/**
 * What the alarms and the dashboard are built from: the stack's resources and settings, read once
 * from the framework.
 */

/** The table's logical id (serverless.yml, custom.stores.dynamodb): only that store's stack has it. */
const TABLE = 'TodosTable';

/** Lambda's timeout when neither the function nor the provider sets one. */
const FRAMEWORK_DEFAULT_TIMEOUT_S = 6;

/**
 * @typedef {{ Type: string, Properties: Record<string, unknown>, [key: string]: unknown }} Resource
 * @typedef {{ Resources: Record<string, Resource>, Outputs?: Record<string, unknown> }} Template
 * @typedef {{
 *   service: {
 *     service: string,
 *     custom: { operations?: { alarms?: unknown, alarmEmail?: unknown, concurrencyCaps?: unknown } },
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
 * `prefix` names what is added (`<service>-<stage>`); `api`, each function's `logicalId` and
 * `table` are logical ids in the template; `namespace` is the service's own metrics'.
 * @typedef {{
 *   prefix: string,
 *   api: string,
 *   functions: { name: string, logicalId: string, short: string }[],
 *   table: string | undefined,
 *   namespace: string,
 *   timeoutSeconds: number,
 * }} Stack
 */

/**
 * The stack that `template` describes.
 * @param {Serverless} serverless
 * @param {Template} template
 * @returns {Stack}
 */
function stackOf(serverless, template) {
  const { service } = serverless;
  const provider = serverless.getProvider('aws');
  const api = provider.naming.getHttpApiLogicalId();
  const namespace = service.provider.environment?.TODO_METRICS_NAMESPACE;
  if (!(api in template.Resources) || typeof namespace !== 'string') {
    throw new serverless.classes.Error(
      'The operations plugin needs an HTTP API and provider.environment.TODO_METRICS_NAMESPACE',
      'TODO_OPERATIONS_STACK',
    );
  }
  const names = service.getAllFunctions();
  return {
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
}

module.exports = { stackOf };
