/**
 * Live input schemas written by a hostile server: a catastrophic-backtracking `pattern` must be
 * checked in linear time (the event loop is never blocked), and a schema that recurses into itself
 * must end in a positioned TP411, never in a stack overflow.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ArgumentValidators, checkStepArguments } from '../../server/src/core/verify/arguments';
import { analyzeBlueprint } from '../../server/src/core/documents/blueprint';
import { blueprintText } from '../support/checkHelpers';

function stepText(args: string): string {
  return blueprintText(`{
      "id": "call",
      "effect": "mcp.invoke",
      "input": {
        "toolName": "evil",
        "expectedSchemaHash": "fnv1a64:0000000000000000",
        "arguments": ${args}
      }
    }`);
}

function run(args: string, schema: unknown): { text: string; problems: ReturnType<typeof checkStepArguments> } {
  const text = stepText(args);
  const step = analyzeBlueprint(text).model.steps[0];
  assert.ok(step);
  return { text, problems: checkStepArguments(step, schema, undefined, new ArgumentValidators()) };
}

describe('hostile live schemas', () => {
  test('a catastrophic pattern is checked in linear time and still rejects a non-match', () => {
    const schema = { type: 'object', properties: { q: { type: 'string', pattern: '^(a+)+$' } } };
    const started = performance.now();
    const { text, problems } = run(JSON.stringify({ q: `${'a'.repeat(34)}!` }), schema);
    const elapsed = performance.now() - started;
    // A backtracking engine needs minutes here (2^34 paths); RE2 needs well under a millisecond.
    console.log(`pattern ^(a+)+$ against 34 a's and "!": ${elapsed.toFixed(1)} ms`);
    assert.ok(elapsed < 2000, `took ${elapsed} ms`);
    assert.deepEqual(problems.map((found) => [found.code, text.slice(found.span.offset, found.span.offset + found.span.length)]), [['TP410', `"${'a'.repeat(34)}!"`]]);
    assert.deepEqual(run(JSON.stringify({ q: 'a'.repeat(40) }), schema).problems, []);
  });

  test('a pattern RE2 cannot read (lookahead) is not checked rather than wrongly checked', () => {
    const schema = { type: 'object', properties: { q: { type: 'string', pattern: '^(?=x)y$' } } };
    assert.deepEqual(run('{"q": "anything"}', schema).problems, []);
  });

  test('patternProperties run on the same engine', () => {
    const schema = { type: 'object', patternProperties: { '^(a+)+$': { type: 'number' } } };
    const started = performance.now();
    const { problems } = run(JSON.stringify({ [`${'a'.repeat(34)}!`]: 'x', aaa: 'not a number' }), schema);
    assert.ok(performance.now() - started < 2000);
    assert.deepEqual(problems.map((found) => found.code), ['TP410']);
  });

  test('{"$ref": "#"} is a positioned TP411, not a RangeError', () => {
    const { text, problems } = run('{"a": 1}', { $ref: '#' });
    assert.equal(problems.length, 1);
    const [found] = problems;
    assert.equal(found!.code, 'TP411');
    assert.match(found!.message, /refers to itself/);
    assert.equal(text.slice(found!.span.offset, found!.span.offset + found!.span.length), '"arguments"');
  });

  test('mutual recursion through definitions is a TP411 too', () => {
    const schema = { definitions: { a: { $ref: '#/definitions/b' }, b: { $ref: '#/definitions/a' } }, $ref: '#/definitions/a' };
    assert.deepEqual(run('{"a": 1}', schema).problems.map((found) => found.code), ['TP411']);
  });
});
