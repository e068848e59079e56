/**
 * The example workspace ships the pin store (docs/formats.md §6) of every pin it holds, so hover,
 * Compare, Review and `toolpin pin` show what changed: each pin of each blueprint and connector
 * under examples/ has an entry, and each entry hashes to its name. The store holds nothing else.
 * (scripts/example-store.mjs writes the entries from the servers as they were pinned.)
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { analyzeDocument, documentKindOf } from '../../server/src/core/documents/documents';
import { storePathOf } from '../../server/src/core/documents/fixes';
import { fnv1a64Hex } from '../../server/src/core/pins/fnv1a64';
import { sha256Hex } from '../../server/src/core/pins/sha256';
import { mayHoldPins } from '../../server/src/core/documents/source/sourceReader';
import { pinsOf } from '../../server/src/engine/pinStore';

const root = path.resolve(__dirname, '..', '..', '..');
const examples = path.join(root, 'examples');
const store = path.join(examples, '.toolpin', 'store');

function documentsUnder(folder: string): string[] {
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === '.toolpin' ? [] : documentsUnder(file);
    const kind = documentKindOf(file);
    // Modules that name no pin module (the servers' own scripts) are not documents, as in the file finder.
    return kind && (kind !== 'source' || mayHoldPins(fs.readFileSync(file, 'utf8'))) ? [file] : [];
  });
}

test('every pin of the example has a store entry whose content hashes to the pin', () => {
  const documents = documentsUnder(examples);
  assert.equal(documents.length, 5, documents.join(', '));
  const referenced = new Set<string>();
  let pins = 0;
  for (const file of documents) {
    const analysis = analyzeDocument(documentKindOf(file)!, fs.readFileSync(file, 'utf8'), file);
    for (const pin of pinsOf(analysis)) {
      pins++;
      const entry = path.join(examples, storePathOf(pin.algorithm, pin.hex));
      assert.ok(fs.existsSync(entry), `${path.relative(root, file)}: no store entry for ${pin.algorithm}:${pin.hex}`);
      const content = fs.readFileSync(entry, 'utf8');
      const hex = pin.algorithm === 'fnv1a64' ? fnv1a64Hex(content) : sha256Hex(content);
      assert.equal(hex, pin.hex, `${path.relative(root, entry)} does not hash to its pin`);
      referenced.add(path.basename(entry));
    }
  }
  assert.equal(pins, 17, 'the 17 pins `toolpin check` counts in the demo');
  assert.deepEqual(fs.readdirSync(store).sort(), [...referenced].sort(), 'the store holds exactly the entries of the pins');
});
