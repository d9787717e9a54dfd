import fc from 'fast-check';
import { BODY_LIMIT, FIELDS, type FieldRule } from './todo-fields';
import {
  HttpCommand,
  RetryCommand,
  adoptSeedTitles,
  type IdRef,
  type KeyRef,
  type Model,
  type TagRef,
  type Real,
} from './model';

/**
 * The random input of the property tests: which ids commands aim at, bodies valid and hostile
 * (each field's values are todo-fields.ts's), and sequences of commands; and the property that
 * runs them against the model.
 */

const ODD_IDS = [
  'abc',
  '1.5',
  '-0',
  '-1',
  '0',
  '1e309',
  '007',
  '0x1',
  '1e0',
  '2.0',
  'NaN',
  'Infinity',
  '9'.repeat(40),
  '0'.repeat(30) + '1',
  ' 1',
];

const idRef: fc.Arbitrary<IdRef> = fc.oneof(
  { weight: 5, arbitrary: fc.nat().map((pick): IdRef => ({ kind: 'existing', pick })) },
  { weight: 1, arbitrary: fc.nat().map((pick): IdRef => ({ kind: 'deleted', pick })) },
  { weight: 1, arbitrary: fc.constant<IdRef>({ kind: 'next' }) },
  { weight: 2, arbitrary: fc.constantFrom(...ODD_IDS).map((value): IdRef => ({ kind: 'raw', value })) },
);

/** Bodies that are not one JSON object, or not JSON at all. */
const notAnObject: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('', '{', '{"title":', '{"title":"a",}', "{'title':'a'}", 'nul', '[', 'undefined'),
  fc.string({ maxLength: 20 }),
  fc
    .oneof(fc.array(fc.jsonValue(), { maxLength: 3 }), fc.constant(null), fc.string(), fc.double(), fc.boolean())
    .map((value) => JSON.stringify(value)),
);

/** `__proto__` and `constructor` as own keys, which only raw JSON text can carry. */
const withHostileKeys = (fields: string) =>
  fc
    .constantFrom(
      '"__proto__":{"title":"from proto","completed":true}',
      '"constructor":{"prototype":{"completed":true}}',
      '"__proto__":null',
    )
    .map((hostile) => `{${[fields, hostile].filter(Boolean).join(',')}}`);

/** Each field's value as a client sends it: mostly one of its values, now and then one of the wrong type. */
function valueOf(field: FieldRule): fc.Arbitrary<unknown> {
  const values = field.clearable ? fc.oneof(field.values, fc.constant(null)) : field.values;
  return fc.oneof({ weight: 9, arbitrary: values }, { weight: 1, arbitrary: field.wrongType });
}

/** A body of some of `fields` (those in `required` always), each with a value from valueOf. */
function bodyOf(fields: readonly FieldRule[], required: string[]): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(Object.fromEntries(fields.map((field) => [field.name, valueOf(field)])), { requiredKeys: required });
}

/** A field no version reads: padding, which a POST and a PUT ignore. */
const PADDING = 'padding';

/**
 * `body` padded with an ignored field to within a few bytes of the body's limit, on both sides: a body
 * the limit alone decides, whatever its fields' own limits (a title's, say).
 */
function nearTheLimit(body: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<string> {
  return fc.tuple(body, fc.integer({ min: BODY_LIMIT - 8, max: BODY_LIMIT + 8 })).map(([fields, bytes]) => {
    const frame = Buffer.byteLength(JSON.stringify({ ...fields, [PADDING]: '' }));
    return JSON.stringify({ ...fields, [PADDING]: 'y'.repeat(Math.max(0, bytes - frame)) });
  });
}

const postFields = FIELDS.filter((field) => field.onCreate !== 'ignored');
const requiredOnPost = postFields.filter((field) => field.onCreate === 'required').map((field) => field.name);
/** Fields a POST ignores, and an id: sent with anything, they change nothing. */
const ignoredOnPost = fc.record(
  Object.fromEntries([
    ...FIELDS.filter((field) => field.onCreate === 'ignored').map((field) => [field.name, fc.anything()] as const),
    ['id', fc.anything()] as const,
  ]),
);
const putFields = FIELDS.filter((field) => field.onUpdate);

const createBody: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: bodyOf(postFields, requiredOnPost).map((b) => JSON.stringify(b)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(bodyOf(postFields, requiredOnPost), ignoredOnPost)
      .map(([b, ignored]) => JSON.stringify({ ...ignored, ...b })),
  },
  {
    weight: 2,
    arbitrary: bodyOf(postFields, []).chain((b) => withHostileKeys(JSON.stringify(b).slice(1, -1))),
  },
  { weight: 1, arbitrary: nearTheLimit(bodyOf(postFields, requiredOnPost)) },
  { weight: 2, arbitrary: notAnObject },
);

const updateBody: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 8, arbitrary: bodyOf(putFields, []).map((b) => JSON.stringify(b)) },
  {
    weight: 1,
    arbitrary: fc.tuple(bodyOf(putFields, []), fc.integer()).map(([b, id]) => JSON.stringify({ ...b, id })),
  },
  { weight: 2, arbitrary: withHostileKeys('"completed":false') },
  { weight: 1, arbitrary: nearTheLimit(bodyOf(putFields, [])) },
  { weight: 2, arbitrary: notAnObject },
);

/** Idempotency-Keys: none mostly; one of a run's three, so that keys meet again; or a malformed one. */
const keyRef: fc.Arbitrary<KeyRef | undefined> = fc.oneof(
  { weight: 5, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.nat(2).map((pick): KeyRef => ({ kind: 'run', pick })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('unquoted', '""', `"${'k'.repeat(256)}"`, '"é"', '"a"b"', '"a","b"')
      .map((value): KeyRef => ({ kind: 'raw', value })),
  },
);

/**
 * If-Match and If-None-Match: none mostly; a tag the run has seen, current or stale, maybe made
 * weak; `*`; a tag nobody made, a list of two, or a malformed value.
 */
const tagRef: fc.Arbitrary<TagRef | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  {
    weight: 4,
    arbitrary: fc.record({ pick: fc.nat(), weak: fc.boolean() }).map((seen): TagRef => ({ kind: 'seen', ...seen })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('*', '"none"', '"a", "b"', 'abc', '"open', 'W/x')
      .map((value): TagRef => ({ kind: 'raw', value })),
  },
);

/** A request's If-Match and If-None-Match: mostly one or none, now and then both. */
const conditions = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(tagRef, fc.constant(undefined)) },
  { weight: 3, arbitrary: fc.tuple(fc.constant(undefined), tagRef) },
  { weight: 1, arbitrary: fc.tuple(tagRef, tagRef) },
);

export const commands = fc.commands(
  [
    conditions.map(
      ([ifMatch, ifNoneMatch]) => new HttpCommand('GET', undefined, undefined, undefined, ifMatch, ifNoneMatch),
    ),
    fc
      .tuple(idRef, conditions)
      .map(([ref, [ifMatch, ifNoneMatch]]) => new HttpCommand('GET', ref, undefined, undefined, ifMatch, ifNoneMatch)),
    fc.tuple(createBody, keyRef).map(([body, key]) => new HttpCommand('POST', undefined, body, key)),
    fc
      .tuple(idRef, updateBody, keyRef, conditions)
      .map(([ref, body, key, [ifMatch, ifNoneMatch]]) => new HttpCommand('PUT', ref, body, key, ifMatch, ifNoneMatch)),
    fc
      .tuple(idRef, keyRef, conditions)
      .map(
        ([ref, key, [ifMatch, ifNoneMatch]]) => new HttpCommand('DELETE', ref, undefined, key, ifMatch, ifNoneMatch),
      ),
    fc.nat().map((pick) => new RetryCommand(pick)),
  ],
  { maxCommands: 25 },
);

/**
 * Runs the property: each run starts from `start()` (a model and the service in the same
 * state) and plays a random command sequence. fast-check prints the shrunk counterexample and
 * the seed to replay it when it fails.
 */
export async function checkAgainstModel(
  start: () => Promise<{ model: Model; real: Real }>,
  numRuns: number,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(commands, async (sequence) => {
      const { model, real } = await start();
      adoptSeedTitles(model, (await real.send({ method: 'GET' })).body);
      await fc.asyncModelRun(() => ({ model, real }), sequence);
    }),
    { numRuns },
  );
}
