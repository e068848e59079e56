/**
 * Member names that are also names on `Object.prototype` (`constructor`, `__proto__`, `toString`,
 * `hasOwnProperty`) are plain names in a document. Before this test, the shape walker looked a
 * member's shape up with `properties[key]`, which found `Object.prototype.constructor` for the key
 * "constructor": a step's stray "constructor" key was reported as `must be undefined` (TP103)
 * instead of an unknown key (TP102), an HTTP header named "constructor" was a false error, and an
 * auth `"type": "constructor"` threw inside the connector reader (`toolpin check` ended with an
 * internal error, the language server lost the document's analysis).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeDocument } from '../../server/src/core/documents/documents';

const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];

/** Members written by hand: JSON.stringify would drop a `__proto__` set on an object literal. */
function members(names: readonly string[], value: string): string {
  return names.map((name) => `${JSON.stringify(name)}: ${value}`).join(', ');
}

describe('names that Object.prototype also has', () => {
  test('a stray step key of that name is an unknown key, never a type error', () => {
    const text = `{ "blueprint": "b", "formatVersion": 1, "steps": [ { "id": "a", "effect": "mcp.invoke", ${members(PROTOTYPE_NAMES, '"x"')}, "input": { "toolName": "echo", "arguments": {} } } ] }`;
    const { problems } = analyzeDocument('blueprint', text);
    const unknown = problems.filter((found) => found.code === 'TP102').map((found) => found.message);
    assert.deepEqual(
      unknown,
      PROTOTYPE_NAMES.map((name) => `unknown key "${name}" in step "a" (known keys: id, effect, input, on, description, label)`),
    );
    assert.deepEqual(problems.filter((found) => found.code === 'TP103'), []);
  });

  test('a header or environment variable of that name is a member of its map like any other', () => {
    const text = `{ "name": "x", "type": "api", "provider": "mcp", "providerConfig": { "transport": { "kind": "http", "url": "https://example.com/mcp", "headers": { ${members(PROTOTYPE_NAMES, '"v"')} } } } }`;
    const { problems } = analyzeDocument('connector', text);
    assert.deepEqual(problems.map((found) => `${found.code} ${found.message}`), []);
    const stdio = `{ "name": "y", "type": "api", "provider": "mcp", "providerConfig": { "transport": { "kind": "stdio", "command": "node", "env": { ${members(PROTOTYPE_NAMES, '"v"')} } } } }`;
    assert.deepEqual(analyzeDocument('connector', stdio).problems.map((found) => `${found.code} ${found.message}`), []);
  });

  test('an auth type of that name is an unknown auth type, reported, not thrown', () => {
    for (const name of PROTOTYPE_NAMES) {
      const text = `{ "name": "x", "type": "api", "provider": "mcp", "providerConfig": { "transport": { "kind": "http", "url": "https://example.com/mcp" } }, "auth": { "type": ${JSON.stringify(name)}, "credentialRef": "TOKEN" } }`;
      const { problems } = analyzeDocument('connector', text);
      assert.deepEqual(
        problems.map((found) => `${found.code} ${found.message}`),
        ['TP304 the auth of connector "x" needs "type": one of "none", "bearer", "api-key", "basic"'],
        `auth type ${name}`,
      );
    }
  });

  test('places below the walk\'s start are named from it down, as before names became lazy', () => {
    // The same messages as the walker that built every name on the way down (checked by hand
    // against the previous build), for a member of a map, of an array and of a nested object.
    const connector = '{ "name": "x", "type": "api", "provider": "mcp", "providerConfig": { "transport": { "kind": "stdio", "command": "node", "args": ["a", 1, true], "env": { "A": 2 } }, "include": [3], "toolsSnapshot": { "t": 4 } } }';
    assert.deepEqual(
      analyzeDocument('connector', connector).problems.map((found) => `${found.code} ${found.message}`),
      [
        'TP103 "args" in the transport of connector "x"[1] must be a string, found a number',
        'TP103 "args" in the transport of connector "x"[2] must be a string, found a boolean',
        'TP103 "A" in "env" in the transport of connector "x" must be a string, found a number',
        'TP103 "include" in the providerConfig of connector "x"[0] must be a string, found a number',
        'TP103 "t" in "toolsSnapshot" in the providerConfig of connector "x" must be a string, found a number',
      ],
    );
    const blueprint = '{ "blueprint": "b", "formatVersion": 1, "steps": [ { "id": "a", "effect": "mcp.invoke", "on": { "done": 5 }, "label": 6, "input": { "toolName": "t", "arguments": {} } }, 9 ] }';
    const messages = analyzeDocument('blueprint', blueprint).problems.filter((found) => found.code === 'TP103').map((found) => found.message);
    assert.deepEqual(messages, ['"done" in "on" in step "a" must be a string, found a number', '"label" in step "a" must be a string, found a number', 'step #2 must be an object, found a number']);
  });
});
