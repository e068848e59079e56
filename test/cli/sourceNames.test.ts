/**
 * The CLI reads a workspace's `.toolpin/sources.jsonc`: a module that imports `mcpInvoke$` from the
 * project's own re-exporting module is checked only when the file names that module, the editor's
 * `toolpin.sources.*` settings in CLI form; a wrong file stops the run with exit code 2 and says
 * what is wrong.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');

const STEPS = `import { step } from '@acme/platform';

// The pin is written in uppercase hex: a structure problem the offline check reports.
export const open = step('open#1', { toolName: 'create_issue', expectedSchemaHash: 'fnv1a64:0123456789ABCDEF' });
`;

let workspace: string;
before(() => {
  workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-source-names-'));
  mkdirSync(path.join(workspace, 'src'));
  writeFileSync(path.join(workspace, 'src', 'steps.ts'), STEPS);
});
after(() => rmSync(workspace, { recursive: true, force: true }));

function check(): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, 'check', '--offline', '.'], { cwd: workspace, encoding: 'utf8', timeout: 60_000, input: '' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('without .toolpin/sources.jsonc, a call through a project module is not read', () => {
  const result = check();
  assert.doesNotMatch(result.stdout, /steps\.ts/, result.stdout);
  assert.doesNotMatch(result.stdout, /TP204/);
});

test('with it, the re-exported name is read and checked like the built-in one', () => {
  mkdirSync(path.join(workspace, '.toolpin'), { recursive: true });
  writeFileSync(path.join(workspace, '.toolpin', 'sources.jsonc'), '// the platform re-exports mcpInvoke$ as step\n{ "invokeFunctions": ["@acme/platform#step"], }\n');
  const result = check();
  assert.equal(result.status, 1, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /src\/steps\.ts:4:\d+ .*TP204/);
});

test('a wrong entry stops the run with exit code 2 and names it', () => {
  writeFileSync(path.join(workspace, '.toolpin', 'sources.jsonc'), '{ "invokeFunctions": ["@acme/platform#not-a-name"] }\n');
  const result = check();
  assert.equal(result.status, 2, result.stdout);
  assert.match(result.stderr, /toolpin check: \.toolpin\/sources\.jsonc: invokeFunctions\[0\] names "not-a-name", which is not a JavaScript identifier/);
});
