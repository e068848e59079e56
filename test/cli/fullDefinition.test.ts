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
import { serverSlug } from '../../server/src/core/verify/fullDefinition';
import { parseCheckReport } from '../support/checkReport';

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
    return { status: result.status, report: parseCheckReport(result.stdout) as Report };
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
    const file = path.join(workspace, '.toolpin', 'store', `full-${serverSlug('demo_tools')}-sha256-${ECHO_TOOL_HEX}.json`);
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

/**
 * Issue 25: two servers serving the same tool (one pin) used to share one full-definition entry,
 * so the second re-pin overwrote the first server's annotations and the next check gave that
 * server a false TP408 (or, the other way round, masked a real one). Entries are keyed by server
 * now; an entry of an older store (no server in its name) is still read as a fallback.
 */
describe('full definitions of one tool on two servers', () => {
  let workspace: string;
  const controls: Record<string, string> = {};
  const instance = (name: string, pin: string): Record<string, unknown> => ({
    name,
    provider: 'mcp',
    providerConfig: { transport: { kind: 'stdio', command: process.execPath, args: [fixtureServer, '--stdio', '--control-file', controls[name]!] }, include: ['echo_upper'], toolsSnapshot: { echo_upper: pin } },
  });
  const serve = (name: string, version: number, patch: Record<string, unknown>): void => writeFileSync(controls[name]!, JSON.stringify({ version, rewrite: { echo_upper: patch } }));
  const writeConnectors = (pin: string): void => {
    writeFileSync(path.join(workspace, 'reader.connector.json'), JSON.stringify(instance('reader', pin)));
    writeFileSync(path.join(workspace, 'writer.connector.json'), JSON.stringify(instance('writer', pin)));
  };
  const check = (): { status: number | null; report: Report; stderr: string } => {
    const result = run(workspace, 'check', '--format', 'json', '--fail-on', 'warning');
    return { status: result.status, report: parseCheckReport(result.stdout) as Report, stderr: result.stderr };
  };
  const codes = (report: Report): string[] => report.files.flatMap((file) => file.problems.map((found) => found.code));

  before(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-full-two-'));
    for (const name of ['reader', 'writer']) controls[name] = path.join(workspace, `${name}.control.json`);
    // The same tool (name, description, input schema: one pin) with other annotations on each server.
    serve('reader', 1, { annotations: { readOnlyHint: true } });
    serve('writer', 1, { annotations: { readOnlyHint: false } });
    writeConnectors(`sha256:${'0'.repeat(64)}`);
  });
  after(() => rmSync(workspace, { recursive: true, force: true }));

  test('pin --yes keeps one entry per server, and the check right after it is clean', () => {
    const pinned = run(workspace, 'pin', '--yes');
    assert.equal(pinned.status, 0, pinned.stderr + pinned.stdout);
    const store = path.join(workspace, '.toolpin', 'store');
    for (const [name, readOnly] of [['reader', true], ['writer', false]] as const) {
      const file = path.join(store, `full-${serverSlug(name)}-sha256-${ECHO_TOOL_HEX}.json`);
      assert.ok(existsSync(file), `the entry of ${name}`);
      assert.deepEqual((JSON.parse(readFileSync(file, 'utf8')) as { tool: { annotations: unknown } }).tool.annotations, { readOnlyHint: readOnly });
    }
    assert.ok(!existsSync(path.join(store, `full-sha256-${ECHO_TOOL_HEX}.json`)), 'no shared entry is written');
    const { status, report } = check();
    assert.deepEqual(codes(report), [], 'no TP408/TP409 from the other server\'s annotations');
    assert.equal(status, 0);
  });

  test('a real flip on one server is reported for that server only', () => {
    serve('reader', 2, { annotations: { readOnlyHint: false } });
    const { status, report } = check();
    assert.deepEqual(codes(report), ['TP408']);
    assert.match(report.files.flatMap((file) => file.problems)[0]!.message, /on server "reader"/);
    assert.equal(status, 1);
    serve('reader', 3, { annotations: { readOnlyHint: true } });
  });

  test('an older store: the entry without a server is read as a fallback for a server without its own', () => {
    const store = path.join(workspace, '.toolpin', 'store');
    rmSync(path.join(store, `full-${serverSlug('writer')}-sha256-${ECHO_TOOL_HEX}.json`));
    // The legacy entry holds the reader's definition: the writer is compared with it, as before.
    writeFileSync(path.join(store, `full-sha256-${ECHO_TOOL_HEX}.json`), readFileSync(path.join(store, `full-${serverSlug('reader')}-sha256-${ECHO_TOOL_HEX}.json`)));
    const { report } = check();
    const problems = report.files.flatMap((file) => file.problems);
    assert.deepEqual(problems.map((found) => found.code), ['TP408']);
    assert.match(problems[0]!.message, /on server "writer"/);
  });
});

