/**
 * Changes beyond the pinned fields in the editor, through the real built language server and the
 * fixture MCP server (a real process): a verified tool pin whose stored full definition says
 * read-only, served now as not read-only, gets a TP408 warning, and its quick fix records the live
 * definition in the store (a new file, no edit to the document).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type CodeAction, CodeActionRequest, type CreateFile, type TextDocumentEdit } from 'vscode-languageserver-protocol';
import { fullDefinitionContent, serverSlug } from '../../server/src/core/verify/fullDefinition';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';
import { ECHO_TOOL_HEX, ECHO_UPPER } from '../support/referenceVectors';

const root = repoRoot();
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');

describe('a tool that changed outside its pin, in the editor', () => {
  let server: TestServer;
  let workspace: string;
  let uri: string;
  let text: string;

  before(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-lsp-outside-'));
    const control = path.join(workspace, 'control.json');
    writeFileSync(control, JSON.stringify({ version: 1, rewrite: { echo_upper: { annotations: { readOnlyHint: false } } } }));
    mkdirSync(path.join(workspace, '.toolpin', 'store'), { recursive: true });
    writeFileSync(path.join(workspace, '.toolpin', 'store', `full-sha256-${ECHO_TOOL_HEX}.json`), fullDefinitionContent({ ...ECHO_UPPER, annotations: { readOnlyHint: true } })!);
    text = `${JSON.stringify(
      {
        name: 'demo_tools',
        provider: 'mcp',
        providerConfig: { transport: { kind: 'stdio', command: process.execPath, args: [fixtureServer, '--stdio', '--control-file', control] }, include: ['echo_upper'], toolsSnapshot: { echo_upper: `sha256:${ECHO_TOOL_HEX}` } },
      },
      null,
      2,
    )}\n`;
    const file = path.join(workspace, 'demo.connector.json');
    writeFileSync(file, text);
    uri = `file://${file}`;
    server = await startTestServer({ rootUri: `file://${workspace}`, capabilities: { workspace: { workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } } } });
  });

  after(async () => {
    await server.stop();
    rmSync(workspace, { recursive: true, force: true });
  });

  test('TP408 warns on the verified pin, and the quick fix writes the live definition to the store', async () => {
    server.open(uri, text);
    const published = await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP408'), 20_000);
    const warning = published.diagnostics.find((diagnostic) => diagnostic.code === 'TP408')!;
    assert.equal(warning.severity, 2);
    assert.match(String(warning.message), /tool "echo_upper" on server "demo_tools" changed how it behaves since it was pinned, which the pin does not cover: annotations\.readOnlyHint true → false/);
    assert.ok(!published.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 'the pin itself verifies');

    const actions = (await server.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: warning.range, context: { diagnostics: [warning] } })) as CodeAction[];
    const accept = actions.find((action) => action.title.startsWith('Accept the new definition of "echo_upper"'));
    assert.ok(accept, JSON.stringify(actions.map((action) => action.title)));
    const changes = accept.edit!.documentChanges! as Array<TextDocumentEdit | CreateFile>;
    const created = changes.find((change): change is CreateFile => 'kind' in change && change.kind === 'create');
    // The store holds an entry of an older store (no server in its name), read as a fallback; the
    // fix records the live definition under the server's own name (issue 25).
    assert.equal(created?.uri, `file://${path.join(workspace, '.toolpin', 'store', `full-${serverSlug('demo_tools')}-sha256-${ECHO_TOOL_HEX}.json`)}`);
    const written = changes.find((change): change is TextDocumentEdit => 'textDocument' in change && change.textDocument.uri === created!.uri)!;
    assert.deepEqual(JSON.parse((written.edits[0] as { newText: string }).newText), { version: 1, tool: { ...ECHO_UPPER, annotations: { readOnlyHint: false } } });
    const documentEdit = changes.find((change): change is TextDocumentEdit => 'textDocument' in change && change.textDocument.uri === uri);
    assert.equal(documentEdit?.edits.length ?? 0, 0, 'the document is not edited');
  });
});
