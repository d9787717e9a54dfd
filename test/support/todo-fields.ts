import fc from 'fast-check';
import { MAX_TITLE_LENGTH } from '../../lib/todos';

/**
 * The fields of a Todo as the tests know them, stated apart from lib/todos.ts and lib/input.ts:
 * what a client may send in each, what is refused, and what a record holds. A field added to the
 * domain is added here, once (docs/contributing.md, "Adding a field"); the model (model.ts) and its
 * arbitraries, the store tests and the queue's tests take every field from here, so they exercise
 * a new one with no other test code.
 */
export interface FieldRule {
  readonly name: string;
  /** What a POST does with it: required, optional (absent unless sent), or ignored (the record gets `initial`). */
  readonly onCreate: 'required' | 'optional' | 'ignored';
  /** What a new record holds when the POST does not set it: undefined is no such field. */
  readonly initial?: unknown;
  /** Whether a PUT may set it. */
  readonly onUpdate: boolean;
  /** Whether a PUT of `null` clears it: the record then has no such field. */
  readonly clearable: boolean;
  /** The validation, restated: whether a client's value is accepted (else 400). */
  accepts(value: unknown): boolean;
  /** Values a client sends: mostly accepted, some refused by `accepts` (a lone surrogate, say). */
  readonly values: fc.Arbitrary<unknown>;
  /** Values of the wrong type: always refused. */
  readonly wrongType: fc.Arbitrary<unknown>;
  /** An ordinary accepted value, for a test that needs one. */
  readonly sample: unknown;
}

/** The largest request body, in UTF-8 bytes (lib/input.ts, MAX_BODY_BYTES; openapi.yaml says it too). */
export const BODY_LIMIT = 65_536;

/**
 * Well-formed Unicode: a lone surrogate, which JSON may carry, is refused (DynamoDB keeps UTF-8,
 * which cannot hold one). Checked by hand, apart from the service's way of checking it.
 */
export function wellFormed(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xdc00 && unit <= 0xdfff) return false;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    }
  }
  return true;
}

/**
 * A title's length as the cap counts it, counted by hand: its Unicode characters, where a surrogate
 * pair (an emoji, say: two UTF-16 units) is one. The figure is the domain's (MAX_TITLE_LENGTH).
 */
export function characters(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
    count++;
  }
  return count;
}

/**
 * Characters of every width: one UTF-8 byte, two, three, four (a surrogate pair, one character
 * though two UTF-16 units), and ones JSON escapes (a quote, a control character).
 */
const WIDE_AND_NARROW = ['x', 'é', '€', '🚀', '"', '\u0001'];

/**
 * Strings: ASCII, any Unicode text, text that is not well-formed (a lone surrogate), titles on both
 * sides of the cap (MAX_TITLE_LENGTH characters) in characters of every width, long ones, and ones
 * up to and past the body's limit.
 */
export const strings: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 10 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 10 }))
      .map(([before, surrogate, after]) => `${before}${String.fromCharCode(surrogate)}${after}`),
  },
  {
    weight: 1,
    // A character or two either side of the cap, mostly of one width, now and then ending in another.
    arbitrary: fc
      .tuple(
        fc.integer({ min: -2, max: 2 }),
        fc.constantFrom(...WIDE_AND_NARROW),
        fc.constantFrom('', ...WIDE_AND_NARROW),
      )
      .map(([offset, fill, last]) => fill.repeat(MAX_TITLE_LENGTH + offset - characters(last)) + last),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((n) => 'é'.repeat(n)) },
  {
    weight: 1,
    // Bodies within a few bytes of the limit, on both sides.
    arbitrary: fc
      .integer({ min: BODY_LIMIT - 16, max: BODY_LIMIT + 8 })
      .map((n) => 'x'.repeat(n - '{"title":""}'.length)),
  },
);

const notAString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);
const notABoolean = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 5 }),
  fc.constant(null),
  fc.constant('true'),
  fc.array(fc.boolean(), { maxLength: 2 }),
);

/** The record's fields after `id`, in the answer's order. */
export const FIELDS: readonly FieldRule[] = [
  {
    name: 'title',
    onCreate: 'required',
    onUpdate: true,
    clearable: false,
    accepts: (value) => typeof value === 'string' && wellFormed(value) && characters(value) <= MAX_TITLE_LENGTH,
    values: strings,
    wrongType: notAString,
    sample: 'a title',
  },
  {
    name: 'completed',
    onCreate: 'ignored',
    initial: false,
    onUpdate: true,
    clearable: false,
    accepts: (value) => typeof value === 'boolean',
    values: fc.boolean(),
    wrongType: notABoolean,
    sample: true,
  },
];

/** A POST body that sets every field a POST may set: the title given, the others their sample. */
export function fullRequest(title: string): Record<string, unknown> {
  return Object.fromEntries(
    FIELDS.filter((field) => field.onCreate !== 'ignored').map((field) => [
      field.name,
      field.name === 'title' ? title : field.sample,
    ]),
  );
}

/** A PUT body that sets every field a PUT may set: the title given, the others their sample. */
export function fullPatch(title: string): Record<string, unknown> {
  return Object.fromEntries(
    FIELDS.filter((field) => field.onUpdate).map((field) => [
      field.name,
      field.name === 'title' ? title : field.sample,
    ]),
  );
}

/** The record a POST of `body` (accepted) makes with `id`, as the fields above say. */
export function recordFrom(body: Readonly<Record<string, unknown>>, id: number): Record<string, unknown> {
  const record: Record<string, unknown> = { id };
  for (const field of FIELDS) {
    const sent = field.onCreate !== 'ignored' && Object.hasOwn(body, field.name) ? body[field.name] : undefined;
    const value = sent ?? field.initial;
    if (value !== undefined) record[field.name] = value;
  }
  return record;
}
