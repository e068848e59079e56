/**
 * `toolpin/repinEdits`, through the real built server: the re-pins of one document only (no
 * lower-casing or other fix rides along) with their count, which the VS Code "Re-pin All
 * Drifted" commands report, instead of a count read out of a code action's title.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { TextDocumentEdit } from 'vscode-languageserver-protocol';
import { RepinEditsRequest } from '../../server/src/protocol';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';

const root = repoRoot();
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
let server: TestServer;
let workspace: string;
let uri: string;

before(async () => {
  workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-repin-edits-'));
  writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio'] } } }));
  mkdirSync(path.join(workspace, 'flows'));
  const file = path.join(workspace, 'flows', 'two.blueprint.jsonc');
  uri = `file://${file}`;
  // One stale pin (drift) and one pin in uppercase hex (a structure problem with its own fix).
  const text = `{
  "blueprint": "two",
  "formatVersion": 1,
  "steps": [
    { "id": "a", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "fnv1a64:0000000000000000" } },
    { "id": "b", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "fnv1a64:A76FE8D6D023FCA0" } }
  ]
}
`;
  writeFileSync(file, text);
  server = await startTestServer({ rootUri: `file://${workspace}` });
  server.open(uri, text);
  await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 15_000);
});

after(async () => {
  await server.stop();
  rmSync(workspace, { recursive: true, force: true });
});

test('the re-pin edits hold the drifted pin only, and say how many', async () => {
  const result = await server.connection.sendRequest(RepinEditsRequest, { uri });
  assert.equal(result.repins, 1);
  const edits = (result.edit?.documentChanges ?? []).filter((change): change is TextDocumentEdit => 'textDocument' in change).flatMap((change) => change.edits);
  assert.equal(edits.length, 1, JSON.stringify(edits));
  const edit = edits[0]!;
  assert.equal('newText' in edit ? edit.newText : undefined, '"fnv1a64:a76fe8d6d023fca0"');
  assert.equal(edit.range.start.line, 4, 'the stale pin of step "a", not the uppercase one of step "b"');
});

test('a document with nothing drifted gets no edit', async () => {
  const result = await server.connection.sendRequest(RepinEditsRequest, { uri: `file://${path.join(workspace, 'flows', 'absent.blueprint.jsonc')}` });
  assert.deepEqual(result, { edit: null, repins: 0 });
});
