/**
 * The peers' lockfiles end to end through the built CLI, against a real MCP server with two
 * releases (test/fixtures/servers/release-server.mjs): `mcp-pin.lock` beside `.mcp.json` and a
 * `warden.lock` whose own launch starts the server. First pins written by `toolpin pin`, verified
 * by `toolpin check` (each lock a file of the report, its pins with `tool` and `state`), an
 * upgrade that changes one tool seen as drift in both, a tampered warden lock named by entry,
 * the warden launch refused until the folder is trusted, and re-pin round trips.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { checkWardenIntegrity, parseWardenLock } from '../../server/src/core/documents/lockfiles/wardenLock';
import { checkMcpPinIntegrity, parseMcpPinLock } from '../../server/src/core/documents/lockfiles/mcpPinLock';
import { wardenCommandDigest, wardenOverallDigest } from '../../server/src/core/pins/warden';
import type { CheckReport } from '../../server/src/core/report/report';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const releaseServer = path.join(root, 'test', 'fixtures', 'servers', 'release-server.mjs');

function run(cwd: string, trusted: boolean, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env, TOOLPIN_TRUST: trusted ? '1' : '0', TOOLPIN_TRUST_FILE: path.join(cwd, '.no-trust-record.json') };
  const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 90_000, input: '', env });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function report(cwd: string, trusted = true): { status: number | null; report: CheckReport; stderr: string } {
  const result = run(cwd, trusted, 'check', '--format', 'json');
  return { status: result.status, report: JSON.parse(result.stdout) as CheckReport, stderr: result.stderr };
}

/** A `warden.lock` that records the launch only (no entry yet), with its digests right. */
function emptyWardenLock(command: string, args: string[]): string {
  const commandDigest = wardenCommandDigest({ command, args });
  const overall = wardenOverallDigest({ schemaVersion: 3, commandDigest, tools: [], resources: [], prompts: [] });
  const lock = {
    schema_version: 3,
    warden_version: '0.3.0',
    server: { command, args, command_digest: commandDigest },
    tools: [],
    resources: [],
    prompts: [],
    findings: [],
    overall_digest: overall,
    pin: { created_at: '2026-01-01T00:00:00Z', warden_version: '0.3.0', mcp_protocol_version: '2025-06-18', approved: false, approver: null, approved_at: null, approved_digest: null },
  };
  return `${JSON.stringify(lock, null, 2)}\n`;
}

function pinsOf(checked: CheckReport, file: string): Array<{ kind: string; tool: string; state: string; reason: string | null }> {
  const found = checked.files.find((entry) => entry.path === file);
  assert.ok(found, `${file} is a file of the report (${checked.files.map((entry) => entry.path).join(', ')})`);
  return found.pins.map((pin) => ({ kind: pin.kind, tool: pin.tool, state: pin.state, reason: pin.reason }));
}

describe('the peers\' lockfiles in toolpin check and toolpin pin', () => {
  let workspace: string;
  before(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-locks-'));
    writeFileSync(path.join(workspace, 'release.json'), '{"release": 1}\n');
    writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { notes: { command: process.execPath, args: [releaseServer, '--release-file', 'release.json'] } } }, null, 2));
    writeFileSync(path.join(workspace, 'mcp-pin.lock'), '{\n  "lockfileVersion": 1,\n  "about": "Approved MCP tool definitions.",\n  "servers": {}\n}\n');
    mkdirSync(path.join(workspace, 'warden'));
    writeFileSync(path.join(workspace, 'warden', 'warden.lock'), emptyWardenLock(process.execPath, [releaseServer, '--release-file', '../release.json']));
  });
  after(() => rmSync(workspace, { recursive: true, force: true }));

  test('untrusted, the warden lock\'s own launch is not run: cannot verify (TP126), exit 2', () => {
    const result = run(workspace, false, 'check', 'warden/warden.lock', '--format', 'json');
    assert.equal(result.status, 2, result.stderr);
    const checked = JSON.parse(result.stdout) as CheckReport;
    const problems = checked.files.find((file) => file.path === 'warden/warden.lock')!.problems;
    assert.deepEqual(problems.map((found) => found.code), ['TP126']);
    assert.match(problems[0]!.message, /not trusted|trust/);
  });

  test('toolpin pin writes the first pins into both locks, in their own formats', () => {
    const dry = run(workspace, true, 'pin');
    assert.equal(dry.status, 1, dry.stderr);
    assert.match(dry.stdout, /warden\/warden\.lock:\d+:\d+ {2}ADDED {2}tool search on /);
    assert.match(dry.stdout, /nothing written/);
    const written = run(workspace, true, 'pin', '--yes');
    assert.equal(written.status, 0, written.stdout + written.stderr);
    assert.match(written.stdout, /Wrote 2 lockfile\(s\)/);

    const mcpPin = readFileSync(path.join(workspace, 'mcp-pin.lock'), 'utf8');
    const parsed = parseMcpPinLock(mcpPin);
    assert.deepEqual(parsed.problems, []);
    const entry = parsed.model!.servers[0]!;
    assert.equal(entry.name, 'notes');
    assert.deepEqual(entry.tools.map((tool) => tool.name), ['read_note', 'search', 'write_note']);
    assert.deepEqual(checkMcpPinIntegrity(entry).problems, []);
    assert.equal(entry.instructions, 'Notes server: read before you write.');
    assert.deepEqual(Object.keys(JSON.parse(mcpPin) as object), ['lockfileVersion', 'about', 'servers'], 'the existing members kept in their order');

    const warden = readFileSync(path.join(workspace, 'warden', 'warden.lock'), 'utf8');
    const model = parseWardenLock(warden).model!;
    assert.deepEqual(checkWardenIntegrity(model).problems, []);
    assert.deepEqual([model.tools.length, model.resources.length, model.prompts.length], [3, 1, 1]);
    assert.ok(warden.startsWith('{\n  "schema_version": 3,\n  "warden_version": "0.3.0",\n  "server": {') && warden.endsWith('}\n'));
  });

  test('toolpin check verifies both locks against the live server: every tool, prompt, resource and the instructions', () => {
    const result = report(workspace);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(pinsOf(result.report, 'mcp-pin.lock').map((pin) => `${pin.kind} ${pin.tool} ${pin.state}`), [
      'tool read_note verified',
      'tool search verified',
      'tool write_note verified',
      'prompt summarize verified',
      'instructions instructions verified',
    ]);
    assert.deepEqual(pinsOf(result.report, 'warden/warden.lock').map((pin) => `${pin.kind} ${pin.tool} ${pin.state}`), [
      'tool read_note verified',
      'tool search verified',
      'tool write_note verified',
      'resource notes://index verified',
      'prompt summarize verified',
    ]);
  });

  test('an upgrade that changes one tool is drift of that tool in both locks (exit 1), naming what changed', () => {
    writeFileSync(path.join(workspace, 'release.json'), '{"release": 2}\n');
    const result = report(workspace);
    assert.equal(result.status, 1, result.stderr);
    for (const file of ['mcp-pin.lock', 'warden/warden.lock']) {
      const pins = pinsOf(result.report, file);
      assert.deepEqual(pins.filter((pin) => pin.state !== 'verified').map((pin) => `${pin.kind} ${pin.tool} ${pin.state}`), ['tool search drifted'], file);
    }
    const wardenSearch = pinsOf(result.report, 'warden/warden.lock').find((pin) => pin.tool === 'search')!;
    assert.match(wardenSearch.reason ?? '', /^tools\/search drifted from warden\.lock: description_hash changed \(locked sha256:[0-9a-f]{64}, live sha256:[0-9a-f]{64}\), input_schema_hash changed/);
    const mcpPinSearch = pinsOf(result.report, 'mcp-pin.lock').find((pin) => pin.tool === 'search')!;
    assert.match(mcpPinSearch.reason ?? '', /definition hash changed \(locked [0-9a-f]{64}, live [0-9a-f]{64}\); description and inputSchema changed$/);
    const text = run(workspace, true, 'check');
    assert.equal(text.status, 1);
    assert.match(text.stdout, /^ {2}warden\/warden\.lock:\d+:\d+ {2}DRIFTED +tool pin of search on /m);
  });

  test('a tampered warden lock is reported naming the entry (TP122), and re-pinning repairs it; both round trips read back equal', () => {
    const file = path.join(workspace, 'warden', 'warden.lock');
    const text = readFileSync(file, 'utf8');
    const readNote = parseWardenLock(text).model!.tools.find((tool) => tool.name === 'read_note')!;
    writeFileSync(file, text.replace(String(readNote.value.description_hash), `sha256:${'0'.repeat(64)}`));
    const tampered = report(workspace);
    assert.equal(tampered.status, 1);
    const problems = tampered.report.files.find((entry) => entry.path === 'warden/warden.lock')!.problems;
    const found = problems.find((problem) => problem.code === 'TP122');
    assert.ok(found);
    assert.match(found.message, /^warden\.lock entry tools\/read_note does not match its own entry_digest/);

    const repinned = run(workspace, true, 'pin', '--yes');
    assert.equal(repinned.status, 0, repinned.stdout + repinned.stderr);
    const after = report(workspace);
    assert.equal(after.status, 0, JSON.stringify(after.report.files.map((entry) => entry.problems)));
    // Re-pinning what is already pinned changes nothing but nothing: the locks read back equal.
    const locks = ['mcp-pin.lock', path.join('warden', 'warden.lock')].map((name) => readFileSync(path.join(workspace, name), 'utf8'));
    assert.equal(run(workspace, true, 'pin', '--yes').status, 0);
    assert.deepEqual(['mcp-pin.lock', path.join('warden', 'warden.lock')].map((name) => readFileSync(path.join(workspace, name), 'utf8')), locks);
  });
});
