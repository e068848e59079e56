/**
 * Property nodes of core/json/jsonDocument.ts `parseJsonTree` keep their key as text and make its
 * node only when asked (issue 13: a key node per property was 64 bytes of a large blueprint's
 * tree). The tree's shape is held equal to jsonc-parser's by test/unit/jsonTree.property.test.ts;
 * this test holds what the laziness promises:
 * - analyzing a blueprint, problems included, makes no key node;
 * - a key node, once made, is the same node on every read, and moves with its property when an
 *   edit before it is re-analyzed in place (core/documents/incremental.ts);
 * - the key helpers answer the same for a parsed tree and for a tree of jsonc-parser's own shape.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseTree } from 'jsonc-parser';
import { analyzeBlueprint } from '../../server/src/core/documents/blueprint';
import { reanalyzeBlueprint } from '../../server/src/core/documents/incremental';
import { getProperty, type JsonNode, objectProperties, parseJsonDocument, PropertyNode, propertyKeySpan, propertyKeyText, propertyValueNode } from '../../server/src/core/json/jsonDocument';

/** Every property node under `node`, found through the fields (reading `children` would make key nodes). */
function propertyNodes(node: JsonNode | undefined, found: PropertyNode[] = []): PropertyNode[] {
  if (!node) return found;
  if (node instanceof PropertyNode) {
    found.push(node);
    propertyNodes(node.valueNode, found);
  } else {
    for (const child of node.children ?? []) propertyNodes(child, found);
  }
  return found;
}

const BLUEPRINT = `{
  // A step with a problem of every kind the walk reports by key: unknown, duplicate, channel.
  "blueprint": "b",
  "formatVersion": 1,
  "steps": [
    { "id": "a", "effect": "mcp.invoke", "stray": 1, "input": { "toolName": "echo", "toolName": "echo", "expectedSchemaHash": "fnv1a64:0123456789abcdef", "arguments": { "text": "hi" } }, "on": { "schemaDrift": "nowhere", "bogus": "a" } },
    { "id": "b", "effect": "mcp.invoke", "input": { "toolName": "add", "arguments": {} } }
  ]
}`;

describe('property nodes', () => {
  test('analyzing a blueprint, with problems, makes no key node', () => {
    const analysis = analyzeBlueprint(BLUEPRINT);
    const codes: string[] = analysis.problems.map((found) => found.code);
    for (const code of ['TP101', 'TP102', 'TP201', 'TP202']) assert.ok(codes.includes(code), `${code} in ${codes.join(' ')}`);
    const root = analysis.model.steps[0]!.node.parent?.parent?.parent;
    const properties = propertyNodes(root);
    assert.ok(properties.length >= 20, `${properties.length} properties`);
    assert.deepEqual(properties.filter((property) => property.madeKeyNode !== undefined).map((property) => property.keyText), []);
  });

  test('a key node is made once, and moves with its property after an edit before it', () => {
    const before = analyzeBlueprint(BLUEPRINT);
    const second = before.model.steps[1]!;
    const toolName = getProperty(getProperty(second.node, 'input')!.valueNode, 'toolName')!;
    const keyNode = toolName.keyNode;
    assert.equal(toolName.keyNode, keyNode, 'the same node on every read');
    assert.equal(getProperty(getProperty(second.node, 'input')!.valueNode, 'toolName')!.keyNode, keyNode, 'and through another read of the property');
    assert.equal(BLUEPRINT.slice(keyNode.offset, keyNode.offset + keyNode.length), '"toolName"');

    // An edit inside the first step (three characters longer) is re-analyzed in place.
    const edited = BLUEPRINT.replace('"text": "hi"', '"text": "hi!!!"');
    const after = reanalyzeBlueprint(BLUEPRINT, before, edited);
    assert.ok(after, 'the edit is re-analyzed in place');
    assert.equal(after.model.steps[1]!.node, second.node, 'the second step moved in place');
    assert.equal(edited.slice(keyNode.offset, keyNode.offset + keyNode.length), '"toolName"', 'the key node moved by the edit');
    assert.equal(keyNode.offset, toolName.propertyNode.offset);
  });

  test('the key helpers read parsed trees and jsonc-parser trees alike', () => {
    const text = '{ "a": 1, "b\\u0062": { "c": [true] }, "d": }';
    const ours = parseJsonDocument(text).root!;
    const theirs = parseTree(text, [], { allowTrailingComma: true })!;
    const read = (root: JsonNode) =>
      (root.children ?? []).map((property) => ({ text: propertyKeyText(property), span: propertyKeySpan(property), value: propertyValueNode(property)?.type }));
    assert.deepEqual(read(ours), read(theirs));
    assert.deepEqual(read(ours).map((key) => key.text), ['a', 'bb', 'd']);
    assert.deepEqual(
      objectProperties(ours).map((property) => [property.key, property.keyNode.offset, property.keyNode.length]),
      objectProperties(theirs).map((property) => [property.key, property.keyNode.offset, property.keyNode.length]),
    );
  });
});
