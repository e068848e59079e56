/**
 * Drift in the editor, through the real built language server over stdio, with the fixture MCP
 * server (a real process speaking MCP) rewriting a tool at run time: the drift diagnostic names the
 * tool, the hover shows both hashes, the re-pin edit applies and writes the store entry, the
 * diagnostic clears; a later rewrite arrives by list_changed without anyone typing, and then the
 * hover shows what changed, because the store has the pinned content.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CodeAction, CreateFile, Hover, TextDocumentEdit, TextEdit, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { startTestServer, type TestServer } from '../support/lspClient';
import { ECHO_SCHEMA_PIN } from '../support/referenceVectors';
import { createWorkspace, fixtureServer, type WorkspaceFixture } from '../support/workspaceFixture';

function blueprint(pin: string): string {
  return `{
  // Shout the subject.
  "blueprint": "shout",
  "formatVersion": 1,
  "steps": [
    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "${pin}", "arguments": { "text": "hi" } } }
  ]
}
`;
}

function applyTextEdits(text: string, edits: readonly TextEdit[], lines = text.split('\n')): string {
  const offsetOf = (position: { line: number; character: number }): number =>
    lines.slice(0, position.line).reduce((sum, line) => sum + line.length + 1, 0) + position.character;
  let result = text;
  for (const edit of [...edits].sort((a, b) => offsetOf(b.range.start) - offsetOf(a.range.start))) {
    result = result.slice(0, offsetOf(edit.range.start)) + edit.newText + result.slice(offsetOf(edit.range.end));
  }
  return result;
}

describe('drift in the editor, live', () => {
  let server: TestServer;
  let workspace: WorkspaceFixture;
  let control: string;
  let uri: string;
  let text: string;

  before(async () => {
    workspace = createWorkspace('toolpin-drift-');
    // The server has already moved when the editor opens: echo_upper's schema gained a property.
    workspace.write('control.json', { version: 1, rewrite: { echo_upper: { inputSchema: { type: 'object', properties: { text: { type: 'string' }, shout: { type: 'boolean' } }, required: ['text'] } } } });
    control = workspace.path('control.json');
    workspace.mcpServers({ demo: fixtureServer('--control-file', control) });
    text = blueprint(ECHO_SCHEMA_PIN);
    uri = workspace.write('flows/shout.blueprint.jsonc', text);
    server = await startTestServer({
      rootUri: workspace.uri,
      capabilities: { workspace: { workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } } },
    });
  });

  after(async () => {
    await server.stop();
    workspace.remove();
  });

  test('the drift diagnostic names the tool, the server and both hashes', async () => {
    server.open(uri, text);
    const published = await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 20_000);
    const drift = published.diagnostics.find((diagnostic) => diagnostic.code === 'TP400')!;
    assert.match(String(drift.message), /tool "echo_upper" on server "demo" changed since it was pinned: pinned fnv1a64:a76fe8d6d023fca0, live fnv1a64:[0-9a-f]{16}/);
    // Written by hand, so the store cannot say what changed: the message says how to get it.
    assert.match(String(drift.message), /what changed is unknown/);
    assert.equal(drift.severity, 1);
  });

  test('hover on the pin shows the state and both hashes', async () => {
    const line = text.split('\n').findIndex((candidate) => candidate.includes('expectedSchemaHash'));
    const character = text.split('\n')[line]!.indexOf(ECHO_SCHEMA_PIN) + 3;
    const hover = (await server.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line, character } })) as Hover;
    const value = (hover.contents as { value: string }).value;
    assert.match(value, /drifted/);
    assert.match(value, /fnv1a64:a76fe8d6d023fca0/);
    assert.match(value, /\| live \| `fnv1a64:[0-9a-f]{16}` \|/);
    assert.match(value, /"shout"/, 'the live schema is shown');
  });

  test('completion offers live tool names, server names and the live pin', async () => {
    const lines = text.split('\n');
    const line = lines.findIndex((candidate) => candidate.includes('expectedSchemaHash'));
    const at = (needle: string, delta: number): { line: number; character: number } => ({ line, character: lines[line]!.indexOf(needle) + delta });
    type Items = Array<{ label: string; detail?: string }>;
    const tools = (await server.connection.sendRequest('textDocument/completion', { textDocument: { uri }, position: at('"echo_upper"', 1) })) as Items;
    assert.deepEqual(tools.map((item) => item.label).sort(), ['add_numbers', 'echo_upper', 'reverse_text']);
    const servers = (await server.connection.sendRequest('textDocument/completion', { textDocument: { uri }, position: at('"demo"', 1) })) as Items;
    assert.deepEqual(servers.map((item) => item.label), ['demo']);
    const pins = (await server.connection.sendRequest('textDocument/completion', { textDocument: { uri }, position: at('"fnv1a64:', 1) })) as Items;
    assert.equal(pins.length, 1);
    assert.match(pins[0]!.label, /^fnv1a64:[0-9a-f]{16}$/);
    assert.notEqual(pins[0]!.label, ECHO_SCHEMA_PIN, 'the live pin, not the stale one');
  });

  test('the code lens counts the pins and offers Re-pin all and Refresh', async () => {
    const lenses = (await server.connection.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as Array<{ command: { title: string; command: string } }>;
    assert.deepEqual(lenses.map((lens) => lens.command.command), ['toolpin.showOutput', 'toolpin.repinFile', 'toolpin.refresh']);
    assert.match(lenses[0]!.command.title, /^1 pin · 1 drifted · verified (just now|\d+ s ago)$/);
  });

  test('the re-pin quick fix applies, writes the store entry, and the diagnostic clears', async () => {
    const published = server.published.filter((params) => params.uri === uri).at(-1)!;
    const drift = published.diagnostics.find((diagnostic) => diagnostic.code === 'TP400')!;
    const actions = (await server.connection.sendRequest('textDocument/codeAction', { textDocument: { uri }, range: drift.range, context: { diagnostics: [drift] } })) as CodeAction[];
    const repin = actions.find((action) => action.title.startsWith('Re-pin "echo_upper"'))!;
    assert.ok(repin, `a re-pin action is offered; got ${actions.map((action) => action.title).join(', ')}`);
    const changes = (repin.edit as WorkspaceEdit).documentChanges!;
    const create = changes.find((change): change is CreateFile => (change as CreateFile).kind === 'create')!;
    const storeEdit = changes.find((change): change is TextDocumentEdit => 'textDocument' in change && change.textDocument.uri === create.uri)!;
    const documentEdit = changes.find((change): change is TextDocumentEdit => 'textDocument' in change && change.textDocument.uri === uri)!;
    const documentEdits = documentEdit.edits as TextEdit[];
    const newPin = JSON.parse(documentEdits[0]!.newText) as string;
    assert.match(newPin, /^fnv1a64:[0-9a-f]{16}$/);
    assert.match(create.uri, new RegExp(`/\\.toolpin/store/fnv1a64-${newPin.slice(8)}\\.json$`));

    // Apply as a client would: create the store file, then edit the document.
    const storePath = decodeURIComponent(new URL(create.uri).pathname);
    mkdirSync(path.dirname(storePath), { recursive: true });
    writeFileSync(storePath, (storeEdit.edits as TextEdit[])[0]!.newText);
    const edited = applyTextEdits(text, documentEdits);
    assert.equal(edited, blueprint(newPin), 'only the pin changed; the comment and layout are kept');
    text = edited;
    workspace.write('flows/shout.blueprint.jsonc', text);
    server.change(uri, 2, [{ text }]);
    const cleared = await server.diagnostics(uri, (params) => params.version === 2, 10_000);
    assert.deepEqual(cleared.diagnostics.filter((diagnostic) => diagnostic.code === 'TP400'), []);

    // The store entry holds exactly the hashed bytes: its FNV is the file name's.
    const stored = readFileSync(storePath, 'utf8');
    assert.equal(stored, JSON.stringify({ properties: { shout: { type: 'boolean' }, text: { type: 'string' } }, required: ['text'], type: 'object' }));
    assert.ok(existsSync(storePath));
  });

  test('a later rewrite arrives by list_changed without typing, and the hover shows what changed', async () => {
    const seen = server.published.length;
    writeFileSync(control, JSON.stringify({ version: 2, rewrite: { echo_upper: { inputSchema: { type: 'object', properties: { text: { type: 'string' }, shout: { type: 'boolean' }, locale: { type: 'string' } }, required: ['text', 'locale'] } } } }));
    const published = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= seen && params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 20_000);
    const drift = published.diagnostics.find((diagnostic) => diagnostic.code === 'TP400')!;
    assert.match(String(drift.message), /required property "locale" added/);
    // The arguments lack the new required property: the call would fail on today's schema.
    assert.ok(published.diagnostics.some((diagnostic) => diagnostic.code === 'TP410' && /locale/.test(String(diagnostic.message))), 'TP410 names the missing argument');
    const line = text.split('\n').findIndex((candidate) => candidate.includes('expectedSchemaHash'));
    const character = text.split('\n')[line]!.indexOf('fnv1a64:') + 3;
    const hover = (await server.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line, character } })) as Hover;
    const value = (hover.contents as { value: string }).value;
    assert.match(value, /What changed:/);
    assert.match(value, /```diff/);
    assert.match(value, /\+ {4}"locale"/);
  });
});
