/**
 * core/documents/blueprint.ts `withVerificationTreeOnly`: the model `toolpin check` keeps while its
 * servers are listed holds only the steps' fields and `arguments` subtrees, and verifying it gives
 * exactly what verifying the whole analysis gives.
 *
 * Each case analyzes one blueprint twice (one analysis is consumed by the slimming), checks every
 * step's arguments against a live schema with both models (TP410 findings carry spans from the
 * subtree, the key of "arguments", or the tool name when there are none), and compares the
 * problems, then the models' fields and spans. It also checks that the slim step no longer reaches
 * the rest of the tree: its node has no children and the arguments no parent above their key.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeBlueprint, type StepModel, withVerificationTreeOnly } from '../../server/src/core/documents/blueprint';
import { checkStepArguments } from '../../server/src/core/verify/arguments';

const SCHEMA = {
  type: 'object',
  properties: {
    text: { type: 'string', minLength: 2 },
    count: { type: 'integer' },
    options: { type: 'object', properties: { locale: { enum: ['en', 'fr'] } }, additionalProperties: false },
    edits: { type: 'array', items: { type: 'object', required: ['oldText'] } },
  },
  required: ['text'],
  additionalProperties: false,
};

const ARGUMENTS = [
  '{ "text": "hello", "count": 3 }',
  '{ "text": "x", "count": "three" }',
  '{ "count": 1, "colour": "red" }',
  '{ "text": "ok", "options": { "locale": "de", "extra": true } }',
  '{ "text": "ok", "edits": [ { "oldText": "a" }, { "newText": "b" } ] }',
  '{ "text": "{{event.subject}}", "count": "{{event.count}}" }',
  '[ 1, 2 ]',
];

function blueprint(): string {
  const steps = ARGUMENTS.map((args, index) => `    { "id": "s${index}", "effect": "mcp.invoke", "input": { "toolName": "edit", "server": "demo", "expectedSchemaHash": "fnv1a64:0123456789abcdef", "arguments": ${args} } }`);
  steps.push('    { "id": "none", "effect": "mcp.invoke", "input": { "toolName": "edit" } }');
  return `{\n  "blueprint": "b",\n  "formatVersion": 1,\n  "steps": [\n${steps.join(',\n')}\n  ]\n}\n`;
}

/** What a verification of the step reads, without the tree. */
function fieldsOf(step: StepModel): unknown {
  return { index: step.index, span: [step.node.offset, step.node.length], id: step.id, effect: step.effect, toolName: step.mcp?.toolName, pin: step.mcp?.pin, hash: step.mcp?.expectedSchemaHash, server: step.mcp?.server, channels: step.channels };
}

describe('withVerificationTreeOnly', () => {
  test('verifying the slim model finds exactly what the whole analysis finds', () => {
    const whole = analyzeBlueprint(blueprint()).model;
    const slim = withVerificationTreeOnly(analyzeBlueprint(blueprint()).model);
    assert.equal(slim.steps.length, whole.steps.length);
    let findings = 0;
    whole.steps.forEach((step, index) => {
      const expected = checkStepArguments(step, SCHEMA);
      const actual = checkStepArguments(slim.steps[index]!, SCHEMA);
      assert.deepEqual(actual, expected, `the findings of step ${step.id?.value}`);
      assert.deepEqual(fieldsOf(slim.steps[index]!), fieldsOf(step), `the fields of step ${step.id?.value}`);
      findings += expected.length;
    });
    // Not vacuous: the cases above draw findings, on nested values and on keys.
    assert.ok(findings >= 6, `${findings} findings`);
    assert.deepEqual(slim.name, whole.name);
  });

  test('the slim steps no longer reach the rest of the tree', () => {
    const slim = withVerificationTreeOnly(analyzeBlueprint(blueprint()).model);
    for (const step of slim.steps) {
      assert.equal(step.node.children, undefined, 'the step node is a stand-in');
      assert.equal(step.node.parent, undefined);
      const args = step.mcp?.argumentsNode;
      if (!args) continue;
      assert.equal(args.parent?.type, 'property', 'the arguments keep their key');
      assert.equal(args.parent?.parent, undefined, 'and nothing above it');
    }
  });
});
