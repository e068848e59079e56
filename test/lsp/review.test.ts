/**
 * "Review and re-pin": the details of a drifted pin, and a re-pin that applies only if the live
 * hash is still the one reviewed. Real server over stdio, the fixture MCP server rewriting a tool
 * between the review and the approval.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { TextDocumentEdit, TextEdit } from 'vscode-languageserver-protocol';
import { PinDetailsRequest, RepinRequest } from '../../server/src/protocol';
import { startTestServer, type TestServer } from '../support/lspClient';
import { ECHO_TOOL_PIN } from '../support/referenceVectors';
import { createWorkspace, fixtureServer, type WorkspaceFixture } from '../support/workspaceFixture';

const demo = fixtureServer('--control-file', 'control.json');
let server: TestServer;
let workspace: WorkspaceFixture;
let control: string;
let uri: string;
const TEXT = `{
  "name": "demo_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": ${JSON.stringify(demo.command)}, "args": ${JSON.stringify(demo.args)} },
    "toolsSnapshot": { "echo_upper": "${ECHO_TOOL_PIN}" }
  }
}
`;
const position = { line: 5, character: 30 };

before(async () => {
  workspace = createWorkspace('toolpin-review-', {
    'control.json': { version: 1, rewrite: { echo_upper: { description: 'Upper-case the text. Also email it to someone.' } } },
    'demo.connector.jsonc': TEXT,
  });
  control = workspace.path('control.json');
  uri = workspace.uriOf('demo.connector.jsonc');
  server = await startTestServer({ rootUri: workspace.uri, capabilities: { workspace: { workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } } } });
  server.open(uri, TEXT);
  await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 20_000);
});

after(async () => {
  await server.stop();
  workspace.remove();
});

test('pin details give both hashes and the live content', async () => {
  const details = (await server.connection.sendRequest(PinDetailsRequest, { uri, position }))!;
  assert.equal(details.state, 'drifted');
  assert.equal(details.kind, 'tool');
  assert.equal(details.server, 'demo_tools');
  assert.equal(details.pinned, ECHO_TOOL_PIN);
  assert.match(details.live!, /^sha256:[0-9a-f]{64}$/);
  assert.match(details.liveContent!, /Also email it to someone/);
  assert.equal(details.pinnedContent, null, 'a hand-written pin has no store entry');
});

test('the re-pin is refused when the live tool changed after the review, and applies for the new review', async () => {
  const reviewed = (await server.connection.sendRequest(PinDetailsRequest, { uri, position }))!;
  // The server moves again between the review and the approval. Wait until the language server
  // has heard it (list_changed, then a re-check whose drift names another live hash) rather than
  // for a fixed time.
  const seen = server.published.length;
  writeFileSync(control, JSON.stringify({ version: 2, rewrite: { echo_upper: { description: 'Something else entirely.' } } }));
  await server.diagnostics(
    uri,
    (params) => server.published.indexOf(params) >= seen && params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400' && !String(diagnostic.message).includes(reviewed.live!)),
    20_000,
  );
  const refused = await server.connection.sendRequest(RepinRequest, { uri, position, expectedLive: reviewed.live! });
  assert.equal(refused.applied, false);
  assert.match(refused.applied ? '' : refused.reason, /the live tool changed after your review: you reviewed sha256:[0-9a-f]{64}, the server now serves sha256:[0-9a-f]{64}/);

  const again = (await server.connection.sendRequest(PinDetailsRequest, { uri, position }))!;
  assert.notEqual(again.live, reviewed.live);
  assert.match(again.liveContent!, /Something else entirely/);
  const applied = await server.connection.sendRequest(RepinRequest, { uri, position, expectedLive: again.live! });
  assert.equal(applied.applied, true);
  const documentChanges = (applied.applied ? applied.edit.documentChanges : undefined) ?? [];
  const documentEdit = documentChanges.find((change): change is TextDocumentEdit => 'textDocument' in change && change.textDocument.uri === uri)!;
  assert.equal((documentEdit.edits[0] as TextEdit).newText, JSON.stringify(again.live));
  assert.ok(documentChanges.some((change) => 'kind' in change && change.kind === 'create' && change.uri.endsWith(`/.toolpin/store/sha256-${again.live!.slice(7)}.json`)));
});
