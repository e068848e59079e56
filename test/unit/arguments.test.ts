/**
 * A step's arguments against the live input schema: each case names the code and the exact text
 * its span covers; templates and $secret references never produce an error; and a property test
 * holds that, on plain values, the check agrees with Ajv run directly.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import Ajv from 'ajv';
import fc from 'fast-check';
import { ArgumentValidators, checkStepArguments, chooseDialect, isWholeTemplate, readArguments } from '../../server/src/core/verify/arguments';
import { analyzeBlueprint } from '../../server/src/core/documents/blueprint';
import { parseJsonDocument } from '../../server/src/core/json/jsonDocument';
import type { Problem } from '../../server/src/core/problems';
import { blueprintText } from '../support/checkHelpers';

const root = path.resolve(__dirname, '..', '..', '..');
const liveSchemas = new Map<string, Record<string, unknown>>();
for (const server of ['everything', 'filesystem', 'memory']) {
  const list = JSON.parse(readFileSync(path.join(root, 'test', 'fixtures', 'tool-lists', `${server}.json`), 'utf8')) as { tools: Array<{ name: string; inputSchema: Record<string, unknown> }> };
  for (const tool of list.tools) liveSchemas.set(tool.name, tool.inputSchema);
}
function live(name: string): Record<string, unknown> {
  const schema = liveSchemas.get(name);
  assert.ok(schema, name);
  return schema;
}

/** A blueprint whose one step calls `tool` with `args` (JSONC text), or without arguments. */
function stepText(tool: string, args: string | undefined): string {
  const argumentsMember = args === undefined ? '' : `,\n        "arguments": ${args}`;
  return blueprintText(`{
      "id": "call",
      "effect": "mcp.invoke",
      "input": {
        "toolName": "${tool}",
        "expectedSchemaHash": "fnv1a64:0000000000000000"${argumentsMember}
      }
    }`);
}

function check(tool: string, args: string | undefined, schema: unknown, validators?: ArgumentValidators): { text: string; problems: Problem[] } {
  const text = stepText(tool, args);
  const { model } = analyzeBlueprint(text);
  const step = model.steps[0];
  assert.ok(step);
  return { text, problems: checkStepArguments(step, schema, undefined, validators) };
}

interface Seen {
  code: string;
  covers: string;
}

function seen(tool: string, args: string | undefined, schema: unknown): Seen[] {
  const { text, problems } = check(tool, args, schema);
  return problems.map((found) => ({ code: found.code, covers: text.slice(found.span.offset, found.span.offset + found.span.length) }));
}

const strictObject = {
  type: 'object',
  properties: { title: { type: 'string' }, labels: { type: 'array', items: { type: 'string' } } },
  required: ['title'],
  additionalProperties: false,
};

const nullable = { type: 'object', properties: { due: { anyOf: [{ type: 'string' }, { type: 'null' }] } } };

const conditional = {
  type: 'object',
  properties: { kind: { type: 'string' }, reviewer: { type: 'string' } },
  if: { properties: { kind: { const: 'pr' } }, required: ['kind'] },
  then: { required: ['reviewer'] },
};

const typeConditional = {
  type: 'object',
  properties: { kind: {}, reviewer: { type: 'string' } },
  if: { properties: { kind: { type: 'string' } }, required: ['kind'] },
  then: { required: ['reviewer'] },
};

const uniqueTags = { type: 'object', properties: { tags: { type: 'array', uniqueItems: true } } };
const constObject = { type: 'object', properties: { mode: { const: { name: 'fast' } } } };
const shortCode = { type: 'object', properties: { code: { type: 'string', maxLength: 3 } } };

const pairs2020 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false } },
};

const CASES: Array<[string, string, string | undefined, unknown, Seen[]]> = [
  ['valid arguments', 'get-sum', '{ "a": 1, "b": 2 }', live('get-sum'), []],
  ['missing required → the "arguments" key', 'get-sum', '{ "a": 1 }', live('get-sum'), [{ code: 'TP410', covers: '"arguments"' }]],
  ['missing arguments altogether → the tool name', 'get-sum', undefined, live('get-sum'), [{ code: 'TP410', covers: '"get-sum"' }, { code: 'TP410', covers: '"get-sum"' }]],
  ['no required arguments, no arguments: fine', 'get-env', undefined, live('get-env'), []],
  ['wrong type → the value', 'get-sum', '{ "a": "one", "b": 2 }', live('get-sum'), [{ code: 'TP410', covers: '"one"' }]],
  ['enum → the value', 'get-annotated-message', '{ "messageType": "warning" }', live('get-annotated-message'), [{ code: 'TP410', covers: '"warning"' }]],
  ['constraint → the value', 'get-resource-links', '{ "count": 20 }', live('get-resource-links'), [{ code: 'TP410', covers: '20' }]],
  ['additional property → its key', 'create_issue', '{ "title": "t", "colour": "red" }', strictObject, [{ code: 'TP410', covers: '"colour"' }]],
  ['nested: a field inside an array item', 'create_entities', '{ "entities": [ { "name": "n", "entityType": 5, "observations": [] } ] }', live('create_entities'), [{ code: 'TP410', covers: '5' }]],
  ['nested: missing required in an array item → its brace', 'create_entities', '{ "entities": [ { "name": "n", "observations": [] } ] }', live('create_entities'), [{ code: 'TP410', covers: '{' }]],
  ['arrays: too few items', 'read_multiple_files', '{ "paths": [] }', live('read_multiple_files'), [{ code: 'TP410', covers: '[]' }]],
  ['arrays: a wrong item', 'read_multiple_files', '{ "paths": ["a", 3] }', live('read_multiple_files'), [{ code: 'TP410', covers: '3' }]],
  ['several problems, in document order of the errors', 'create_issue', '{ "colour": "red", "labels": [1] }', strictObject, [{ code: 'TP410', covers: '"arguments"' }, { code: 'TP410', covers: '"colour"' }, { code: 'TP410', covers: '1' }]],
  ['templates stand for any value', 'get-sum', '{ "a": "{{event.a}}", "b": "{{ event.b }}" }', live('get-sum'), []],
  ['$secret references stand for any value', 'get-sum', '{ "a": { "$secret": "A" }, "b": 2 }', live('get-sum'), []],
  ['a template satisfies an enum', 'get-annotated-message', '{ "messageType": "{{event.level}}" }', live('get-annotated-message'), []],
  ['a template satisfies a constraint', 'get-resource-links', '{ "count": "{{event.count}}" }', live('get-resource-links'), []],
  ['a template inside an array satisfies minItems and items', 'read_multiple_files', '{ "paths": ["{{event.path}}"] }', live('read_multiple_files'), []],
  ['a template does not stand for a missing argument', 'get-sum', '{ "a": "{{event.a}}" }', live('get-sum'), [{ code: 'TP410', covers: '"arguments"' }]],
  ['a template cannot be an undeclared property', 'create_issue', '{ "title": "t", "colour": "{{event.colour}}" }', strictObject, [{ code: 'TP410', covers: '"colour"' }]],
  ['a string with a template inside is still a string', 'get-sum', '{ "a": "sum: {{event.a}}", "b": 1 }', live('get-sum'), [{ code: 'TP410', covers: '"sum: {{event.a}}"' }]],
  ['a string with a template inside has unknown content', 'get-annotated-message', '{ "messageType": "{{event.level}}-x" }', live('get-annotated-message'), []],
  ['anyOf: one finding that names the alternatives', 'plan', '{ "due": 5 }', nullable, [{ code: 'TP410', covers: '5' }]],
  ['anyOf with a template: no finding', 'plan', '{ "due": "{{event.due}}" }', nullable, []],
  ['if/then: the then error, once', 'review', '{ "kind": "pr" }', conditional, [{ code: 'TP410', covers: '"arguments"' }]],
  ['if/then with a template in the condition: no finding', 'review', '{ "kind": "{{event.kind}}" }', conditional, []],
  ['if/then decided by a template\'s type: no finding', 'review', '{ "kind": "{{event.kind}}" }', typeConditional, []],
  ['if/then decided by a plain value: the finding stays', 'review', '{ "kind": "issue" }', typeConditional, [{ code: 'TP410', covers: '"arguments"' }]],
  ['uniqueItems over templates: no finding', 'tags', '{ "tags": ["{{a}}", "{{a}}"] }', uniqueTags, []],
  ['uniqueItems over plain values: the finding stays', 'tags', '{ "tags": ["a", "a"] }', uniqueTags, [{ code: 'TP410', covers: '["a", "a"]' }]],
  ['const over an object holding a template: no finding', 'fixed', '{ "mode": { "name": "{{event.mode}}" } }', constObject, []],
  ['a string with a template inside: maxLength unknown', 'short', '{ "code": "ab{{event.suffix}}" }', shortCode, []],
  ['a string with a template inside: pattern unknown', 'short', '{ "code": "{{event.prefix}}-1" }', { type: 'object', properties: { code: { type: 'string', pattern: '^[a-z]+$' } } }, []],
  ['2020-12: prefixItems are checked', 'pairs', '{ "pair": ["a", "b"] }', pairs2020, [{ code: 'TP410', covers: '"b"' }]],
  ['2020-12: items false after the prefix', 'pairs', '{ "pair": ["a", 1, 2] }', pairs2020, [{ code: 'TP410', covers: '2' }]],
  ['2020-12: a valid pair', 'pairs', '{ "pair": ["a", 1] }', pairs2020, []],
  ['uncompilable schema → TP411 on the "arguments" key', 'broken', '{ "a": 1 }', { type: 'object', properties: { a: { type: 'strin' } } }, [{ code: 'TP411', covers: '"arguments"' }]],
  ['unresolvable $ref → TP411', 'broken', '{ "a": 1 }', { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } }, [{ code: 'TP411', covers: '"arguments"' }]],
  ['uncompilable schema without arguments → TP411 on the tool name', 'broken', undefined, { type: 'object', properties: { a: { type: 'strin' } } }, [{ code: 'TP411', covers: '"broken"' }]],
  ['a tool without inputSchema: nothing to check', 'free', '{ "a": 1 }', undefined, []],
  ['arguments that are not an object: left to the shape check', 'get-sum', '[1, 2]', live('get-sum'), []],
];

describe('arguments: each case names its code and the exact text its span covers', () => {
  for (const [name, tool, args, schema, expected] of CASES) {
    test(name, () => assert.deepEqual(seen(tool, args, schema), expected));
  }
  test('the "wrong item" span is exact in a multi-line document', () => {
    // Covered by the cases above: spans come from jsonc-parser offsets, comments included.
    const { text, problems } = check('get-sum', '{\n  // a comment\n  "a": true, "b": 2 }', live('get-sum'));
    assert.deepEqual(problems.map((found) => text.slice(found.span.offset, found.span.offset + found.span.length)), ['true']);
  });
});

describe('arguments: messages name the step, the tool, the argument and what the live schema expects', () => {
  const messages = (tool: string, args: string | undefined, schema: unknown): string[] => check(tool, args, schema).problems.map((found) => found.message);
  test('missing', () =>
    assert.deepEqual(messages('get-sum', '{ "a": 1 }', live('get-sum')), ['step "call": argument "b" is missing; the live input schema of tool "get-sum" requires it']));
  test('missing, no arguments at all', () =>
    assert.deepEqual(messages('echo', undefined, live('echo')), ['step "call": argument "message" is missing (the step has no "arguments"); the live input schema of tool "echo" requires it']));
  test('type', () =>
    assert.deepEqual(messages('get-sum', '{ "a": "one", "b": 2 }', live('get-sum')), ['step "call": argument "a" is a string; the live input schema of tool "get-sum" expects a number']));
  test('enum', () =>
    assert.deepEqual(messages('get-annotated-message', '{ "messageType": "warning" }', live('get-annotated-message')), [
      'step "call": argument "messageType" is not an allowed value; the live input schema of tool "get-annotated-message" expects one of "error", "success", "debug"',
    ]));
  test('additional property', () =>
    assert.deepEqual(messages('create_issue', '{ "title": "t", "colour": "red" }', strictObject), [
      'step "call": argument "colour" is not declared; the live input schema of tool "create_issue" accepts only "title", "labels"',
    ]));
  test('nested path', () =>
    assert.deepEqual(messages('create_entities', '{ "entities": [ { "name": "n", "entityType": 5, "observations": [] } ] }', live('create_entities')), [
      'step "call": argument "entities[0].entityType" is an integer; the live input schema of tool "create_entities" expects a string',
    ]));
  test('constraint', () =>
    assert.deepEqual(messages('get-resource-links', '{ "count": 20 }', live('get-resource-links')), [
      'step "call": argument "count" does not match; the live input schema of tool "get-resource-links" says it must be <= 10',
    ]));
  test('anyOf', () =>
    assert.deepEqual(messages('plan', '{ "due": 5 }', nullable), ['step "call": argument "due" matches none of the alternatives; the live input schema of tool "plan" expects a string or null']));
  test('type arrays', () =>
    assert.deepEqual(messages('plan', '{ "due": 5 }', { type: 'object', properties: { due: { type: ['string', 'null'] } } }), [
      'step "call": argument "due" is an integer; the live input schema of tool "plan" expects a string or null',
    ]));
  test('an unknown $schema is read as draft-07, and the message says so', () =>
    assert.deepEqual(messages('get-sum', '{ "a": 1 }', { ...live('get-sum'), $schema: 'http://json-schema.org/draft-04/schema#' }), [
      'step "call": argument "b" is missing; the live input schema of tool "get-sum" requires it (its $schema "http://json-schema.org/draft-04/schema#" is not one Toolpin knows, so it was read as draft-07)',
    ]));
  test('an item past the end of a tuple', () =>
    assert.deepEqual(messages('pairs', '{ "pair": ["a", 1, 2] }', pairs2020), [
      'step "call": argument "pair[2]" and any later items are not accepted; the live input schema of tool "pairs" accepts at most 2 items here',
    ]));
  test('TP411 says why', () => {
    const [found] = check('broken', '{}', { type: 'object', properties: { a: { type: 'strin' } } }).problems;
    assert.equal(found?.severity, 'information');
    assert.match(found?.message ?? '', /^step "call": the arguments cannot be checked, because the live input schema of tool "broken" does not compile \(schema is invalid: /);
  });
  test('problems carry machine-readable data, never argument values', () => {
    const [found] = check('get-sum', '{ "a": "hunter2", "b": 1 }', live('get-sum')).problems;
    assert.deepEqual(found?.data, { tool: 'get-sum', argument: '/a', keyword: 'type', schemaPath: '#/properties/a/type' });
    assert.ok(!found?.message.includes('hunter2'));
  });
});

describe('arguments: dialects, placeholders and the validator cache', () => {
  test('dialect choice', () => {
    assert.deepEqual(chooseDialect({}), { dialect: 'draft-07', declared: undefined, assumed: false });
    assert.deepEqual(chooseDialect({ $schema: 'http://json-schema.org/draft-07/schema#' }), { dialect: 'draft-07', declared: 'http://json-schema.org/draft-07/schema#', assumed: false });
    assert.deepEqual(chooseDialect({ $schema: 'https://json-schema.org/draft/2020-12/schema' }), { dialect: '2020-12', declared: 'https://json-schema.org/draft/2020-12/schema', assumed: false });
    assert.deepEqual(chooseDialect({ $schema: 'https://json-schema.org/draft/2019-09/schema' }), { dialect: 'draft-07', declared: 'https://json-schema.org/draft/2019-09/schema', assumed: true });
  });
  test('whole templates', () => {
    assert.ok(isWholeTemplate('{{event.subject}}'));
    assert.ok(isWholeTemplate('{{ event.subject }}'));
    assert.ok(!isWholeTemplate('Inbound: {{event.subject}}'));
    assert.ok(!isWholeTemplate('{{a}} {{b}}'));
    assert.ok(!isWholeTemplate('{{a}}x'));
  });
  test('placeholders are found where they are', () => {
    const document = parseJsonDocument('{ "a": "{{x}}", "b": ["hi {{y}}", { "$secret": "S" }], "c": "plain", "__proto__": 1 }');
    const { value, placeholders } = readArguments(document.root!);
    assert.deepEqual(placeholders, [
      { path: ['a'], kind: 'any' },
      { path: ['b', '0'], kind: 'string' },
      { path: ['b', '1'], kind: 'any' },
    ]);
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.deepEqual(Object.keys(value as object), ['a', 'b', 'c', '__proto__']);
  });
  test('a repeated key replaces the placeholders of the value it replaces', () => {
    const replaced = readArguments(parseJsonDocument('{ "a": "{{x}}", "a": 5, "b": { "c": "{{y}}" }, "b": 1, "d": 2, "d": "{{z}}" }').root!);
    assert.deepEqual(replaced.placeholders, [{ path: ['d'], kind: 'any' }], 'only the last value of each key counts');
    assert.deepEqual(replaced.value, { a: 5, b: 1, d: '{{z}}' });
    // Through the whole check: the 5 that wins is not a string, whatever the template before it was.
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    for (const withAjv of [schema, { ...schema, examples: [] }]) {
      assert.deepEqual(check('t', '{ "a": "{{event.x}}", "a": 5 }', withAjv).problems.map((found) => found.code), ['TP410']);
      assert.deepEqual(check('t', '{ "a": 5, "a": "{{event.x}}" }', withAjv).problems, []);
    }
  });
  test('each live schema compiles once', () => {
    const validators = new ArgumentValidators();
    check('get-sum', '{ "a": 1 }', live('get-sum'), validators);
    check('get-sum', '{ "a": "x", "b": 1 }', structuredClone(live('get-sum')), validators);
    check('get-sum', '{ "b": 1 }', live('get-sum'), validators);
    assert.equal(validators.compileCount, 1);
    check('echo', '{}', live('echo'), validators);
    assert.equal(validators.compileCount, 2);
    assert.equal(validators.size, 2);
  });
  test('the cache is bounded', () => {
    // Asked of the cache itself: arguments a subset schema accepts would not reach it (simpleSchema.ts).
    const validators = new ArgumentValidators(2);
    for (const name of ['echo', 'get-sum', 'get-env']) assert.ok(validators.get(live(name)).ok, name);
    assert.equal(validators.size, 2);
    validators.get(live('echo'));
    assert.equal(validators.compileCount, 4);
  });
  test('two live schemas with the same $id do not clash', () => {
    const validators = new ArgumentValidators();
    const first = { $id: 'https://example.test/args', type: 'object', properties: { a: { type: 'string' } } };
    const second = { $id: 'https://example.test/args', type: 'object', properties: { a: { type: 'number' } } };
    assert.deepEqual(check('t', '{ "a": 1 }', first, validators).problems.map((found) => found.code), ['TP410']);
    assert.deepEqual(check('t', '{ "a": 1 }', second, validators).problems.map((found) => found.code), []);
  });
  test('a schema that is not plain JSON → TP411, not a crash', () => {
    assert.deepEqual(check('t', '{}', { type: 'object', properties: { a: { minimum: Number.NaN } } }).problems.map((found) => found.code), ['TP411']);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: on plain values (no templates), "no TP410" here ⇔ Ajv says valid.

const NAMES = ['a', 'b', 'c', 'd'];
const word = fc.stringMatching(/^[a-z0-9 ]{0,5}$/);

const leafSchema: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ type: fc.constant('string') }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('string'), minLength: fc.integer({ min: 0, max: 3 }), maxLength: fc.integer({ min: 1, max: 5 }) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constantFrom('number', 'integer'), minimum: fc.integer({ min: -5, max: 5 }), maximum: fc.integer({ min: 0, max: 10 }) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('boolean') }),
  fc.record({ enum: fc.uniqueArray(fc.oneof(word, fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 3 }) }),
  fc.record({ type: fc.constant(['string', 'null']) }),
  fc.record({ anyOf: fc.constant([{ type: 'integer' }, { type: 'string', maxLength: 2 }]) }),
);

const valueSchema: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  { weight: 4, arbitrary: leafSchema },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('array'), items: leafSchema, minItems: fc.integer({ min: 0, max: 2 }) }, { requiredKeys: ['type', 'items'] }) },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('object'),
      properties: fc.dictionary(fc.constantFrom(...NAMES), leafSchema, { maxKeys: 2 }),
      required: fc.subarray(NAMES.slice(0, 2)),
      additionalProperties: fc.boolean(),
    }),
  },
);

const objectSchema = fc.record(
  {
    type: fc.constant('object'),
    properties: fc.dictionary(fc.constantFrom(...NAMES), valueSchema, { maxKeys: 4 }),
    required: fc.subarray(NAMES),
    additionalProperties: fc.boolean(),
  },
  { requiredKeys: ['type', 'properties'] },
);

const plainValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    word,
    fc.integer({ min: -6, max: 12 }),
    fc.double({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    // Run-time values come from JSON, so their objects have Object's prototype: fast-check's
    // null-prototype objects made Ajv's own deep-equal (uniqueItems) throw in the oracle.
    fc.dictionary(fc.constantFrom(...NAMES, 'x'), tie('value'), { maxKeys: 3, noNullPrototype: true }),
  ),
})).value;

const argumentsValue = fc.dictionary(fc.constantFrom(...NAMES, 'x'), plainValue, { maxKeys: 5 });

// Richer schemas for the soundness property: value-dependent keywords at every level.
const richLeaf: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  leafSchema,
  fc.record({ const: fc.oneof(word, fc.integer({ min: 0, max: 2 })) }),
  fc.record({ oneOf: fc.constant([{ type: 'integer' }, { type: 'number', minimum: 0 }]) }),
  fc.record({ not: fc.constant({ type: 'string' }) }),
  fc.record({ type: fc.constant('array'), uniqueItems: fc.constant(true), contains: fc.constant({ type: 'integer' }) }, { requiredKeys: ['type', 'uniqueItems'] }),
  fc.record({ type: fc.constant('string'), pattern: fc.constant('^[a-c]+$') }),
);
const richSchema = fc
  .record(
    {
      type: fc.constant('object'),
      properties: fc.dictionary(fc.constantFrom(...NAMES), fc.oneof(richLeaf, valueSchema), { maxKeys: 4 }),
      required: fc.subarray(NAMES),
      additionalProperties: fc.boolean(),
      if: fc.constantFrom({ properties: { a: { const: 'x' } }, required: ['a'] }, { properties: { a: { type: 'string' } }, required: ['a'] }),
      then: fc.constant({ required: ['b'], properties: { c: { type: 'integer' } } }),
      else: fc.constant({ properties: { d: { type: 'string' } } }),
      anyOf: fc.constant([{ required: ['a'] }, { properties: { b: { enum: [1, 2] } } }]),
    },
    { requiredKeys: ['type', 'properties'] },
  );

const TEMPLATE = '{{event.value}}';
const PARTIAL = 'n {{event.name}}';
const templatedValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(TEMPLATE),
    fc.constant(PARTIAL),
    fc.constant({ $secret: 'S' }),
    fc.constant([TEMPLATE, TEMPLATE]),
    word,
    fc.integer({ min: -2, max: 3 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    // Run-time values come from JSON, so their objects have Object's prototype: fast-check's
    // null-prototype objects made Ajv's own deep-equal (uniqueItems) throw in the oracle.
    fc.dictionary(fc.constantFrom(...NAMES, 'x'), tie('value'), { maxKeys: 3, noNullPrototype: true }),
  ),
})).value;
const templatedArguments = fc.dictionary(fc.constantFrom(...NAMES, 'x'), templatedValue, { maxKeys: 5 });

/** One run-time value of templated arguments: whole templates and secrets become any value, partial templates any string. */
function instantiate(value: unknown, anyValues: unknown[], strings: string[]): unknown {
  let next = 0;
  const walk = (current: unknown): unknown => {
    if (current === TEMPLATE) return anyValues[next++ % anyValues.length];
    if (current === PARTIAL) return strings[next++ % strings.length];
    if (Array.isArray(current)) return current.map(walk);
    if (current !== null && typeof current === 'object') {
      if ('$secret' in current) return anyValues[next++ % anyValues.length];
      return Object.fromEntries(Object.entries(current).map(([key, entry]) => [key, walk(entry)]));
    }
    return current;
  };
  return walk(value);
}

describe('arguments: property — the check agrees with Ajv on random schema/argument pairs', () => {
  test('valid here ⇔ valid for Ajv, on plain values', () => {
    const validators = new ArgumentValidators(64);
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, logger: false });
    fc.assert(
      fc.property(objectSchema, argumentsValue, (schema, args) => {
        const text = JSON.stringify(args);
        const plain = JSON.parse(text) as unknown;
        const expected = ajv.validate(schema, plain);
        const { problems } = check('random', text, schema, validators);
        assert.deepEqual(problems.filter((found) => found.code === 'TP411'), []);
        assert.equal(problems.length === 0, expected, `schema ${JSON.stringify(schema)}\nargs ${text}\najv ${JSON.stringify(ajv.errors)}\nours ${JSON.stringify(problems.map((found) => found.message))}`);
        // Every finding is on a node of the arguments (never outside them).
        const { text: document } = check('random', text, schema, validators);
        const start = document.indexOf('"arguments"');
        for (const found of problems) assert.ok(found.span.offset >= start, found.message);
      }),
      { numRuns: 400 },
    );
  });
  test('no false errors: a finding with placeholders holds for every value they may take', () => {
    const validators = new ArgumentValidators(64);
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, logger: false });
    fc.assert(
      fc.property(richSchema, templatedArguments, fc.array(plainValue, { minLength: 8, maxLength: 8 }), fc.array(word, { minLength: 8, maxLength: 8 }), (schema, args, anyValues, strings) => {
        const text = JSON.stringify(args);
        const { problems } = check('random', text, schema, validators);
        if (problems.length === 0) return;
        // Each finding is an Ajv error that the run-time value produces too: same instance, same
        // schema location, same keyword (so it did not come from what a placeholder happened to be).
        const concrete = instantiate(args, anyValues, strings);
        ajv.validate(schema, concrete);
        const concreteErrors = new Set((ajv.errors ?? []).map((error) => `${error.instancePath} ${error.schemaPath} ${error.keyword}`));
        for (const found of problems) {
          const key = `${String(found.data?.argument)} ${String(found.data?.schemaPath)} ${String(found.data?.keyword)}`;
          assert.ok(
            concreteErrors.has(key),
            `a finding that a run-time value avoids: ${key}\nschema ${JSON.stringify(schema)}\nargs ${text}\nvalue ${JSON.stringify(concrete)}\nours ${JSON.stringify(problems.map((entry) => entry.message))}`,
          );
        }
      }),
      { numRuns: 500 },
    );
  });
});
