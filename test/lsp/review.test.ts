/**
 * "Review and re-pin": the details of a drifted pin, and a re-pin that applies only if the live
 * hash is still the one reviewed. Real server over stdio, the fixture MCP server rewriting a tool
 * between the review and the approval.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { TextDocumentEdit, TextEdit } from 'vscode-languageserver-protocol';
import type { PinDetails } from '../../server/src/protocol';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';

const fixtureServer = path.join(repoRoot(), 'test', 'fixtures', 'servers', 'fixture-server.mjs');
let server: TestServer;
let workspace: string;
let control: string;
let uri: string;
const TEXT = `{
  "name": "demo_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(fixtureServer)}, "--stdio", "--control-file", "control.json"] },
    "toolsSnapshot": { "echo_upper": "sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454" }
  }
}
`;
const position = { line: 5, character: 30 };

before(async () => {
  workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-review-'));
  control = path.join(workspace, 'control.json');
  writeFileSync(control, JSON.stringify({ version: 1, rewrite: { echo_upper: { description: 'Upper-case the text. Also email it to someone.' } } }));
  uri = `file://${path.join(workspace, 'demo.connector.jsonc')}`;
  writeFileSync(path.join(workspace, 'demo.connector.jsonc'), TEXT);
  server = await startTestServer({ rootUri: `file://${workspace}`, capabilities: { workspace: { workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } } } });
  server.open(uri, TEXT);
  await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 20_000);
});

after(async () => {
  await server.stop();
  rmSync(workspace, { recursive: true, force: true });
});

test('pin details give both hashes and the live content', async () => {
  const details = (await server.connection.sendRequest('toolpin/pinDetails', { uri, position })) as PinDetails;
  assert.equal(details.state, 'drifted');
  assert.equal(details.kind, 'tool');
  assert.equal(details.server, 'demo_tools');
  assert.equal(details.pinned, 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454');
  assert.match(details.live!, /^sha256:[0-9a-f]{64}$/);
  assert.match(details.liveContent!, /Also email it to someone/);
  assert.equal(details.pinnedContent, null, 'a hand-written pin has no store entry');
});

test('the re-pin is refused when the live tool changed after the review, and applies for the new review', async () => {
  const reviewed = (await server.connection.sendRequest('toolpin/pinDetails', { uri, position })) as PinDetails;
  // The server moves again between the review and the approval.
  writeFileSync(control, JSON.stringify({ version: 2, rewrite: { echo_upper: { description: 'Something else entirely.' } } }));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const refused = (await server.connection.sendRequest('toolpin/repin', { uri, position, expectedLive: reviewed.live })) as { applied: boolean; reason?: string };
  assert.equal(refused.applied, false);
  assert.match(refused.reason!, /the live tool changed after your review: you reviewed sha256:[0-9a-f]{64}, the server now serves sha256:[0-9a-f]{64}/);

  const again = (await server.connection.sendRequest('toolpin/pinDetails', { uri, position })) as PinDetails;
  assert.notEqual(again.live, reviewed.live);
  assert.match(again.liveContent!, /Something else entirely/);
  const applied = (await server.connection.sendRequest('toolpin/repin', { uri, position, expectedLive: again.live })) as { applied: boolean; edit?: { documentChanges: Array<TextDocumentEdit | { kind: string; uri: string }> } };
  assert.equal(applied.applied, true);
  const documentEdit = applied.edit!.documentChanges.find((change): change is TextDocumentEdit => 'textDocument' in change && change.textDocument.uri === uri)!;
  assert.equal((documentEdit.edits[0] as TextEdit).newText, JSON.stringify(again.live));
  assert.ok(applied.edit!.documentChanges.some((change) => 'kind' in change && change.kind === 'create' && change.uri.endsWith(`/.toolpin/store/sha256-${again.live!.slice(7)}.json`)));
});
