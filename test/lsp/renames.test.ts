/**
 * The rename quick fix of TP401 through the real built language server, with the fixture MCP
 * server (a real process) serving a tools file in which `read_file` became `read_text_file` with
 * the same input schema: the diagnostic names the likely rename, and the fix renames the step's
 * `toolName` (or the snapshot key and its include entry) and re-pins, after which the file
 * verifies clean. The fix is never preferred: it is a guess from matching content.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CodeAction, Diagnostic, TextDocumentEdit, TextEdit, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { schemaPin, toolPin } from '../../server/src/core/pins/pins';
import { startTestServer, type TestServer } from '../support/lspClient';
import { createWorkspace, FIXTURE_SERVER, fixtureServer, type WorkspaceFixture } from '../support/workspaceFixture';

const SCHEMA = { type: 'object', properties: { path: { type: 'string', description: 'The file to read' } }, required: ['path'] };
const READ_FILE = { name: 'read_file', description: 'Read a file.', inputSchema: SCHEMA };
const READ_TEXT_FILE = { name: 'read_text_file', description: 'Read a file.', inputSchema: SCHEMA };
const WRITE_FILE = { name: 'write_file', description: 'Write a file.', inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } };

function applyLspEdits(text: string, edits: readonly TextEdit[]): string {
  const lines = text.split('\n');
  const offsetOf = (position: { line: number; character: number }): number => lines.slice(0, position.line).reduce((sum, line) => sum + line.length + 1, 0) + position.character;
  let result = text;
  for (const edit of [...edits].sort((a, b) => offsetOf(b.range.start) - offsetOf(a.range.start))) {
    result = result.slice(0, offsetOf(edit.range.start)) + edit.newText + result.slice(offsetOf(edit.range.end));
  }
  return result;
}

function blueprint(tool: string): string {
  return `{
  "blueprint": "renames",
  "formatVersion": 1,
  "steps": [
    { "id": "read", "effect": "mcp.invoke", "input": { "toolName": "${tool}", "server": "fs", "expectedSchemaHash": "${schemaPin(SCHEMA)}" } }, // reads
  ],
}
`;
}

function connector(toolsFile: string, tool: string, pin: string): string {
  return `{
  "name": "fs_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(FIXTURE_SERVER)}, "--stdio", "--tools-file", ${JSON.stringify(toolsFile)}] },
    "include": ["${tool}", "write_file"],
    "toolsSnapshot": { "${tool}": "${pin}", "write_file": "${toolPin(WRITE_FILE)}" }
  }
}
`;
}

describe('the rename quick fix of TP401', () => {
  let server: TestServer;
  let workspace: WorkspaceFixture;
  let toolsFile: string;

  before(async () => {
    workspace = createWorkspace('toolpin-renames-', { 'tools.json': [READ_TEXT_FILE, WRITE_FILE] });
    toolsFile = workspace.path('tools.json');
    workspace.mcpServers({ fs: fixtureServer('--tools-file', toolsFile) });
    server = await startTestServer({ rootUri: workspace.uri, capabilities: { workspace: { workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } } } });
  });

  after(async () => {
    await server.stop();
    workspace.remove();
  });

  async function open(name: string, text: string, code: string): Promise<{ uri: string; found: Diagnostic; actions: CodeAction[] }> {
    const uri = workspace.write(name, text);
    server.open(uri, text);
    const published = await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === code), 20_000);
    const found = published.diagnostics.find((diagnostic) => diagnostic.code === code)!;
    const actions = (await server.connection.sendRequest('textDocument/codeAction', { textDocument: { uri }, range: found.range, context: { diagnostics: [found] } })) as CodeAction[];
    return { uri, found, actions };
  }

  function documentEdits(action: CodeAction, uri: string): TextEdit[] {
    const changes = (action.edit as WorkspaceEdit).documentChanges ?? [];
    return (changes.find((change): change is TextDocumentEdit => 'textDocument' in change && change.textDocument.uri === uri)!.edits) as TextEdit[];
  }

  test('a blueprint step: the message names the rename; the fix renames toolName and the step verifies', async () => {
    const text = blueprint('read_file');
    const { uri, found, actions } = await open('read.blueprint.jsonc', text, 'TP401');
    assert.match(String(found.message), /tool "read_file" is not served by server "fs" \(toolNotFound\); "read_text_file" looks like its rename \(the same input schema\)$/);
    const rename = actions.find((action) => action.title.startsWith('Rename "read_file" to "read_text_file"'));
    assert.ok(rename, `offered; got ${actions.map((action) => action.title).join(', ')}`);
    assert.equal(rename.title, 'Rename "read_file" to "read_text_file" and re-pin (same input schema; review the live tool first)');
    assert.equal(rename.isPreferred, undefined);
    const fixed = applyLspEdits(text, documentEdits(rename, uri));
    // Same schema, same pin: only the name changes, and the comment after the step stays.
    assert.equal(fixed, blueprint('read_text_file'));
    server.change(uri, 2, [{ text: fixed }]);
    const after = await server.diagnostics(uri, (params) => !params.diagnostics.some((diagnostic) => diagnostic.code === 'TP401'), 20_000);
    assert.deepEqual(after.diagnostics.map((diagnostic) => diagnostic.code), []);
  });

  test('a connector snapshot entry: the fix renames the key and the include entry, re-pins, and writes the store entry', async () => {
    const text = connector(toolsFile, 'read_file', toolPin(READ_FILE));
    const { uri, found, actions } = await open('fs.connector.jsonc', text, 'TP401');
    assert.match(String(found.message), /"read_text_file" looks like its rename \(the same tool under a new name\)$/);
    const titles = actions.filter((action) => action.kind === 'quickfix').map((action) => action.title);
    assert.deepEqual(titles.slice(0, 2), ['Rename "read_file" to "read_text_file" and re-pin (same content; review the live tool first)', 'Remove the pin of "read_file" (no longer served)']);
    const rename = actions[0]!;
    const changes = (rename.edit as WorkspaceEdit).documentChanges ?? [];
    assert.ok(changes.some((change) => 'kind' in change && change.kind === 'create' && change.uri.endsWith(`/.toolpin/store/sha256-${toolPin(READ_TEXT_FILE).slice(7)}.json`)), 'the re-pin writes its store entry');
    const fixed = applyLspEdits(text, documentEdits(rename, uri));
    assert.equal(fixed, connector(toolsFile, 'read_text_file', toolPin(READ_TEXT_FILE)));
    server.change(uri, 2, [{ text: fixed }]);
    const after = await server.diagnostics(uri, (params) => !params.diagnostics.some((diagnostic) => diagnostic.code === 'TP401'), 20_000);
    assert.deepEqual(after.diagnostics.map((diagnostic) => diagnostic.code), []);
  });
});
