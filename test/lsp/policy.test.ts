/**
 * `.toolpin/policy.jsonc` in the editor, through the real built language server over stdio with
 * the fixture MCP server (a real process): the drift diagnostic's severity and message follow the
 * policy, the hover names what the policy did, and a change of the policy file on disk (a watched
 * file) re-publishes the diagnostics without anyone typing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DidChangeWatchedFilesNotification, FileChangeType, type Hover, HoverRequest, type PublishDiagnosticsParams } from 'vscode-languageserver-protocol';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';

const root = repoRoot();
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const DRIFTED_PIN = `sha256:${'0'.repeat(64)}`;

const drift = (params: PublishDiagnosticsParams) => params.diagnostics.find((diagnostic) => diagnostic.code === 'TP400');

describe('the policy in the editor', () => {
  let server: TestServer;
  let workspace: string;
  let policyFile: string;
  let uri: string;
  let text: string;

  before(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-lsp-policy-'));
    mkdirSync(path.join(workspace, '.toolpin'));
    policyFile = path.join(workspace, '.toolpin', 'policy.jsonc');
    writeFileSync(policyFile, '{ "ignore": [ { "server": "notes_tools", "tool": "add_numbers", "codes": ["TP400"], "reason": "upstream fix pending", "expires": "2999-01-31" } ] }');
    text = `${JSON.stringify(
      {
        name: 'notes_tools',
        provider: 'mcp',
        providerConfig: { transport: { kind: 'stdio', command: process.execPath, args: [fixtureServer, '--stdio'] }, include: ['add_numbers'], toolsSnapshot: { add_numbers: DRIFTED_PIN } },
      },
      null,
      2,
    )}\n`;
    const file = path.join(workspace, 'notes.connector.json');
    writeFileSync(file, text);
    uri = `file://${file}`;
    server = await startTestServer({ rootUri: `file://${workspace}` });
  });

  after(async () => {
    await server.stop();
    rmSync(workspace, { recursive: true, force: true });
  });

  test('an ignored drift is information, with the reason and the date', async () => {
    server.open(uri, text);
    const published = await server.diagnostics(uri, (params) => drift(params) !== undefined, 20_000);
    const found = drift(published)!;
    assert.equal(found.severity, 3);
    assert.match(String(found.message), /\(ignored by \.toolpin\/policy\.jsonc until 2999-01-31: upstream fix pending\)$/);
  });

  test('the hover on the pin says what the policy did', async () => {
    const lines = text.split('\n');
    const line = lines.findIndex((entry) => entry.includes(DRIFTED_PIN));
    const hover = (await server.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: { line, character: lines[line]!.indexOf(DRIFTED_PIN) + 3 } })) as Hover;
    const value = (hover.contents as { value: string }).value;
    assert.match(value, /^\*\*✗ drifted\*\*/, 'the verdict is still drifted');
    assert.match(value, /Policy: `ignored by \.toolpin\/policy\.jsonc until 2999-01-31: upstream fix pending`/);
  });

  test('a changed policy file is read again: an override makes the drift a warning', async () => {
    const before = server.published.length;
    writeFileSync(policyFile, '{ "rules": [ { "tool": "add_numbers", "severity": { "TP400": "warning" } } ] }');
    void server.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: `file://${policyFile}`, type: FileChangeType.Changed }] });
    const published = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= before && drift(params)?.severity === 2, 20_000);
    assert.match(String(drift(published)!.message), /severity warning \(not error\) by \.toolpin\/policy\.jsonc for tool "add_numbers"/);
  });

  test('a deleted policy file gives the drift its own severity back', async () => {
    const before = server.published.length;
    unlinkSync(policyFile);
    void server.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: `file://${policyFile}`, type: FileChangeType.Deleted }] });
    const published = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= before && drift(params)?.severity === 1, 20_000);
    assert.doesNotMatch(String(drift(published)!.message), /policy/);
  });
});
