import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeBlueprint } from '../../server/src/core/documents/blueprint';
import { blueprintText, messagesOf, PINNED_STEP, problemsOf, type SeenProblem } from '../support/checkHelpers';

describe('blueprint checks: a valid file has no problem', () => {
  test('the reference blueprint', () => assert.deepEqual(problemsOf('blueprint', blueprintText(PINNED_STEP)), []));
  test('the model has offsets for every field', () => {
    const text = blueprintText(PINNED_STEP);
    const { model } = analyzeBlueprint(text);
    assert.equal(model.name?.value, 'triage-inbound-issue');
    assert.equal(model.steps.length, 3);
    const step = model.steps[0]!;
    const covered = (span: { offset: number; length: number }): string => text.slice(span.offset, span.offset + span.length);
    assert.equal(covered(step.id!.span), '"open-issue"');
    assert.equal(covered(step.mcp!.toolName!.span), '"create_issue"');
    assert.equal(covered(step.mcp!.expectedSchemaHash!.span), '"fnv1a64:8465e642361d6375"');
    assert.deepEqual(step.mcp!.pin, { algorithm: 'fnv1a64', hex: '8465e642361d6375', style: 'prefixed' });
    assert.deepEqual(step.channels.map((channel) => [channel.name.value, channel.target?.value]), [['schemaDrift', 'repair'], ['toolNotFound', 'notify']]);
  });
  test('minted step ids (hydrate#3) are ordinary ids', () =>
    assert.deepEqual(problemsOf('blueprint', blueprintText(`{ "id": "hydrate#3", "effect": "noop" }`)), []));
  test('a server name is accepted', () =>
    assert.deepEqual(problemsOf('blueprint', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "t", "server": "github_tools", "expectedSchemaHash": "fnv1a64:0000000000000000" } }`)), []));
});

describe('blueprint checks: each failing case names its code and its exact range', () => {
  const cases: Array<[string, string, SeenProblem[]]> = [
    ['TP100 missing comma', '{ "blueprint": "x" "formatVersion": 1, "steps": [] }', [{ code: 'TP100', covers: '"formatVersion"' }]],
    ['TP100 unclosed array reports each expectation at the end', '{ "blueprint": "x", "formatVersion": 1, "steps": [ } ', [{ code: 'TP100', covers: '}' }, { code: 'TP100', covers: '' }, { code: 'TP100', covers: '' }]],
    ['TP100 empty document', '', [{ code: 'TP100', covers: '' }]],
    ['TP101 duplicate key', blueprintText(`{ "id": "a", "id": "b", "effect": "noop" }`), [{ code: 'TP101', covers: '"id"' }]],
    ['TP102 unknown step key', blueprintText(`{ "id": "a", "effect": "noop", "retries": 3 }`), [{ code: 'TP102', covers: '"retries"' }]],
    ['TP102 unknown top-level key', blueprintText(`{ "id": "a", "effect": "noop" }`, ' "owner": "me",'), [{ code: 'TP102', covers: '"owner"' }]],
    ['TP102 unknown mcp input key', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "t", "expectedSchemaHash": "fnv1a64:0000000000000000", "tool": "x" } }`), [{ code: 'TP102', covers: '"tool"' }]],
    ['TP103 steps not an array', '{ "blueprint": "x", "formatVersion": 1, "steps": {} }', [{ code: 'TP103', covers: '{}' }]],
    ['TP103 step not an object', blueprintText(`"open-issue"`), [{ code: 'TP103', covers: '"open-issue"' }]],
    ['TP103 id not a string', blueprintText(`{ "id": 7, "effect": "noop" }`), [{ code: 'TP103', covers: '7' }]],
    ['TP103 root not an object', '[]', [{ code: 'TP103', covers: '[]' }]],
    ['TP104 missing blueprint name', '{ "formatVersion": 1, "steps": [] }', [{ code: 'TP104', covers: '{' }]],
    ['TP104 step without effect', blueprintText(`{ "id": "a" }`), [{ code: 'TP104', covers: '{' }]],
    ['TP104 mcp.invoke without input', blueprintText(`{ "id": "a", "effect": "mcp.invoke" }`), [{ code: 'TP104', covers: '"mcp.invoke"' }]],
    ['TP104 mcp.invoke without toolName', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "expectedSchemaHash": "fnv1a64:0000000000000000" } }`), [{ code: 'TP104', covers: '{' }]],
    ['TP105 format version 2', '{ "blueprint": "x", "formatVersion": 2, "steps": [] }', [{ code: 'TP105', covers: '2' }]],
    ['TP200 duplicate step id', blueprintText(`{ "id": "a", "effect": "noop" }, { "id": "b", "effect": "noop" }, { "id": "a", "effect": "noop" }`), [{ code: 'TP200', covers: '"a"' }]],
    ['TP201 channel target missing', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "t", "expectedSchemaHash": "fnv1a64:0000000000000000" }, "on": { "schemaDrift": "nowhere" } }`), [{ code: 'TP201', covers: '"nowhere"' }]],
    ['TP202 unknown channel', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "t", "expectedSchemaHash": "fnv1a64:0000000000000000" }, "on": { "timeout": "a" } }`), [{ code: 'TP202', covers: '"timeout"' }]],
    ['TP203 channel on a non-mcp step', blueprintText(`{ "id": "a", "effect": "http.get", "on": { "schemaDrift": "a" } }`), [{ code: 'TP203', covers: '"schemaDrift"' }]],
    ['TP204 short schema pin', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "t", "expectedSchemaHash": "fnv1a64:123" } }`), [{ code: 'TP204', covers: '"fnv1a64:123"' }]],
    ['TP204 tool pin where a schema pin belongs', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "t", "expectedSchemaHash": "sha256:${'0'.repeat(64)}" } }`), [{ code: 'TP204', covers: `"sha256:${'0'.repeat(64)}"` }]],
    ['TP205 literal token argument', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "t", "expectedSchemaHash": "fnv1a64:0000000000000000", "arguments": { "githubToken": "ghp_123" } } }`), [{ code: 'TP205', covers: '"ghp_123"' }]],
    ['TP205 nested literal api key', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "t", "expectedSchemaHash": "fnv1a64:0000000000000000", "arguments": { "auth": [{ "api_key": "k" }] } } }`), [{ code: 'TP205', covers: '"k"' }]],
    ['TP206 unpinned mcp.invoke step', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "create_issue" } }`), [{ code: 'TP206', covers: '"create_issue"' }]],
    ['TP207 $secret with a number', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "t", "expectedSchemaHash": "fnv1a64:0000000000000000", "arguments": { "token": { "$secret": 5 } } } }`), [{ code: 'TP207', covers: '5' }]],
    ['TP207 $secret with an extra key', blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "t", "expectedSchemaHash": "fnv1a64:0000000000000000", "arguments": { "token": { "$secret": "X", "value": "v" } } } }`), [{ code: 'TP207', covers: '"value"' }]],
  ];
  for (const [name, text, expected] of cases) {
    test(name, () => assert.deepEqual(problemsOf('blueprint', text), expected));
  }
});

describe('blueprint checks: messages a user can act on', () => {
  test('a duplicate id names the step that had it first', () => {
    const [message] = messagesOf('blueprint', blueprintText(`{ "id": "a", "effect": "noop" }, { "id": "a", "effect": "noop" }`));
    assert.match(message!, /duplicate step id "a": step #1 already uses it/);
  });
  test('an unknown key lists the known keys', () => {
    const [message] = messagesOf('blueprint', blueprintText(`{ "id": "a", "effect": "noop", "retries": 3 }`));
    assert.match(message!, /unknown key "retries" in step "a" \(known keys: id, effect, input, on, description, label\)/);
  });
  test('credential-like keys that are not credentials are left alone', () => {
    const text = blueprintText(`{ "id": "a", "effect": "mcp.invoke", "input": { "toolName": "t", "expectedSchemaHash": "fnv1a64:0000000000000000", "arguments": { "max_tokens": "100", "tokenCount": "3", "secretName": "x", "password_hint": "y", "token": "" } } }`);
    assert.deepEqual(problemsOf('blueprint', text), []);
  });
  test('a broken part of a file does not hide problems elsewhere', () => {
    const text = blueprintText(`{ "id": "a", "effect": "noop", "on": { "schemaDrift": "b" } }, 42, { "id": "a", "effect": "noop" }`);
    assert.deepEqual(problemsOf('blueprint', text).map((found) => found.code), ['TP203', 'TP201', 'TP103', 'TP200']);
  });
});
