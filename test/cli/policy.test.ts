/**
 * `.toolpin/policy.jsonc` end to end: the built CLI against a scratch workspace whose connector
 * pins two tools of the fixture MCP server (a real process over stdio), one verified and one
 * drifted. The policy changes the drift's severity and so the exit status, and never the verdict.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import Ajv from 'ajv';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const server = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const validateReport = new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(readFileSync(path.join(root, 'schemas', 'check-report.schema.json'), 'utf8')));

const scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-policy-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const CONNECTOR = JSON.stringify(
  {
    name: 'notes_tools',
    provider: 'mcp',
    providerConfig: {
      transport: { kind: 'stdio', command: process.execPath, args: [server, '--stdio'] },
      include: ['echo_upper', 'add_numbers'],
      toolsSnapshot: { echo_upper: 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454', add_numbers: `sha256:${'0'.repeat(64)}` },
    },
  },
  null,
  2,
);

let counter = 0;
/** A fresh workspace with the connector and, when given, a policy text. */
function workspace(policy?: string): string {
  const folder = path.join(scratch, `w${counter++}`);
  mkdirSync(path.join(folder, '.toolpin'), { recursive: true });
  writeFileSync(path.join(folder, 'notes.connector.json'), CONNECTOR);
  if (policy !== undefined) writeFileSync(path.join(folder, '.toolpin', 'policy.jsonc'), policy);
  return folder;
}

interface Report {
  files: Array<{ path: string; pins: Array<{ tool: string; state: string; live: string | null; policy?: { kind: string } }>; problems: Array<{ code: string; severity: string; message: string; policy?: { kind: string; until?: string; reason?: string } }> }>;
}

function check(folder: string, extra: string[] = []): { status: number | null; report: Report; stderr: string } {
  const result = spawnSync(process.execPath, [cli, 'check', '--workspace', folder, '--format', 'json', ...extra], { cwd: folder, encoding: 'utf8', timeout: 60_000, env: { ...process.env, TOOLPIN_TRUST: '1' } });
  const report = parseCheckReport(result.stdout) as Report;
  assert.ok(validateReport(report), JSON.stringify(validateReport.errors, null, 2));
  return { status: result.status, report, stderr: result.stderr };
}

function text(folder: string): { status: number | null; stdout: string } {
  const result = spawnSync(process.execPath, [cli, 'check', '--workspace', folder], { cwd: folder, encoding: 'utf8', timeout: 60_000, env: { ...process.env, TOOLPIN_TRUST: '1' } });
  return { status: result.status, stdout: result.stdout };
}

const driftOf = (report: Report) => report.files[0]!.problems.find((found) => found.code === 'TP400')!;
const pinOf = (report: Report) => report.files[0]!.pins.find((pin) => pin.tool === 'add_numbers')!;

describe('toolpin check with a policy', () => {
  test('without a policy the drift fails the run', () => {
    const { status, report } = check(workspace());
    assert.equal(status, 1);
    assert.equal(driftOf(report).severity, 'error');
    assert.equal(driftOf(report).policy, undefined);
  });

  test('an ignore before its date passes the run, reporting the drift as information with its reason', () => {
    const folder = workspace('{ "ignore": [ { "server": "notes_tools", "tool": "add_numbers", "codes": ["TP400"], "reason": "upstream fix pending", "expires": "2999-01-31" } ] }');
    const { status, report } = check(folder);
    assert.equal(status, 0);
    const drift = driftOf(report);
    assert.equal(drift.severity, 'information');
    assert.match(drift.message, /\(ignored by \.toolpin\/policy\.jsonc until 2999-01-31: upstream fix pending\)$/);
    assert.deepEqual({ kind: drift.policy?.kind, until: drift.policy?.until, reason: drift.policy?.reason }, { kind: 'ignored', until: '2999-01-31', reason: 'upstream fix pending' });
    assert.equal(pinOf(report).state, 'drifted', 'the verdict is not changed');
    assert.equal(pinOf(report).policy?.kind, 'ignored');
    const plain = text(folder);
    assert.equal(plain.status, 0);
    assert.match(plain.stdout, /DRIFTED .*add_numbers.*ignored by \.toolpin\/policy\.jsonc until 2999-01-31: upstream fix pending/);
  });

  test('SARIF reports an ignored finding at its own level, with the ignore as an accepted suppression', () => {
    const folder = workspace('{ "ignore": [ { "server": "notes_tools", "tool": "add_numbers", "codes": ["TP400"], "reason": "upstream fix pending", "expires": "2999-01-31" } ] }');
    const result = spawnSync(process.execPath, [cli, 'check', '--workspace', folder, '--format', 'sarif'], { cwd: folder, encoding: 'utf8', timeout: 60_000, env: { ...process.env, TOOLPIN_TRUST: '1' } });
    assert.equal(result.status, 0, result.stderr);
    const log = JSON.parse(result.stdout) as { runs: Array<{ results: Array<{ ruleId: string; level: string; suppressions?: Array<{ kind: string; status: string; justification: string }> }> }> };
    const drift = log.runs[0]!.results.find((found) => found.ruleId === 'TP400')!;
    assert.equal(drift.level, 'error');
    assert.deepEqual(drift.suppressions, [{ kind: 'external', status: 'accepted', justification: 'upstream fix pending (ignored by .toolpin/policy.jsonc until 2999-01-31)' }]);
    const others = log.runs[0]!.results.filter((found) => found.ruleId !== 'TP400');
    assert.ok(others.every((found) => found.suppressions === undefined));
  });

  test('an expired ignore fails the run with TP412 beside the drift', () => {
    const { status, report } = check(workspace('{ "ignore": [ { "tool": "add_numbers", "codes": ["TP400"], "reason": "upstream fix pending", "expires": "2020-01-31" } ] }'));
    assert.equal(status, 1);
    assert.equal(driftOf(report).severity, 'error');
    const expired = report.files[0]!.problems.find((found) => found.code === 'TP412');
    assert.equal(expired?.severity, 'error');
    assert.match(expired!.message, /expired on 2020-01-31/);
  });

  test('a severity override to warning passes the default run and fails --fail-on warning', () => {
    const folder = workspace('{ "rules": [ { "server": "notes_tools", "tool": "add_numbers", "severity": { "TP400": "warning" } } ] }');
    const relaxed = check(folder);
    assert.equal(relaxed.status, 0);
    assert.equal(driftOf(relaxed.report).severity, 'warning');
    assert.equal(driftOf(relaxed.report).policy?.kind, 'severity');
    assert.equal(check(folder, ['--fail-on', 'warning']).status, 1);
  });

  test('a rule for another tool changes nothing', () => {
    const { status, report } = check(workspace('{ "rules": [ { "tool": "echo_upper", "severity": { "TP400": "hint" } } ] }'));
    assert.equal(status, 1);
    assert.equal(driftOf(report).severity, 'error');
  });

  test('an ignore without a reason is a positioned problem in the policy file, and ignores nothing', () => {
    const policy = '{\n  "ignore": [\n    { "tool": "add_numbers", "codes": ["TP400"], "expires": "2999-01-31" }\n  ]\n}\n';
    const { status, report } = check(workspace(policy));
    assert.equal(status, 1);
    const file = report.files.find((entry) => entry.path === '.toolpin/policy.jsonc');
    assert.ok(file, JSON.stringify(report.files.map((entry) => entry.path)));
    assert.deepEqual(file.problems.map((found) => [found.code, found.message]), [['TP104', '"ignore" in policy[0] is missing the required field "reason"']]);
    assert.equal((file.problems[0] as unknown as { range: { start: { line: number; character: number } } }).range.start.line, 2);
    assert.equal(driftOf(report).severity, 'error');
  });
});
