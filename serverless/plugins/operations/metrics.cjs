// @ts-check
'use strict';

/**
 * The metrics the alarms and the dashboard read, beyond AWS's own: what the store sends to
 * DynamoDB, and what the service writes itself.
 */

/**
 * The DynamoDB operations the store sends (lib/dynamodb-*.ts): SystemErrors and
 * SuccessfulRequestLatency exist only per operation. test/system/operations.test.ts holds this
 * list to lib/.
 */
const TABLE_OPERATIONS = ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'TransactWriteItems'];

/**
 * The service's own metrics (lib/metrics.ts, `Metric`), in the namespace the functions write them
 * to (TODO_METRICS_NAMESPACE). test/system/operations.test.ts holds these lists to that type.
 */
const RECORD_METRICS = ['Created', 'Deleted', 'Replayed'];
const COLD_START_METRICS = ['ColdStart'];
/** Only the DynamoDB store answers 503 (lib/errors.ts, StoreUnavailable); the memory store cannot. */
const STORE_METRICS = ['StoreTimeouts', 'StoreErrors'];
const SERVICE_METRICS = [...RECORD_METRICS, ...COLD_START_METRICS, ...STORE_METRICS];

/**
 * A dimension's value: a resource of the stack (by logical id), or a literal.
 * @typedef {{ Ref: string } | string} DimensionValue
 * @typedef {{
 *   namespace: string,
 *   name: string,
 *   dimensions: Record<string, DimensionValue>,
 *   stat: string,
 *   label?: string,
 * }} Metric
 */

/**
 * @param {string} namespace
 * @param {string} name
 * @param {Record<string, DimensionValue>} dimensions
 * @param {string} stat
 * @param {string} [label]
 * @returns {Metric}
 */
function metric(namespace, name, dimensions, stat, label) {
  return { namespace, name, dimensions, stat, ...(label === undefined ? {} : { label }) };
}

module.exports = { TABLE_OPERATIONS, RECORD_METRICS, COLD_START_METRICS, STORE_METRICS, SERVICE_METRICS, metric };
