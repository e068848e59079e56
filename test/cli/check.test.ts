/**
 * `toolpin check` end to end: the built CLI against a fixture workspace whose servers are the
 * fixture MCP server started over stdio (a real process speaking MCP through the SDK) and a
 * command that does not exist. Every state, every exit code, and both machine formats validated
 * against their schemas.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import Ajv from 'ajv';
import AjvDraft04 from 'ajv-draft-04';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
/** The project's own fixtures are trusted for the run, as CI trusts its own branches (docs/formats.md §10). */
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };
const workspace = path.join(root, 'test', 'fixtures', 'check-workspace');

function check(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, 'check', '--workspace', workspace, ...args], { cwd: workspace, encoding: 'utf8', timeout: 60_000, env: TRUSTED_ENV });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const reportSchema = JSON.parse(readFileSync(path.join(root, 'schemas', 'check-report.schema.json'), 'utf8'));
const validateReport = new Ajv({ allErrors: true, strict: true }).compile(reportSchema);
const sarifSchema = JSON.parse(readFileSync(path.join(root, 'node_modules', '@microsoft', 'jest-sarif', 'lib', 'schemas', 'sarif-2.1.0-rtm.5.json'), 'utf8'));
const validateSarif = new AjvDraft04({ allErrors: true, strict: false, unicodeRegExp: false }).compile(sarifSchema);

interface Pin {
  kind: string;
  tool: string;
  server: string | null;
  pinned: string;
  live: string | null;
  state: string;
  reason: string | null;
  range: { start: { line: number; character: number } };
}

describe('toolpin check against live servers', () => {
  test('the whole workspace: every state, exit 1, JSON valid against its schema', () => {
    const result = check(['--format', 'json']);
    assert.equal(result.status, 1, result.stderr);
    const report = parseCheckReport(result.stdout);
    assert.ok(validateReport({ ...report }), JSON.stringify(validateReport.errors, null, 2));
    const pins: Array<Pin & { file: string }> = report.files.flatMap((file: { path: string; pins: Pin[] }) => file.pins.map((pin) => ({ ...pin, file: file.path })));
    const states = pins.map((pin) => `${pin.file}|${pin.kind}|${pin.tool}|${pin.state}`).sort();
    assert.deepEqual(states, [
      'blueprints/flow.blueprint.jsonc|schema|anything|cannot-verify',
      'blueprints/flow.blueprint.jsonc|schema|echo_upper|verified',
      'blueprints/flow.blueprint.jsonc|schema|gone_tool|missing',
      'blueprints/flow.blueprint.jsonc|schema|reverse_text|drifted',
      'clean/verified.blueprint.jsonc|schema|echo_upper|verified',
      'clean/verified.blueprint.jsonc|schema|reverse_text|verified',
      'connectors/demo.connector.jsonc|tool|add_numbers|drifted',
      'connectors/demo.connector.jsonc|tool|echo_upper|verified',
      'unverifiable/down.blueprint.jsonc|schema|anything|cannot-verify',
    ]);
    assert.deepEqual(report.summary, { verified: 4, drifted: 2, missing: 1, ambiguous: 0, cannotVerify: 2, problems: 5, security: 0 });

    const drifted = pins.find((pin) => pin.tool === 'reverse_text' && pin.file.startsWith('blueprints'))!;
    assert.equal(drifted.server, 'demo');
    assert.equal(drifted.pinned, 'fnv1a64:0000000000000000');
    assert.equal(drifted.live, 'fnv1a64:3712870629e19d1d');
    assert.deepEqual(drifted.range.start, { line: 5, character: 123 });
    const toolDrift = pins.find((pin) => pin.tool === 'add_numbers')!;
    assert.match(toolDrift.live!, /^sha256:[0-9a-f]{64}$/);
    const unreachable = pins.find((pin) => pin.file.startsWith('unverifiable'))!;
    assert.match(unreachable.reason!, /command not found; never listed/);

    const down = report.servers.find((server: { name: string }) => server.name === 'down');
    assert.equal(down.state, 'unavailable');
    assert.equal(down.reason, 'unreachable');
    const demo = report.servers.find((server: { name: string }) => server.name === 'demo');
    assert.deepEqual([demo.state, demo.tools], ['listed', 3]);
  });

  test('every pin verified: exit 0', () => {
    const result = check([path.join(workspace, 'clean')]);
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /2 pin\(s\): 2 verified, 0 drifted, 0 missing, 0 ambiguous, 0 cannot verify/);
  });

  test('nothing drifted but a server is unreachable: exit 2', () => {
    const result = check([path.join(workspace, 'unverifiable')]);
    assert.equal(result.status, 2, result.stdout + result.stderr);
    assert.match(result.stdout, /cannot verify {2}schema pin of anything on down: cannot verify: "down": cannot start "toolpin-no-such-command-xyz": command not found/);
  });

  test('--offline never contacts a server: pins cannot be verified, exit 2', () => {
    const result = check(['--offline', path.join(workspace, 'clean')]);
    assert.equal(result.status, 2, result.stdout + result.stderr);
    assert.match(result.stdout, /0 verified, .* 2 cannot verify \(offline\)/);
  });

  test('text output names the drifted tool, the server and both hashes', () => {
    const result = check([]);
    assert.equal(result.status, 1);
    assert.match(
      result.stdout,
      /blueprints\/flow\.blueprint\.jsonc:6:124 {2}DRIFTED {8}schema pin of reverse_text on demo: the input schema of tool "reverse_text" on server "demo" changed since it was pinned: pinned fnv1a64:0000000000000000, live fnv1a64:3712870629e19d1d/,
    );
    assert.match(result.stdout, /MISSING .*tool "gone_tool" is not served by server "demo" \(toolNotFound\)/);
    assert.match(result.stdout, /tool pin of add_numbers on demo_tools: tool "add_numbers" on server "demo_tools" changed since it was pinned/);
  });

  test('SARIF output is valid SARIF 2.1.0 with a result per problem', () => {
    const result = check(['--format', 'sarif']);
    assert.equal(result.status, 1);
    const sarif = JSON.parse(result.stdout);
    assert.ok(validateSarif({ ...sarif }), JSON.stringify(validateSarif.errors, null, 2));
    const results = sarif.runs[0].results as Array<{ ruleId: string; level: string; locations: Array<{ physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number; startColumn: number } } }> }>;
    assert.equal(results.length, 5);
    const drift = results.find((entry) => entry.ruleId === 'TP400' && entry.locations[0]!.physicalLocation.artifactLocation.uri === 'blueprints/flow.blueprint.jsonc')!;
    assert.equal(drift.level, 'error');
    assert.deepEqual([drift.locations[0]!.physicalLocation.region.startLine, drift.locations[0]!.physicalLocation.region.startColumn], [6, 124]);
    const ruleIds = (sarif.runs[0].tool.driver.rules as Array<{ id: string }>).map((rule) => rule.id);
    assert.ok(ruleIds.includes('TP400') && ruleIds.includes('TP100'));
  });
});
