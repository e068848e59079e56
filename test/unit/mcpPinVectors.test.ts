/**
 * mcp-pin's published test vectors for "Tool definition hash, version 1"
 * (test/fixtures/peers/mcp-pin, attributed in test/fixtures/peers/README.md), every one of them,
 * through Toolpin's own reader (parseJsonDocument: repeated member names are TP101), RFC 8785 and
 * SHA-256 (server/src/core/pins/mcpPin.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { parseJsonDocument, valueOf } from '../../server/src/core/json/jsonDocument';
import { mcpPinCanonical, mcpPinDefinitionHash, mcpPinInstructionsHash, mcpPinSetHash } from '../../server/src/core/pins/mcpPin';

const root = path.resolve(__dirname, '..', '..', '..');
interface Vectors {
  definitions: Array<{ about: string; input: string; canonical: string; hash: string }>;
  sets: Array<{ about: string; pages: string[]; lines: string[]; setHash: string }>;
  instructions: Array<{ about: string; instructions: string | null; hash: string | null }>;
  invalid: Array<{ about: string; input?: string; pages?: string[]; reason: string }>;
}
const vectors = JSON.parse(readFileSync(path.join(root, 'test', 'fixtures', 'peers', 'mcp-pin', 'tool-definition-hash-vectors.json'), 'utf8')) as Vectors;

/** Reads JSON text as Toolpin reads a listing; a repeated member name or a syntax error is returned as codes. */
function read(text: string): { value?: unknown; codes: string[] } {
  const document = parseJsonDocument(text);
  const codes = document.problems.map((problem) => problem.code);
  return codes.length > 0 || !document.root ? { codes } : { value: valueOf(document.root), codes };
}

test('the vector file holds every section', () => {
  assert.deepEqual([vectors.definitions.length, vectors.sets.length, vectors.instructions.length, vectors.invalid.length], [8, 5, 3, 4]);
});

for (const vector of vectors.definitions) {
  test(`definition: ${vector.about}`, () => {
    const { value, codes } = read(vector.input);
    assert.deepEqual(codes, []);
    assert.equal(mcpPinCanonical(value), vector.canonical);
    assert.equal(mcpPinDefinitionHash(value), vector.hash);
  });
}

for (const vector of vectors.sets) {
  test(`set: ${vector.about}`, () => {
    const definitions = vector.pages.flatMap((page) => read(page).value as unknown[]);
    assert.deepEqual(mcpPinSetHash(definitions), { lines: vector.lines, setHash: vector.setHash });
  });
}

for (const vector of vectors.instructions) {
  test(`instructions: ${vector.about}`, () => {
    assert.equal(mcpPinInstructionsHash(vector.instructions), vector.hash);
  });
}

for (const vector of vectors.invalid) {
  test(`invalid: ${vector.about}`, () => {
    if (vector.reason === 'repeated member name') {
      assert.deepEqual(read(vector.input!).codes, ['TP101']);
    } else {
      const definitions = vector.pages!.flatMap((page) => read(page).value as unknown[]);
      const result = mcpPinSetHash(definitions);
      assert.ok('error' in result, 'no set hash');
      assert.match(result.error, /no string name/);
    }
  });
}
