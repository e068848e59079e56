/**
 * The `toolpin` CLI as people and scripts run it: the built dist/cli.js under plain `node`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { ECHO_SCHEMA_PIN, ECHO_TOOL_PIN, ECHO_UPPER } from '../support/referenceVectors';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
/** The project's own fixtures are trusted for the run, as CI trusts its own branches (docs/formats.md §10). */
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };
const workspace = path.join(root, 'test', 'fixtures', 'cli-workspace');

function run(args: string[], options: { input?: string; cwd?: string } = {}): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { input: options.input ?? '', encoding: 'utf8', cwd: options.cwd ?? root, timeout: 30_000, env: TRUSTED_ENV });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** What `toolpin hash --format json` prints for the reference tool: the contract's vectors. */
const REFERENCE = { name: ECHO_UPPER.name, schemaPin: ECHO_SCHEMA_PIN, toolPin: ECHO_TOOL_PIN };

describe('toolpin hash', () => {
  test('reproduces the contract reference vectors from a tools/list result on stdin (json)', () => {
    const result = run(['hash', '--format', 'json', '-'], { input: JSON.stringify({ tools: [ECHO_UPPER] }) });
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [REFERENCE]);
  });
  test('accepts one tool object and an array of tools', () => {
    assert.deepEqual(JSON.parse(run(['hash', '--format', 'json', '-'], { input: JSON.stringify(ECHO_UPPER) }).stdout), [REFERENCE]);
    const many = run(['hash', '--format', 'json', '-'], { input: JSON.stringify([ECHO_UPPER, { ...ECHO_UPPER, name: 'other' }]) });
    assert.equal(JSON.parse(many.stdout).length, 2);
  });
  test('text output names each tool with both pins', () => {
    const result = run(['hash', '-'], { input: JSON.stringify([ECHO_UPPER]) });
    assert.equal(result.status, 0);
    assert.equal(result.stdout.trim(), `echo_upper  ${REFERENCE.schemaPin}  ${REFERENCE.toolPin}`);
  });
  test('reads a file', () => {
    const fixture = path.join(root, 'test', 'fixtures', 'tool-lists', 'everything.json');
    const result = run(['hash', '--format', 'json', fixture]);
    assert.equal(result.status, 0, result.stderr);
    const rows = JSON.parse(result.stdout) as Array<{ name: string; schemaPin: string; toolPin: string }>;
    assert.ok(rows.length >= 5, 'server-everything serves several tools');
    for (const row of rows) {
      assert.match(row.schemaPin, /^fnv1a64:[0-9a-f]{16}$/);
      assert.match(row.toolPin, /^sha256:[0-9a-f]{64}$/);
    }
  });
  test('invalid JSON exits 2 with a positioned message', () => {
    const result = run(['hash', '-'], { input: '{\n  "name": "x",\n  oops\n}' });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /^<stdin>:3:3: error TP100: JSON syntax error/m);
  });
  test('a bad entry is reported by path, the others are still hashed, exit 1', () => {
    const result = run(['hash', '--format', 'json', '-'], { input: JSON.stringify({ tools: [ECHO_UPPER, { description: 'no name' }, { name: 'n', inputSchema: 'nope' }] }) });
    assert.equal(result.status, 1);
    assert.deepEqual(JSON.parse(result.stdout), [REFERENCE]);
    assert.match(result.stderr, /\/tools\/1\/name: a tool needs a non-empty string "name"/);
    assert.match(result.stderr, /\/tools\/2\/inputSchema: the inputSchema of "n" must be an object/);
  });
  test('a missing file exits 2', () => {
    const result = run(['hash', 'does-not-exist.json']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /cannot read does-not-exist.json/);
  });
  test('usage errors exit 2', () => {
    assert.equal(run(['hash']).status, 2);
    assert.equal(run(['frobnicate']).status, 2);
    assert.equal(run(['hash', '--format', 'xml', '-']).status, 2);
    assert.equal(run([]).status, 2);
    assert.equal(run(['--help']).status, 0);
    assert.match(run(['--version']).stdout, /^\d+\.\d+\.\d+\n$/);
  });
});

describe('toolpin check: the checks that need no live server (--offline)', () => {
  test('finds files recursively, skips node_modules, reports file:line:col, exits 1 on errors', () => {
    const result = run(['check', '--offline', '.'], { cwd: workspace });
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stdout, /nested\/bad\.connector\.json:5:56 {2}warning {8}TP303/);
    assert.match(result.stdout, /nested\/bad\.connector\.json:6:38 {2}error {10}TP306/);
    assert.doesNotMatch(result.stdout, /node_modules/);
    assert.match(result.stdout, /2 file\(s\), 1 pin\(s\): 0 verified, 0 drifted, 0 missing, 0 ambiguous, 1 cannot verify \(offline\); 2 problem\(s\)/);
  });
  test('json output has the documented shape with 0-based ranges', () => {
    const result = run(['check', '--offline', '--format', 'json'], { cwd: workspace });
    const report = parseCheckReport(result.stdout);
    assert.equal(report.version, 1);
    assert.deepEqual(report.files.map((file: { path: string }) => file.path), ['good.blueprint.jsonc', 'nested/bad.connector.json']);
    const problem = report.files[1].problems.find((found: { code: string }) => found.code === 'TP306');
    assert.deepEqual(problem.range, { start: { line: 5, character: 37 }, end: { line: 5, character: 50 } });
    assert.equal(report.summary.problems, 2);
  });
  test('without any configured server a pin cannot be verified: exit 2, never "missing"', () => {
    // A folder of its own: the fixture workspace's connector files configure servers for every
    // file checked in it, as they do in the editor.
    const alone = mkdtempSync(path.join(tmpdir(), 'toolpin-no-server-'));
    try {
      copyFileSync(path.join(workspace, 'good.blueprint.jsonc'), path.join(alone, 'good.blueprint.jsonc'));
      const result = run(['check', 'good.blueprint.jsonc'], { cwd: alone });
      assert.equal(result.status, 2, result.stdout + result.stderr);
      assert.match(result.stdout, /no MCP server is configured/);
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
  });
  test('a missing path exits 2', () => {
    const result = run(['check', 'nope'], { cwd: workspace });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /cannot read nope: ENOENT/);
  });
  test('usage errors of check exit 2', () => {
    assert.equal(run(['check', '--format', 'xml']).status, 2);
    assert.equal(run(['check', '--timeout', 'soon']).status, 2);
  });
});
