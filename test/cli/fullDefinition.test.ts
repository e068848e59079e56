/**
 * Changes beyond the pinned fields, end to end with the built CLI and the fixture MCP server (a
 * real process over stdio, its tools rewritten through a control file): `toolpin pin --yes`
 * writes the full definition beside the pinned content, and `toolpin check` then reports an
 * annotation flip on the verified pin as TP408 (a warning: exit 0, exit 1 with --fail-on warning)
 * and a title change as TP409. A store without full definitions reports nothing extra.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const ECHO_TOOL_HEX = 'e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';

function run(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000, input: '', env: { ...process.env, TOOLPIN_TRUST: '1' } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

interface Report {
  files: Array<{ pins: Array<{ tool: string; state: string }>; problems: Array<{ code: string; severity: string; message: string }> }>;
}

describe('full definitions in the store', () => {
  let workspace: string;
  let control: string;
  const connector = (pin: string): string =>
    JSON.stringify({
      name: 'demo_tools',
      provider: 'mcp',
      providerConfig: { transport: { kind: 'stdio', command: process.execPath, args: [fixtureServer, '--stdio', '--control-file', control] }, include: ['echo_upper'], toolsSnapshot: { echo_upper: pin } },
    });
  const serve = (version: number, patch: Record<string, unknown>): void => writeFileSync(control, JSON.stringify({ version, rewrite: { echo_upper: patch } }));
  const check = (...extra: string[]): { status: number | null; report: Report } => {
    const result = run(workspace, 'check', '--format', 'json', ...extra);
    return { status: result.status, report: JSON.parse(result.stdout) as Report };
  };

  before(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-full-'));
    control = path.join(workspace, 'control.json');
    serve(1, { annotations: { readOnlyHint: true }, title: 'Echo' });
    // Pinned by hand to a wrong value, so `toolpin pin` re-pins it and writes the store entries.
    writeFileSync(path.join(workspace, 'demo.connector.json'), connector(`sha256:${'0'.repeat(64)}`));
  });
  after(() => rmSync(workspace, { recursive: true, force: true }));

  test('a hand-written store (no full definition) reports nothing beyond the pin', () => {
    writeFileSync(path.join(workspace, 'demo.connector.json'), connector(`sha256:${ECHO_TOOL_HEX}`));
    serve(2, { annotations: { readOnlyHint: false } });
    const { status, report } = check('--fail-on', 'warning');
    assert.equal(status, 0);
    assert.deepEqual(report.files[0]!.problems, []);
    writeFileSync(path.join(workspace, 'demo.connector.json'), connector(`sha256:${'0'.repeat(64)}`));
    serve(3, { annotations: { readOnlyHint: true }, title: 'Echo' });
  });

  test('toolpin pin --yes writes the full definition as served', () => {
    const result = run(workspace, 'pin', '--yes');
    assert.equal(result.status, 0, result.stderr + result.stdout);
    const file = path.join(workspace, '.toolpin', 'store', `full-sha256-${ECHO_TOOL_HEX}.json`);
    assert.ok(existsSync(file), 'the full-definition entry is written');
    const entry = JSON.parse(readFileSync(file, 'utf8')) as { version: number; tool: Record<string, unknown> };
    assert.equal(entry.version, 1);
    assert.deepEqual(entry.tool.annotations, { readOnlyHint: true });
    assert.equal(entry.tool.title, 'Echo');
    assert.ok(existsSync(path.join(workspace, '.toolpin', 'store', `sha256-${ECHO_TOOL_HEX}.json`)), 'the pinned-content entry is still written');
    assert.equal(check('--fail-on', 'warning').status, 0, 'nothing changed since');
  });

  test('a flip of readOnlyHint on the verified pin is TP408, a title change TP409; the pin stays verified', () => {
    serve(4, { annotations: { readOnlyHint: false }, title: 'Echo (v2)' });
    const { status, report } = check();
    assert.equal(status, 0, 'a warning does not fail the default run');
    assert.equal(report.files[0]!.pins[0]!.state, 'verified');
    assert.deepEqual(report.files[0]!.problems.map((found) => [found.code, found.severity]), [['TP408', 'warning'], ['TP409', 'information']]);
    assert.match(report.files[0]!.problems[0]!.message, /annotations\.readOnlyHint true → false/);
    assert.match(report.files[0]!.problems[1]!.message, /title "Echo" → "Echo \(v2\)"/);
    assert.equal(check('--fail-on', 'warning').status, 1);
  });
});
