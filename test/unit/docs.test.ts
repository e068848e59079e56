/**
 * Docs that must match the code: every problem code is documented with its default severity and
 * title, and the docs list no code the code does not have.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { PROBLEM_CODES } from '../../server/src/core/problems';

const root = path.resolve(__dirname, '..', '..', '..');

test('docs/diagnostics.md lists exactly the codes of PROBLEM_CODES, with severity and title', () => {
  const text = readFileSync(path.join(root, 'docs', 'diagnostics.md'), 'utf8');
  const rows = [...text.matchAll(/^\| (TP\d{3}) \| (\w+) \| ([^|]+) \|/gm)].map((match) => [match[1], match[2], match[3]!.trim()]);
  const expected = Object.entries(PROBLEM_CODES).map(([code, info]) => [code, info.severity, info.title]);
  assert.deepEqual(rows, expected);
});

test('package.json contributes the settings the server reads, under the client id prefix', () => {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const properties = Object.keys(manifest.contributes.configuration.properties);
  for (const key of ['toolpin.trace.server', 'toolpin.validate.enable', 'toolpin.validate.debounceMs']) {
    assert.ok(properties.includes(key), `${key} is contributed`);
  }
  assert.ok(manifest.capabilities.untrustedWorkspaces, 'untrusted workspaces are declared explicitly');
  assert.equal(manifest.bin.toolpin, './dist/cli.js');
});
