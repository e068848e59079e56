/**
 * Property: the impact words of diffInputSchemas are true (issue 12). Random object schemas go
 * through random changes (properties added or removed, optional or required, types changed,
 * wrapped into anyOf/oneOf, enums narrowed or widened, bounds moved, `$ref` indirection,
 * definitions nothing references, additionalProperties opened or closed, annotations), and Ajv,
 * on values generated from both schemas and at random, decides whether the worst word is true:
 * `widening` accepts every old-valid value, `cosmetic` (or no change) validates identically,
 * `breaking` has a value that was valid and is rejected now. `may-break` claims nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { diffInputSchemas, worstImpact, type ChangeImpact } from '../../server/src/core/review/changes';
import { candidates, check, compile } from './impactOracle';

type Schema = Record<string, unknown>;
const NAMES = ['a', 'b', 'c'] as const;
const props = (schema: Schema): Record<string, Schema> => schema.properties as Record<string, Schema>;

const word = fc.stringMatching(/^[a-d]{0,3}$/);
const leaf: fc.Arbitrary<Schema> = fc.oneof(
  fc.record({ type: fc.constantFrom('string', 'number', 'integer', 'boolean') }),
  fc.record({ type: fc.constant('number'), minimum: fc.integer({ min: 0, max: 3 }), maximum: fc.integer({ min: 3, max: 6 }) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('string'), maxLength: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ enum: fc.uniqueArray(word, { minLength: 1, maxLength: 3 }) }),
  fc.record({ type: fc.constant('string'), enum: fc.uniqueArray(word, { minLength: 1, maxLength: 3 }) }),
  fc.record({ type: fc.constant('array'), items: fc.record({ type: fc.constantFrom('string', 'integer') }) }),
  fc.record({ anyOf: fc.tuple(fc.record({ type: fc.constantFrom('string', 'integer') }), fc.record({ type: fc.constant('null') })) }),
  fc.constant({}),
);
const additional = fc.constantFrom<unknown>(undefined, true, false, { type: 'string' });
const base: fc.Arbitrary<Schema> = fc
  .record({
    properties: fc.dictionary(fc.constantFrom(...NAMES), leaf, { minKeys: 1, maxKeys: 3 }),
    required: fc.subarray([...NAMES]),
    additionalProperties: additional,
    unused: fc.boolean(),
  })
  .map(({ properties, required, additionalProperties, unused }) => {
    const schema: Schema = { type: 'object', properties, required: required.filter((name) => name in properties) };
    if (additionalProperties !== undefined) schema.additionalProperties = additionalProperties;
    if (unused) schema.$defs = { Unused: { type: 'string' } };
    return schema;
  });

type Mutation = (schema: Schema, name: string, extra: Schema) => void;
/** Named, so that a failing case says what was done. */
const MUTATIONS: Record<string, Mutation> = {
  'add optional': (s, n, x) => !props(s)[n] && (props(s)[n] = x),
  'add required': (s, n, x) => {
    if (props(s)[n]) return;
    props(s)[n] = x;
    s.required = [...(s.required as string[]), n];
  },
  remove: (s, n) => {
    delete props(s)[n];
    s.required = (s.required as string[]).filter((entry) => entry !== n);
  },
  'make required': (s, n) => props(s)[n] && (s.required = [...new Set([...(s.required as string[]), n])]),
  'make optional': (s, n) => (s.required = (s.required as string[]).filter((entry) => entry !== n)),
  'change type': (s, n, x) => props(s)[n] && (props(s)[n]!.type = x.type ?? 'string'),
  'widen type': (s, n) => props(s)[n] && (props(s)[n]!.type = ['string', 'number', 'boolean', 'array', 'null']),
  'wrap in anyOf': (s, n, x) => props(s)[n] && (props(s)[n] = { anyOf: [props(s)[n]!, x] }),
  'wrap in anyOf with null': (s, n) => props(s)[n] && (props(s)[n] = { anyOf: [props(s)[n]!, { type: 'null' }] }),
  'wrap in oneOf': (s, n, x) => props(s)[n] && (props(s)[n] = { oneOf: [props(s)[n]!, x] }),
  'unwrap anyOf': (s, n) => {
    const alternatives = props(s)[n]?.anyOf;
    if (Array.isArray(alternatives)) props(s)[n] = alternatives[0] as Schema;
  },
  // An empty enum is no valid schema (Ajv refuses it), so a one-value enum is left alone.
  'narrow enum': (s, n) => props(s)[n] && Array.isArray(props(s)[n]!.enum) && (props(s)[n]!.enum as unknown[]).length > 1 && (props(s)[n]!.enum = (props(s)[n]!.enum as unknown[]).slice(1)),
  'widen enum': (s, n) => props(s)[n] && Array.isArray(props(s)[n]!.enum) && (props(s)[n]!.enum = [...new Set([...(props(s)[n]!.enum as unknown[]), 'zz'])]),
  'drop enum': (s, n) => props(s)[n] && delete props(s)[n]!.enum,
  'add enum': (s, n) => props(s)[n] && (props(s)[n]!.enum = ['a', 1]),
  'maximum 2': (s, n) => props(s)[n] && (props(s)[n]!.maximum = 2),
  'maximum 9': (s, n) => props(s)[n] && (props(s)[n]!.maximum = 9),
  'minimum 1': (s, n) => props(s)[n] && (props(s)[n]!.minimum = 1),
  'drop minimum': (s, n) => props(s)[n] && delete props(s)[n]!.minimum,
  'maxLength 1': (s, n) => props(s)[n] && (props(s)[n]!.maxLength = 1),
  'drop maxLength': (s, n) => props(s)[n] && delete props(s)[n]!.maxLength,
  'items type': (s, n) => props(s)[n]?.items !== undefined && ((props(s)[n]!.items as Schema).type = 'string'),
  '$ref indirection': (s, n) => {
    // Not twice: a definition that is its own $ref is no schema (Ajv recurses forever on it). The
    // property may have been wrapped since (an anyOf around the $ref), so the definition's name
    // decides, not the property's own $ref (seed 2055212977 made D<n> refer to itself).
    if (!props(s)[n] || props(s)[n]!.$ref !== undefined || (isDefs(s.$defs) && s.$defs[`D${n}`] !== undefined)) return;
    s.$defs = { ...(s.$defs as Schema | undefined), [`D${n}`]: props(s)[n] };
    props(s)[n] = { $ref: `#/$defs/D${n}` };
  },
  'add unreferenced definition': (s, n, x) => (s.$defs = { ...(s.$defs as Schema | undefined), [`Extra${n}`]: x }),
  'change unreferenced definition': (s) => isDefs(s.$defs) && s.$defs.Unused !== undefined && (s.$defs = { ...s.$defs, Unused: { type: 'number', minimum: 3 } }),
  'close additionalProperties': (s) => (s.additionalProperties = false),
  'open additionalProperties': (s) => delete s.additionalProperties,
  'additionalProperties schema': (s) => (s.additionalProperties = { type: 'number' }),
  description: (s, n) => props(s)[n] && (props(s)[n]!.description = `about ${n}`),
  title: (s) => (s.title = 'Arguments'),
  default: (s, n) => props(s)[n] && (props(s)[n]!.default = 'x'),
};
const MUTATION_NAMES = Object.keys(MUTATIONS);

function isDefs(value: unknown): value is Record<string, Schema> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const step = fc.tuple(fc.constantFrom(...MUTATION_NAMES), fc.constantFrom(...NAMES), leaf);
const randomValue = fc.dictionary(
  fc.constantFrom(...NAMES, 'x'),
  fc.oneof(word, fc.integer({ min: -1, max: 8 }), fc.double({ min: 0, max: 7, noNaN: true }), fc.boolean(), fc.constant(null), fc.array(fc.oneof(word, fc.integer({ min: 0, max: 3 })), { maxLength: 2 })),
  { maxKeys: 4 },
);

function apply(pinned: Schema, steps: ReadonlyArray<readonly [string, string, Schema]>): Schema {
  const live = structuredClone(pinned);
  for (const [name, property, extra] of steps) MUTATIONS[name]!(live, property, structuredClone(extra));
  return live;
}

describe('impact: property — every word agrees with Ajv', () => {
  const seen = new Map<ChangeImpact | 'none', number>();
  const stepsSeen = new Set<string>();
  for (const [label, maxSteps, runs] of [['one change', 1, 500], ['up to three changes', 3, 250]] as const) {
    test(`${label}: widening keeps every old-valid value, cosmetic validates alike, breaking has a witness`, () => {
      fc.assert(
        fc.property(base, fc.array(step, { minLength: 1, maxLength: maxSteps }), fc.array(randomValue, { maxLength: 12 }), (pinned, steps, values) => {
          const live = apply(pinned, steps);
          const changes = diffInputSchemas(pinned, live);
          const impact = worstImpact(changes);
          seen.set(impact ?? 'none', (seen.get(impact ?? 'none') ?? 0) + 1);
          for (const [name] of steps) stepsSeen.add(name);
          const verdict = check(impact, pinned, live, [...candidates(pinned, live), ...values]);
          assert.ok(verdict.ok, `${steps.map(([name, property]) => `${name} ${property}`).join(', ')}: ${verdict.reason}\n  pinned ${JSON.stringify(pinned)}\n  live   ${JSON.stringify(live)}\n  ${changes.map((entry) => `${entry.detail} (${entry.impact})`).join('; ')}`);
        }),
        { numRuns: runs },
      );
    });
  }
  test('the generator reaches every word and every mutation', () => {
    // Runs after the properties above (node:test runs a file's tests in order).
    for (const impact of ['breaking', 'may-break', 'widening', 'cosmetic'] as const) assert.ok((seen.get(impact) ?? 0) > 5, `${impact}: ${seen.get(impact) ?? 0}`);
    assert.deepEqual(MUTATION_NAMES.filter((name) => !stepsSeen.has(name)), []);
  });
});

describe('impact: the patterns of issue 12, each checked by Ajv', () => {
  const message = { type: 'string' };
  const cases: Array<[string, Schema, Schema, ChangeImpact | undefined]> = [
    ['optional property added where undeclared properties are accepted', { type: 'object', properties: { m: message } }, { type: 'object', properties: { m: message, n: { type: 'number' } } }, 'may-break'],
    ['optional property added where they are not', { type: 'object', properties: { m: message }, additionalProperties: false }, { type: 'object', properties: { m: message, n: { type: 'number' } }, additionalProperties: false }, 'widening'],
    ['a property wrapped into anyOf with a new alternative', { type: 'object', properties: { m: message } }, { type: 'object', properties: { m: { anyOf: [message, { type: 'null' }] } } }, 'widening'],
    ['a changed definition nothing references', { type: 'object', properties: { m: message }, $defs: { X: { type: 'string' } } }, { type: 'object', properties: { m: message }, $defs: { X: { type: 'number' } } }, 'cosmetic'],
    ['a property replaced by a $ref to an equal schema', { type: 'object', properties: { m: message } }, { type: 'object', properties: { m: { $ref: '#/$defs/M' } }, $defs: { M: message } }, 'cosmetic'],
    ['an added definition nothing references', { type: 'object', properties: { m: message } }, { type: 'object', properties: { m: message }, definitions: { X: {} } }, 'cosmetic'],
    ['a required property added (the README demo) stays breaking', { type: 'object', properties: { m: message }, required: ['m'] }, { type: 'object', properties: { m: message, locale: message }, required: ['m', 'locale'] }, 'breaking'],
    // The first level of a recursive definition is inlined and judged; deeper levels only may break.
    ['a cyclic $ref: a property required at the first level breaks', { type: 'object', properties: { t: { $ref: '#/$defs/T' } }, $defs: { T: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/T' } } } } } }, { type: 'object', properties: { t: { $ref: '#/$defs/T' } }, $defs: { T: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/T' } } }, required: ['kids'] } } }, 'breaking'],
  ];
  for (const [name, pinned, live, expected] of cases) {
    test(name, () => {
      const impact = worstImpact(diffInputSchemas(pinned, live));
      assert.equal(impact, expected);
      const verdict = check(impact, pinned, live, candidates(pinned, live));
      assert.ok(verdict.ok, verdict.reason);
      // may-break here is a real possibility, not a shrug: Ajv finds a call that is rejected now.
      if (impact === 'may-break') assert.ok(!check('widening', pinned, live, candidates(pinned, live)).ok, 'a may-break that Ajv shows to be a widening');
    });
  }
  test('the referee itself resolves $ref and $defs as the classifier assumes', () => {
    const validate = compile({ type: 'object', properties: { m: { $ref: '#/$defs/M' } }, $defs: { M: { type: 'string' } } });
    assert.equal(validate({ m: 'x' }), true);
    assert.equal(validate({ m: 1 }), false);
  });
});

describe('impact: hostile schemas stay cheap and never throw', () => {
  test('nested alternatives, a $ref fan-out and deep nesting', () => {
    let before: Schema = { type: 'string' };
    let after: Schema = { type: 'string' };
    for (let index = 0; index < 25; index++) {
      before = { anyOf: [before, { type: 'null' }, { type: 'number' }] };
      after = { anyOf: [after, { type: 'null' }, { type: 'integer' }, { type: 'boolean' }] };
    }
    const definitions: Record<string, Schema> = { D30: { type: 'string' } };
    for (let index = 0; index < 30; index++) definitions[`D${index}`] = { type: 'object', properties: { x: { $ref: `#/$defs/D${index + 1}` }, y: { $ref: `#/$defs/D${index + 1}` } } };
    const fanOut = { $ref: '#/$defs/D0', $defs: definitions };
    const fanOutChanged = { $ref: '#/$defs/D0', $defs: { ...definitions, D30: { type: 'number' } } };
    let deep: Schema = {};
    for (let index = 0; index < 20_000; index++) deep = { properties: { p: deep } };
    const started = Date.now();
    // Past the budgets nothing is certain: a widening of nested alternatives is reported as may-break.
    assert.equal(worstImpact(diffInputSchemas(before, after)), 'may-break');
    assert.ok(diffInputSchemas(fanOut, fanOutChanged).length > 0);
    assert.deepEqual(diffInputSchemas(deep, {}).map((entry) => entry.impact), ['may-break']);
    assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  });
});
