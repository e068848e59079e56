/**
 * The kinds table (server/src/core/documents/kinds/) is the one place that says which files are
 * Toolpin's documents; what VS Code needs of it is data that cannot import the server, so this test
 * holds it to the table: the client's document selector, package.json's activation events, its
 * language contributions and its JSON validation (issue 24).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { DOCUMENT_SELECTOR } from '../../client/src/documentSelector';
import { clientSelectors, documentKinds } from '../../server/src/core/documents/kinds/registry';
import { isRecord } from '../../server/src/core/json/values';
import { renderKindsTable } from '../support/kindsTable';

const root = path.resolve(__dirname, '..', '..', '..');
const manifest: unknown = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

const TABLE_START = '<!-- kinds table: generated from server/src/core/documents/kinds/registry.ts; test/unit/kindsManifest.test.ts -->';
const TABLE_END = '<!-- end of the kinds table -->';

function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

describe('the VS Code manifest and client follow the kinds table', () => {
  test('the client document selector is every kind selector, in order', () => {
    assert.deepEqual(DOCUMENT_SELECTOR, clientSelectors());
  });

  test('package.json activates on every kind activation event, and on nothing else', () => {
    assert.deepEqual(field(manifest, 'activationEvents'), documentKinds().flatMap((kind) => kind.activationEvents));
  });

  test('every language a kind contributes is in package.json with the kind file patterns', () => {
    const languages = list(field(field(manifest, 'contributes'), 'languages'));
    for (const kind of documentKinds()) {
      for (const id of kind.languages) {
        const contributed = languages.find((language) => field(language, 'id') === id);
        assert.ok(contributed, `package.json contributes the language ${id} of the kind ${kind.id}`);
        assert.deepEqual(field(contributed, 'filenamePatterns'), kind.patterns, `the file patterns of ${id}`);
      }
    }
  });

  test('package.json validates with the JSON Schemas of the kinds, and only those', () => {
    const declared = documentKinds().flatMap((kind) => (kind.jsonValidation ? [{ fileMatch: [...kind.jsonValidation.fileMatch], url: kind.jsonValidation.url }] : []));
    assert.deepEqual(field(field(manifest, 'contributes'), 'jsonValidation'), declared);
  });

  test('docs/document-kinds.md holds the table the registry renders', () => {
    const page = readFileSync(path.join(root, 'docs', 'document-kinds.md'), 'utf8');
    const start = page.indexOf(TABLE_START);
    const end = page.indexOf(TABLE_END);
    assert.ok(start >= 0 && end > start, 'the page has the table markers');
    assert.equal(page.slice(start + TABLE_START.length, end).trim(), renderKindsTable(), 'regenerate: node -e "console.log(require(\'./out/test/support/kindsTable.js\').renderKindsTable())"');
  });

  test('every kind recognises its own examples and no other kind claims them first', () => {
    for (const kind of documentKinds()) {
      for (const example of kind.examples) {
        assert.equal(documentKinds().find((candidate) => candidate.recognises(example))?.id, kind.id, example);
      }
    }
  });
});
