/**
 * The version the bundles report is package.json's, injected by esbuild.mjs; a hard-coded copy
 * would drift at the first release.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { TOOLPIN_VERSION } from '../../server/src/runtime';

const root = path.resolve(__dirname, '..', '..', '..');
const packageVersion = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;

test('the transpiled modules report package.json version', () => {
  assert.equal(TOOLPIN_VERSION, packageVersion);
});

test('toolpin --version prints package.json version', () => {
  const run = spawnSync(process.execPath, [path.join(root, 'dist', 'cli.js'), '--version'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), packageVersion);
});
