import type { AttributeMap, AttributeValue } from '../aws-dynamodb/requests';

/**
 * DynamoDB's attribute values (`{"S":"x"}`, `{"N":"1"}`…) as the simulated DynamoDB compares,
 * orders and prints them. Items are never changed in place: a write makes a new map, so a state
 * can share its items with its copies (SimulatedDynamoDb.clone).
 */

export type { AttributeMap, AttributeValue };

/** The value's type (`S`, `N`, `M`…) and what it holds. */
export function typed(value: AttributeValue): { readonly type: string; readonly inner: unknown } {
  const entries = Object.entries(value);
  const [entry] = entries;
  if (entries.length !== 1 || entry === undefined) throw new Error(`not an attribute value: ${JSON.stringify(value)}`);
  return { type: entry[0], inner: entry[1] };
}

/**
 * JSON with every object's keys sorted, and numbers as DynamoDB compares them (`"1.0"` and `"1"`
 * are one number): two values print the same exactly when DynamoDB holds them equal. Sets are
 * sorted too, as DynamoDB keeps no order in them.
 */
export function canonical(value: unknown): string {
  return JSON.stringify(normalized(value));
}

function normalized(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalized);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>);
  const [only] = entries;
  if (entries.length === 1 && only !== undefined) {
    const [type, inner] = only;
    if (type === 'N' && typeof inner === 'string') return { N: String(Number(inner)) };
    if ((type === 'SS' || type === 'BS') && Array.isArray(inner)) return { [type]: [...(inner as string[])].sort() };
    if (type === 'NS' && Array.isArray(inner))
      return { NS: (inner as string[]).map((n) => Number(n)).sort((a, b) => a - b) };
  }
  return Object.fromEntries(
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, inner]) => [key, normalized(inner)]),
  );
}

/** DynamoDB's `=`: the same type and the same value. */
export function equal(left: AttributeValue, right: AttributeValue): boolean {
  return canonical(left) === canonical(right);
}

/** The types DynamoDB orders with `<`, `<=`, `>`, `>=`. */
const ORDERED = ['N', 'S', 'B'];

/**
 * DynamoDB's order of two values of one type: numbers by value, strings and binaries by their
 * bytes (UTF-8 for strings). Undefined for values of two types: the comparison is then false.
 * Throws for a type DynamoDB does not order (a BOOL, a map…), which the simulator does not model.
 */
export function order(left: AttributeValue, right: AttributeValue): number | undefined {
  const a = typed(left);
  const b = typed(right);
  for (const { type } of [a, b]) {
    if (!ORDERED.includes(type)) throw new Error(`the simulated DynamoDB does not order values of type ${type}`);
  }
  if (a.type !== b.type) return undefined;
  if (a.type === 'N') return Math.sign(Number(a.inner) - Number(b.inner));
  const encoding = a.type === 'S' ? 'utf8' : 'base64';
  return Buffer.compare(Buffer.from(String(a.inner), encoding), Buffer.from(String(b.inner), encoding));
}
