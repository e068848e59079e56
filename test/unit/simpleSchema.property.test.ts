/**
 * core/verify/simpleSchema.ts, the verdict without Ajv, held to its contract against Ajv itself.
 *
 * Generated cases: live input schemas mostly inside the subset (`type` as a name or an array of
 * distinct names, `properties`, `required` (sometimes naming a key no property declares),
 * `additionalProperties` true, false or a schema, `items`, the annotations, the value keywords
 * enum, const, the numeric and length bounds and format, a root `$schema` of draft-07, 2020-12, an
 * unknown draft, a number or none, nesting 0–4), and in about a quarter of the cases one mutation
 * that steps just outside it (an object in an enum, a malformed minLength or minimum, multipleOf,
 * pattern, anyOf, a boolean
 * subschema, a property or required name that Object.prototype has, duplicate `required` entries,
 * a type array with a duplicate, `type: []`, an unknown type name, a non-string annotation, a nested
 * `$schema`, tuple `items`, a malformed `additionalProperties`). The step's `arguments` are written
 * as JSONC text (comments and trailing commas in half the cases) and read as the real path reads
 * them (`parseJsonDocument`, then `readArguments`): values that fit the schema, in "wrong" cases
 * also values that do not (other types, required keys left out, undeclared keys), whole templates,
 * strings with a template inside, `{"$secret": …}` objects, keys written without a value (a syntax
 * error: present, value unknown), duplicate keys (the last wins), integers, fractions, -0 and
 * exponents such as 1e400, which is Infinity once parsed.
 *
 * Properties:
 * 1. Soundness: `isSimpleSchema` is true exactly when no mutation was applied, and then both Ajv
 *    dialects compile the schema (without its root `$schema`, as arguments.ts compiles it) with
 *    arguments.ts's own AJV_OPTIONS. Whenever `acceptedWithoutAjv` is true, Ajv (the dialect
 *    `chooseDialect` picks) reports no error that survives rule 1 of arguments.ts: none whose
 *    instance is outside every any-value placeholder. The share of accepted cases is asserted, so
 *    that the property cannot hold by never accepting.
 * 2. The whole check is unchanged: `checkArguments` (which takes the fast path when it can) returns
 *    exactly the problems that the Ajv path returns for the same arguments, with and without an
 *    `arguments` node. The Ajv path is forced by adding `"examples": []` to the schema's root: the
 *    subset does not admit `examples`, so `checkArguments` compiles, and the keyword is inert for
 *    Ajv in both dialects: it is one of Ajv's metadata vocabulary (title, description, default,
 *    deprecated, readOnly, writeOnly, examples), keywords Ajv defines without any code, and both
 *    meta-schemas require only that it be an array. Inert also means it moves no error's
 *    instancePath or schemaPath, which a unit case below checks in both dialects.
 * Then hand-written cases for the edges.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { parseJsonDocument } from '../../server/src/core/json/jsonDocument';
import type { Problem } from '../../server/src/core/problems';
import { AJV_OPTIONS, ArgumentValidators, checkArguments, chooseDialect, type Placeholder, readArguments } from '../../server/src/core/verify/arguments';
import { acceptedWithoutAjv, isSimpleSchema } from '../../server/src/core/verify/simpleSchema';

const RUNS = 2000;

type Schema = Record<string, unknown>;

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Schemas

/** Property names: two need JSON-pointer escapes in Ajv's instancePath (`/` is `~1`, `~` is `~0`), one is empty, one has a quote Ajv's generated code must escape. */
const KEYS = ['a', 'b', 'c', 'd/e', 'm~n', '', 'q"r'];
const TYPE_NAMES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const DRAFT_04 = 'http://json-schema.org/draft-04/schema#';

const annotations = {
  description: fc.constantFrom('what it is', ''),
  title: fc.constant('Title'),
  $comment: fc.constant('a comment'),
  default: fc.constantFrom<unknown>(0, 'x', null, { nested: [1] }),
};

const typeSpec: fc.Arbitrary<unknown> = fc.oneof(fc.constantFrom(...TYPE_NAMES), fc.shuffledSubarray(TYPE_NAMES, { minLength: 1, maxLength: 3 }));

/**
 * The value keywords of the subset, with values the value generators below often meet and often
 * miss: enum and const of primitives (including the 1 that "1.0" and "1e0" also are, and -0),
 * numeric bounds around 0 and 1, length bounds around the generated strings' and arrays' lengths.
 */
const PRIMITIVES: readonly unknown[] = ['x', 'hello', '', 1, 0, -7, 1.5, true, false, null];
const valueKeywords = {
  enum: fc.subarray([...PRIMITIVES], { minLength: 1 }),
  const: fc.constantFrom(...PRIMITIVES),
  minimum: fc.constantFrom(0, 1, -7.5),
  maximum: fc.constantFrom(1, 100, 0),
  exclusiveMinimum: fc.constantFrom(0, -1),
  exclusiveMaximum: fc.constantFrom(2, 1e30),
  minLength: fc.constantFrom(0, 1, 5),
  maxLength: fc.constantFrom(1, 5, 30),
  minItems: fc.constantFrom(0, 1, 2),
  maxItems: fc.constantFrom(1, 3),
  format: fc.constantFrom('uri', 'date-time', 'no-such-format'),
};

/** A leaf: a type and annotations, and in a third of the cases one or two value keywords. */
const leafSchema: fc.Arbitrary<Schema> = fc.oneof(
  { arbitrary: fc.record({ type: typeSpec, ...annotations }, { requiredKeys: [] }), weight: 2 },
  {
    arbitrary: fc
      .tuple(fc.record({ type: typeSpec, ...annotations }, { requiredKeys: [] }), fc.shuffledSubarray(Object.keys(valueKeywords), { minLength: 1, maxLength: 2 }))
      .chain(([base, keywords]) =>
        fc.record(Object.fromEntries(keywords.map((keyword) => [keyword, valueKeywords[keyword as keyof typeof valueKeywords] as fc.Arbitrary<unknown>]))).map((extra) => ({ ...base, ...extra })),
      ),
    weight: 1,
  },
);

/** An object schema whose property schemas come from `sub`; `required` names declared keys, and sometimes "absent", which none declares. */
function objectSchema(sub: fc.Arbitrary<Schema>): fc.Arbitrary<Schema> {
  return fc.dictionary(fc.constantFrom(...KEYS), sub, { maxKeys: 3, noNullPrototype: true }).chain((properties) =>
    fc
      .record(
        {
          type: fc.constantFrom<unknown>('object', 'object', ['object', 'null']),
          required: fc.subarray([...Object.keys(properties), 'absent']),
          additionalProperties: fc.oneof(fc.boolean(), sub),
          description: annotations.description,
        },
        { requiredKeys: [] },
      )
      .map((rest) => ({ ...rest, properties })),
  );
}

function arraySchema(sub: fc.Arbitrary<Schema>): fc.Arbitrary<Schema> {
  return fc.record({ type: fc.constantFrom<unknown>('array', ['array', 'string']), items: sub, title: annotations.title }, { requiredKeys: [] });
}

/** Subset schemas nesting at most `depth` levels below themselves. */
const schemaAtDepth: fc.Arbitrary<Schema>[] = [leafSchema];
for (let depth = 1; depth <= 3; depth++) {
  const sub = schemaAtDepth[depth - 1]!;
  schemaAtDepth.push(fc.oneof({ arbitrary: leafSchema, weight: 2 }, { arbitrary: objectSchema(sub), weight: 2 }, { arbitrary: arraySchema(sub), weight: 1 }));
}

/** Mutations that each take a schema just outside the subset. */
const MUTATIONS = [
  'enum',
  'minLength',
  'pattern',
  'minimum',
  'multipleOf',
  'anyOf',
  'booleanSubschema',
  'prototypeProperty',
  'prototypeRequired',
  'duplicateRequired',
  'duplicateType',
  'emptyType',
  'unknownType',
  'nonStringAnnotation',
  'nestedSchema',
  'tupleItems',
  'malformedAdditional',
] as const;
type Mutation = (typeof MUTATIONS)[number];

const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString'];

/** Every schema object of a subset schema, root first. */
function schemaNodes(schema: Schema): Schema[] {
  const found: Schema[] = [schema];
  for (let index = 0; index < found.length; index++) {
    const node = found[index]!;
    if (isObject(node.properties)) for (const sub of Object.values(node.properties)) if (isObject(sub)) found.push(sub);
    if (isObject(node.additionalProperties)) found.push(node.additionalProperties);
    if (isObject(node.items)) found.push(node.items);
  }
  return found;
}

/** A member set the way JSON.parse sets it: "__proto__" too becomes an own property. */
function setOwn(target: Schema, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function mutate(schema: Schema, mutation: Mutation, pick: number): void {
  const nodes = schemaNodes(schema);
  const node = nodes[pick % nodes.length]!;
  const name = PROTOTYPE_NAMES[pick % PROTOTYPE_NAMES.length]!;
  const properties = (): Schema => {
    const copy: Schema = {};
    if (isObject(node.properties)) for (const [key, value] of Object.entries(node.properties)) setOwn(copy, key, value);
    node.properties = copy;
    return copy;
  };
  switch (mutation) {
    case 'enum':
      // Objects in an enum are compared deeply by Ajv: outside the subset.
      node.enum = ['x', { a: 1 }];
      break;
    case 'minLength':
      node.minLength = [1.5, -1, '1'][pick % 3];
      break;
    case 'pattern':
      node.pattern = '^[a-c]*$';
      break;
    case 'minimum':
      node.minimum = ['0', true][pick % 2];
      break;
    case 'multipleOf':
      node.multipleOf = 2;
      break;
    case 'anyOf':
      node.anyOf = [{ type: 'string' }, { type: 'null' }];
      break;
    case 'booleanSubschema':
      setOwn(properties(), 'b', pick % 2 === 0);
      break;
    case 'prototypeProperty':
      setOwn(properties(), name, { type: 'string' });
      break;
    case 'prototypeRequired':
      node.required = [...(Array.isArray(node.required) ? node.required : []), name];
      break;
    case 'duplicateRequired':
      node.required = [...(Array.isArray(node.required) ? node.required : []), 'a', 'a'];
      break;
    case 'duplicateType':
      node.type = ['string', 'integer', 'string'];
      break;
    case 'emptyType':
      node.type = [];
      break;
    case 'unknownType':
      node.type = 'any';
      break;
    case 'nonStringAnnotation':
      node[['description', 'title', '$comment'][pick % 3]!] = [5, null, {}][pick % 3];
      break;
    case 'nestedSchema':
      if (nodes.length > 1) nodes[1 + (pick % (nodes.length - 1))]!.$schema = DRAFT_07;
      else setOwn(properties(), 'z', { $schema: DRAFT_07, type: 'string' });
      break;
    case 'tupleItems':
      node.items = [{ type: 'string' }];
      break;
    case 'malformedAdditional':
      node.additionalProperties = 'no';
      break;
  }
}

interface SchemaCase {
  /** The live schema, as from JSON (own "__proto__" members, Object's prototype). */
  readonly schema: Schema;
  /** The mutation applied, if any: then the schema is outside the subset. */
  readonly mutation: Mutation | undefined;
}

const schemaCase: fc.Arbitrary<SchemaCase> = fc
  .tuple(
    fc.oneof(
      { arbitrary: fc.constant<Schema>({}), weight: 1 },
      { arbitrary: fc.integer({ min: 0, max: 3 }).chain((depth) => objectSchema(schemaAtDepth[depth]!)), weight: 12 },
    ),
    fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: fc.tuple(fc.constantFrom(...MUTATIONS), fc.nat()), weight: 1 }),
    fc.constantFrom<unknown>(undefined, undefined, DRAFT_07, DRAFT_2020, DRAFT_04, 5),
    fc.constantFrom<unknown>('object', 'object', 'object', undefined, ['object', 'null'], 'string'),
  )
  .map(([generated, mutation, $schema, rootType]) => {
    // Live schemas arrive as JSON: a round trip gives every object Object's prototype and own members only.
    const schema = JSON.parse(JSON.stringify(generated)) as Schema;
    if (rootType === undefined) delete schema.type;
    else schema.type = rootType;
    if ($schema !== undefined) schema.$schema = $schema;
    if (mutation) mutate(schema, mutation[0], mutation[1]);
    return { schema: JSON.parse(JSON.stringify(schema)) as Schema, mutation: mutation?.[0] };
  });

// ---------------------------------------------------------------------------------------------
// Arguments, as a tree that is written out as JSONC

/** A number as written in the text (`1.0`, `-0`, `1e400`). */
class NumberText {
  constructor(readonly text: string) {}
}
/** An object as written: members in order, duplicates allowed; an undefined value is a key written without one. */
class Members {
  constructor(readonly entries: ReadonlyArray<readonly [string, Tree | undefined]>) {}
}
type Tree = string | boolean | null | NumberText | Members | Tree[];

const INTEGER_TEXTS = ['0', '1', '-7', '1.0', '-0', '-0.0', '1e2', '2.50e1', '9007199254740993', '6.02e23'];
const FRACTION_TEXTS = ['1.5', '-0.25', '1e-3', '0.1', '5e-324'];
/** Infinity once parsed; Ajv (strictNumbers off) takes them for numbers and integers. */
const INFINITE_TEXTS = ['1e400', '-1e400', '1E999'];

const integerTree = fc.oneof({ arbitrary: fc.constantFrom(...INTEGER_TEXTS), weight: 12 }, { arbitrary: fc.constantFrom(...INFINITE_TEXTS), weight: 1 }).map((text) => new NumberText(text));
const numberTree = fc
  .oneof({ arbitrary: fc.constantFrom(...INTEGER_TEXTS, ...FRACTION_TEXTS), weight: 12 }, { arbitrary: fc.constantFrom(...INFINITE_TEXTS), weight: 1 })
  .map((text) => new NumberText(text));
const wholeTemplate = fc.constantFrom('{{event.x}}', '{{ steps.fetch.output }}');
const partialTemplate = fc.constantFrom('a {{x}} b', 'Inbound: {{event.subject}}', '{{a}}{{b}}');
const plainString = fc.constantFrom('', 'x', 'hello', 'a/b', '{{', '}} {{', '{not a template}');
/** `{"$secret": …}` objects; any object with a `$secret` member is one (core/secrets.ts). */
const secretTree = fc.constantFrom(new Members([['$secret', 'NAME']]), new Members([['note', new NumberText('1')], ['$secret', 'TOKEN']]));
/** Values known only at run time: any value fits them. */
const anyValuePlaceholder: fc.Arbitrary<Tree> = fc.oneof(wholeTemplate, secretTree);

const anyTree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small' },
    plainString,
    partialTemplate,
    wholeTemplate,
    numberTree,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('tree'), { maxLength: 3 }),
    fc.array(fc.tuple(fc.constantFrom(...KEYS, 'x'), tie('tree')), { maxLength: 3 }).map((entries) => new Members(entries)),
    secretTree,
  ),
})).tree;

/** A value for `schema`; in a wrong case some values anywhere do not fit it. */
function fits(schema: unknown, wrong: boolean): fc.Arbitrary<Tree> {
  if (!isObject(schema)) return anyTree;
  const named = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) && schema.type.length > 0 ? schema.type.map(String) : TYPE_NAMES;
  const choices: fc.WeightedArbitrary<Tree>[] = [
    { arbitrary: fc.oneof(...named.map((type) => ofType(type, schema, wrong))), weight: 10 },
    { arbitrary: anyValuePlaceholder, weight: 1 },
  ];
  if (wrong) {
    choices.push({ arbitrary: anyTree, weight: 2 });
    // Near misses: a value of a neighbouring type that none of the schema's types admits.
    const misses = NEAR_MISSES.filter((miss) => !miss.types.some((type) => named.includes(type))).map((miss) => miss.tree);
    if (misses.length > 0) choices.push({ arbitrary: fc.constantFrom(...misses), weight: 2 });
  }
  return fc.oneof(...choices);
}

/** Values with the JSON Schema types each of them has (an integer is a number too). */
const NEAR_MISSES: ReadonlyArray<{ readonly tree: Tree; readonly types: readonly string[] }> = [
  { tree: new NumberText('1.5'), types: ['number'] },
  { tree: new NumberText('1'), types: ['number', 'integer'] },
  { tree: '1', types: ['string'] },
  { tree: 'true', types: ['string'] },
  { tree: true, types: ['boolean'] },
  { tree: null, types: ['null'] },
  { tree: [], types: ['array'] },
  { tree: new Members([]), types: ['object'] },
];

function ofType(type: string, schema: Schema, wrong: boolean): fc.Arbitrary<Tree> {
  switch (type) {
    case 'string':
      return fc.oneof(plainString, partialTemplate);
    case 'integer':
      return integerTree;
    case 'number':
      return numberTree;
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(fits(schema.items, wrong), { maxLength: 3 });
    case 'object':
      return objectTree(schema, wrong);
    default:
      return anyTree;
  }
}

type Entry = readonly [string, Tree | undefined];

/** A member's value: now and then a key written without a value (present, value unknown). */
function memberValue(schema: unknown, wrong: boolean): fc.Arbitrary<Tree | undefined> {
  return fc.oneof({ arbitrary: fits(schema, wrong), weight: 15 }, { arbitrary: fc.constant(undefined), weight: 1 });
}

/** An object for `schema`: its required keys, some optional ones, extra keys where allowed; sometimes a duplicate key whose last value counts. */
function objectTree(schema: Schema, wrong: boolean): fc.Arbitrary<Tree> {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : [];
  const additional = schema.additionalProperties;
  const extraSchema = isObject(additional) ? additional : undefined;
  const parts: fc.Arbitrary<readonly Entry[]>[] = [];
  const none = fc.constant<readonly Entry[]>([]);
  const keyed = (key: string, value: fc.Arbitrary<Tree | undefined>): fc.Arbitrary<Entry[]> =>
    fc.tuple(value, fc.oneof({ arbitrary: fc.constant(undefined), weight: 8 }, { arbitrary: anyTree, weight: 1 })).map(([last, earlier]): Entry[] => (earlier === undefined ? [[key, last]] : [[key, earlier], [key, last]]));
  for (const key of new Set([...Object.keys(properties), ...required])) {
    const declared = Object.hasOwn(properties, key);
    const entry = keyed(key, memberValue(declared ? properties[key] : extraSchema, wrong));
    const always = required.includes(key) && !wrong;
    parts.push(always ? entry : fc.oneof({ arbitrary: entry, weight: required.includes(key) ? 3 : 1 }, { arbitrary: none, weight: 1 }));
  }
  if (additional !== false || wrong) {
    const extraKey = fc.constantFrom('x', 'x', 'y', '__proto__', 'constructor', 'toString', '$secret');
    const extras: fc.Arbitrary<readonly Entry[]> = fc.array(fc.tuple(extraKey, memberValue(extraSchema, wrong)), { maxLength: 2 });
    parts.push(fc.oneof({ arbitrary: none, weight: 2 }, { arbitrary: extras, weight: 1 }));
  }
  return fc.tuple(...parts).map((groups) => new Members(groups.flat()));
}

function render(tree: Tree, jsonc: boolean): string {
  if (tree instanceof NumberText) return tree.text;
  if (tree instanceof Members) {
    const members = tree.entries.map(([key, value]) => `${JSON.stringify(key)}: ${value === undefined ? '' : render(value, jsonc)}`);
    if (members.length === 0) return jsonc ? '{ /* none */ }' : '{}';
    return jsonc ? `{ // members\n${members.join(',\n')},\n}` : `{${members.join(', ')}}`;
  }
  if (Array.isArray(tree)) {
    const items = tree.map((item) => render(item, jsonc));
    return jsonc && items.length > 0 ? `[/* items */ ${items.join(', ')},]` : `[${items.join(', ')}]`;
  }
  return JSON.stringify(tree);
}

interface GeneratedCase extends SchemaCase {
  readonly wrong: boolean;
  /** The `arguments` value as JSONC text; always an object (or a $secret object). */
  readonly text: string;
}

const generatedCase: fc.Arbitrary<GeneratedCase> = fc
  .tuple(schemaCase, fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, { arbitrary: fc.constant(true), weight: 2 }), fc.boolean())
  .chain(([{ schema, mutation }, wrong, jsonc]) =>
    fc
      .oneof({ arbitrary: objectTree(schema, wrong), weight: 15 }, { arbitrary: secretTree, weight: 1 })
      .map((tree) => ({ schema, mutation, wrong, text: render(tree, jsonc) })),
  );

function readText(text: string): { value: unknown; placeholders: Placeholder[] } {
  const root = parseJsonDocument(text).root;
  assert.ok(root && root.type === 'object', `the arguments text reads as an object: ${text}`);
  return readArguments(root);
}

// ---------------------------------------------------------------------------------------------
// The oracle: Ajv itself, with rule 1 of arguments.ts

const draft07 = new Ajv(AJV_OPTIONS);
const draft2020 = new Ajv2020(AJV_OPTIONS);

/** Compiles `schema` as arguments.ts does (its root `$schema` removed), leaving nothing registered in `ajv`. */
function compileWith(ajv: Ajv | Ajv2020, schema: Schema): ValidateFunction {
  const copy: Schema = { ...schema };
  delete copy.$schema;
  try {
    return ajv.compile(copy);
  } finally {
    ajv.removeSchema(copy);
  }
}

/** RFC 6901 segments of an instance path (`/d~1e` → `d/e`, `/m~0n` → `m~n`). */
function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function atOrBelow(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, index) => path[index] === segment);
}

/** Ajv's errors for `value`, without those at or below an any-value placeholder (rule 1 of arguments.ts). */
function errorsAfterRule1(validate: ValidateFunction, value: unknown, placeholders: readonly Placeholder[]): { all: ErrorObject[]; kept: ErrorObject[] } {
  validate(value);
  const all = validate.errors ?? [];
  const anyValues = placeholders.filter((placeholder) => placeholder.kind === 'any').map((placeholder) => placeholder.path);
  const kept = all.filter((error) => !anyValues.some((path) => atOrBelow(pointerSegments(error.instancePath), path)));
  return { all, kept };
}

function hasInfinity(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (Array.isArray(value)) return value.some(hasInfinity);
  return isObject(value) && Object.values(value).some(hasInfinity);
}

function describeCase(generated: GeneratedCase, extra = ''): string {
  return `schema ${JSON.stringify(generated.schema)}\narguments ${generated.text}${extra}`;
}

// ---------------------------------------------------------------------------------------------
// The properties

describe('simpleSchema: property — the verdict without Ajv is one Ajv would give', () => {
  test('soundness: isSimpleSchema means both dialects compile; acceptedWithoutAjv means no Ajv error survives rule 1', (t) => {
    let simple = 0;
    let accepted = 0;
    let acceptedWithPlaceholders = 0;
    let acceptedOnlyByRule1 = 0;
    let declinedButClean = 0;
    fc.assert(
      fc.property(generatedCase, (generated) => {
        const { schema, mutation } = generated;
        const { value, placeholders } = readText(generated.text);
        const isSimple = isSimpleSchema(schema);
        assert.equal(isSimple, mutation === undefined, `isSimpleSchema after mutation ${String(mutation)}\n${describeCase(generated)}`);
        let chosen: ValidateFunction | undefined;
        if (isSimple) {
          simple++;
          const compiled07 = compileWith(draft07, schema);
          const compiled2020 = compileWith(draft2020, schema);
          chosen = chooseDialect(schema).dialect === '2020-12' ? compiled2020 : compiled07;
        }
        const verdict = acceptedWithoutAjv(schema, value, placeholders);
        if (verdict) assert.ok(isSimple, `accepted for a schema outside the subset\n${describeCase(generated)}`);
        if (!chosen) return;
        const { all, kept } = errorsAfterRule1(chosen, value, placeholders);
        if (verdict) {
          accepted++;
          if (placeholders.length > 0) acceptedWithPlaceholders++;
          if (all.length > 0) acceptedOnlyByRule1++;
          assert.deepEqual(
            kept.map((error) => `${error.instancePath} ${error.keyword} ${error.message ?? ''}`),
            [],
            `accepted without Ajv, but Ajv reports errors outside the placeholders\n${describeCase(generated)}`,
          );
        } else if (kept.length === 0) {
          declinedButClean++;
          // Beyond the contract, a guard on the fast path's reach: it declines arguments Ajv
          // accepts only when they hold an infinity (1e400), which it leaves to Ajv on purpose.
          assert.ok(hasInfinity(value), `declined although Ajv accepts, without an infinity\n${describeCase(generated)}`);
        }
      }),
      { numRuns: RUNS },
    );
    t.diagnostic(`${RUNS} cases: ${simple} in the subset, ${accepted} accepted without Ajv (${acceptedWithPlaceholders} with placeholders, ${acceptedOnlyByRule1} where Ajv's only errors were under any-value placeholders), ${declinedButClean} declined although Ajv with rule 1 finds nothing (each holding an infinity)`);
    // Not vacuous: a sizeable share is accepted, placeholders among them, and rule 1 is relied on.
    assert.ok(simple >= RUNS * 0.6, `in the subset: ${simple} of ${RUNS}`);
    assert.ok(accepted >= RUNS * 0.25, `accepted without Ajv: ${accepted} of ${RUNS}`);
    assert.ok(acceptedWithPlaceholders >= RUNS * 0.05, `accepted with placeholders: ${acceptedWithPlaceholders} of ${RUNS}`);
    assert.ok(acceptedOnlyByRule1 >= RUNS * 0.02, `accepted where Ajv's errors were all under placeholders: ${acceptedOnlyByRule1} of ${RUNS}`);
  });

  test('the whole check is unchanged: checkArguments returns what the Ajv path returns', (t) => {
    // One cache each, across runs: validators are keyed by the schema's pin, so a cached one is
    // the one this schema compiles to. The wrapped schema has another pin than the original.
    const withFastPath = new ArgumentValidators(64);
    const ajvOnly = new ArgumentValidators(64);
    let fastAnswered = 0;
    let findings = 0;
    const check = (liveSchema: Schema, text: string | undefined, validators: ArgumentValidators): Problem[] =>
      checkArguments({ step: 'step "call"', tool: 'random', argumentsNode: text === undefined ? undefined : parseJsonDocument(text).root, anchor: { offset: 0, length: 0 }, liveSchema }, validators);
    fc.assert(
      fc.property(generatedCase, (generated) => {
        const { schema, text } = generated;
        // Inert for Ajv in both dialects (see the header), and outside the subset: Ajv decides.
        const wrapped: Schema = { ...schema, examples: [] };
        assert.equal(isSimpleSchema(wrapped), false);
        const { value, placeholders } = readText(text);
        const fast = acceptedWithoutAjv(schema, value, placeholders);
        const ours = check(schema, text, withFastPath);
        const reference = check(wrapped, text, ajvOnly);
        if (fast) {
          fastAnswered++;
          assert.deepEqual(ours, [], `the fast path answered, so checkArguments returns nothing\n${describeCase(generated)}`);
        }
        if (reference.length > 0) findings++;
        assert.deepEqual(ours, reference, describeCase(generated, `\nthe fast path ${fast ? 'accepted' : 'declined'}`));
        // A step without `arguments` is checked as {}.
        assert.deepEqual(check(schema, undefined, withFastPath), check(wrapped, undefined, ajvOnly), `without arguments\n${describeCase(generated)}`);
      }),
      { numRuns: RUNS },
    );
    t.diagnostic(`${RUNS} cases: the fast path answered ${fastAnswered}, the Ajv path had findings for ${findings}`);
    assert.ok(fastAnswered >= RUNS * 0.25, `the fast path answered ${fastAnswered} of ${RUNS}`);
    assert.ok(findings >= RUNS * 0.15, `the Ajv path had findings for ${findings} of ${RUNS}`);
  });
});

// ---------------------------------------------------------------------------------------------
// Edges by hand

/** The fast path's verdict and checkArguments' codes for `text` against `schema`. */
function verdicts(schema: Schema, text: string): { accepted: boolean; codes: string[] } {
  const { value, placeholders } = readText(text);
  const problems = checkArguments({ step: 'step "call"', tool: 'edge', argumentsNode: parseJsonDocument(text).root, anchor: { offset: 0, length: 0 }, liveSchema: schema }, new ArgumentValidators());
  return { accepted: acceptedWithoutAjv(schema, value, placeholders), codes: problems.map((found) => found.code) };
}

/** A chain of `levels` schemas, each the only property of the one above it. */
function nested(levels: number): Schema {
  let schema: Schema = { type: 'string' };
  for (let level = 1; level < levels; level++) schema = { type: 'object', properties: { a: schema } };
  return schema;
}

describe('simpleSchema: edges', () => {
  const integer = { type: 'object', properties: { n: { type: 'integer' } } };

  test('"integer" takes 1.0 and -0, not 1.5; 1e400 (Infinity) is left to Ajv, which takes it', () => {
    assert.deepEqual(verdicts(integer, '{"n": 1.0}'), { accepted: true, codes: [] });
    assert.deepEqual(verdicts(integer, '{"n": -0}'), { accepted: true, codes: [] });
    assert.deepEqual(verdicts(integer, '{"n": 1.5}'), { accepted: false, codes: ['TP410'] });
    // Ajv with strictNumbers off reads Infinity as an integer (`!(x % 1)` is true for NaN); the
    // fast path does not claim to know that and declines.
    assert.deepEqual(verdicts(integer, '{"n": 1e400}'), { accepted: false, codes: [] });
  });

  test('each value keyword: a value it takes is accepted, one it refuses goes to Ajv, which reports it', () => {
    // [keyword schema of the property "v", a value it takes, a value it refuses], as arguments text.
    const cases: Array<[Schema, string, string]> = [
      [{ enum: ['a', 1, null] }, '1.0', '"b"'],
      [{ enum: [true] }, 'true', 'false'],
      [{ const: 'x' }, '"x"', '"y"'],
      [{ const: 0 }, '-0', '1'],
      [{ minimum: 1 }, '1', '0.5'],
      [{ maximum: 1 }, '1', '1.5'],
      [{ exclusiveMinimum: 1 }, '1.5', '1'],
      [{ exclusiveMaximum: 1 }, '0.5', '1'],
      [{ minLength: 2 }, '"😀😀"', '"😀"'],
      [{ maxLength: 1 }, '"😀"', '"ab"'],
      [{ minItems: 1 }, '[0]', '[]'],
      [{ maxItems: 1 }, '[0]', '[0, 1]'],
    ];
    for (const [keyword, takes, refuses] of cases) {
      const schema = { type: 'object', properties: { v: keyword } };
      assert.ok(isSimpleSchema(schema), JSON.stringify(keyword));
      assert.deepEqual(verdicts(schema, `{"v": ${takes}}`), { accepted: true, codes: [] }, `${JSON.stringify(keyword)} takes ${takes}`);
      assert.deepEqual(verdicts(schema, `{"v": ${refuses}}`), { accepted: false, codes: ['TP410'] }, `${JSON.stringify(keyword)} refuses ${refuses}`);
      // Bounds of another type's values say nothing: a string is no number, a number no string.
      assert.equal(verdicts(schema, '{"v": {}}').accepted, !('enum' in keyword || 'const' in keyword));
    }
    // A string with a template inside: its literal text decides only when it passes.
    const short = { type: 'object', properties: { v: { type: 'string', maxLength: 3 } } };
    assert.deepEqual(verdicts(short, '{"v": "{{x}}"}'), { accepted: true, codes: [] }, 'a whole template is any value');
    assert.equal(verdicts(short, '{"v": "long {{x}}"}').accepted, false, 'too long as written: Ajv decides');
    // format is an annotation (format validation is off).
    assert.deepEqual(verdicts({ type: 'object', properties: { v: { type: 'string', format: 'uri' } } }, '{"v": "not a uri"}'), { accepted: true, codes: [] });
  });

  test('a required key present as a whole template is accepted; a missing one is not', () => {
    const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false };
    assert.deepEqual(verdicts(schema, '{"title": "{{event.subject}}"}'), { accepted: true, codes: [] });
    assert.deepEqual(verdicts(schema, '{"title": {"$secret": "TITLE"}}'), { accepted: true, codes: [] });
    assert.deepEqual(verdicts(schema, '{}'), { accepted: false, codes: ['TP410'] });
  });

  test('an undeclared key under additionalProperties false is rejected even when it is a whole template', () => {
    const schema = { type: 'object', properties: { title: { type: 'string' } }, additionalProperties: false };
    // Ajv's error is at the object ("must NOT have additional properties"), not below the placeholder.
    assert.deepEqual(verdicts(schema, '{"title": "t", "extra": "{{event.x}}"}'), { accepted: false, codes: ['TP410'] });
    assert.deepEqual(verdicts(schema, '{"title": "t", "extra": {"$secret": "X"}}'), { accepted: false, codes: ['TP410'] });
  });

  test('a property named like a member of Object.prototype takes the schema out of the subset', () => {
    for (const name of ['constructor', '__proto__', 'toString']) {
      const schema = JSON.parse(`{"type": "object", "properties": {${JSON.stringify(name)}: {"type": "string"}}}`) as Schema;
      assert.equal(isSimpleSchema(schema), false, name);
      assert.equal(isSimpleSchema({ type: 'object', required: [name] }), false, `required ${name}`);
    }
    // Why: Ajv reads `data.constructor` of an object that lacks the key, and reports Object's own
    // constructor as "not a string"; only Ajv may give that verdict.
    assert.deepEqual(verdicts({ type: 'object', properties: { constructor: { type: 'string' } } }, '{}'), { accepted: false, codes: ['TP410'] });
  });

  test('$schema is read at the root only', () => {
    assert.equal(isSimpleSchema({ $schema: DRAFT_2020, type: 'object', properties: { a: { type: 'string' } } }), true);
    assert.equal(isSimpleSchema({ type: 'object', properties: { a: { $schema: DRAFT_07, type: 'string' } } }), false);
    assert.equal(isSimpleSchema({ type: 'array', items: { $schema: DRAFT_2020 } }), false);
  });

  test('a deep schema is not in the subset, and no depth exhausts the stack', () => {
    assert.equal(isSimpleSchema(nested(10)), true);
    assert.equal(isSimpleSchema(nested(40)), false);
    assert.equal(acceptedWithoutAjv(nested(40), {}, []), false);
    assert.equal(isSimpleSchema(nested(100_000)), false);
  });

  test('type [] and other type arrays the meta-schemas refuse are not in the subset', () => {
    assert.equal(isSimpleSchema({ type: [] }), false);
    assert.equal(isSimpleSchema({ type: ['string', 'string'] }), false);
    assert.equal(isSimpleSchema({ type: ['string', 'any'] }), false);
    assert.equal(isSimpleSchema({ type: ['string', 'null'] }), true);
  });

  test('a wide schema, for which Ajv generates other code, gets the same verdicts', () => {
    // More than 8 properties: Ajv's additionalProperties looks names up in the properties object
    // instead of comparing them one by one; the random schemas above have at most 3.
    const names = Array.from({ length: 12 }, (_, index) => `p${index}`);
    const schema = { type: 'object', properties: Object.fromEntries(names.map((name) => [name, { type: 'integer' }])), required: names, additionalProperties: false };
    const all = (value: string): string => `{${names.map((name) => `"${name}": ${value}`).join(', ')}`;
    assert.deepEqual(verdicts(schema, `${all('1')}}`), { accepted: true, codes: [] });
    assert.deepEqual(verdicts(schema, `${all('"{{event.n}}"')}}`), { accepted: true, codes: [] });
    assert.deepEqual(verdicts(schema, `${all('1')}, "p12": 1}`), { accepted: false, codes: ['TP410'] });
    assert.deepEqual(verdicts(schema, `${all('1')}, "hasOwnProperty": 1}`), { accepted: false, codes: ['TP410'] });
    assert.deepEqual(verdicts(schema, `${all('1.5')}}`), { accepted: false, codes: names.map(() => 'TP410') });
    assert.deepEqual(verdicts(schema, '{"p0": 1}'), { accepted: false, codes: names.slice(1).map(() => 'TP410') });
  });

  test('"examples" is inert for Ajv in both dialects: the same errors, at the same paths', () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' }, 'd/e': { type: 'array', items: { type: 'string' } } }, required: ['b'], additionalProperties: false };
    const wrapped = { ...schema, examples: [] };
    const values: unknown[] = [{}, { a: 1.5, 'd/e': [1, 'x'], z: null }, { b: 1, a: 2, 'd/e': [] }, [], 'text'];
    for (const ajv of [draft07, draft2020]) {
      const plain = compileWith(ajv, schema);
      const withExamples = compileWith(ajv, wrapped);
      for (const value of values) {
        const picture = (validate: ValidateFunction): unknown => {
          validate(value);
          return (validate.errors ?? []).map((error) => [error.instancePath, error.schemaPath, error.keyword, error.params]);
        };
        assert.deepEqual(picture(withExamples), picture(plain), JSON.stringify(value));
      }
    }
  });
});
