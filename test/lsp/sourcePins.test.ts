/**
 * Pins written in TypeScript, in the editor, through the real built language server over stdio:
 * a module with a `defineConnector` call (the fixture MCP server, which has rewritten a tool) and
 * aliased `mcpInvoke$` calls is opened as `typescript`. The drift diagnostic is on the pin literal,
 * hover shows both hashes, the re-pin quick fix keeps the literal's single quotes and changes
 * nothing else, a computed value is TP110, and a TypeScript file without pins gets no diagnostics.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CodeAction, Hover, TextDocumentEdit, TextEdit, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { startTestServer, type TestServer } from '../support/lspClient';
/** echo_upper's schema pin as the fixture serves it unchanged; the control file rewrites it. */
import { ECHO_SCHEMA_PIN } from '../support/referenceVectors';
import { createWorkspace, fixtureServer, type WorkspaceFixture } from '../support/workspaceFixture';

const demo = fixtureServer('--control-file', 'control.json');
const STALE_TOOL_PIN = `sha256:${'3'.repeat(64)}`;

function module(schemaPin: string, toolPin: string): string {
  return `// Pins written in code.
import { defineConnector } from '@objectstack/spec/integration';
import { mcpInvoke$ as invoke } from '@loom/plugin-mcp';

export const demo = defineConnector({
  name: 'demo',
  provider: 'mcp',
  providerConfig: {
    transport: { kind: 'stdio', command: ${JSON.stringify(demo.command)}, args: [${demo.args.map((arg) => JSON.stringify(arg)).join(', ')}] },
    toolsSnapshot: { echo_upper: '${toolPin}' },
  },
});

export const shout = invoke('shout#1', { toolName: 'echo_upper', server: 'demo', expectedSchemaHash: '${schemaPin}', arguments: { text: subject() } });
`;
}

function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const lines = text.split('\n');
  const offsetOf = (position: { line: number; character: number }): number => lines.slice(0, position.line).reduce((sum, line) => sum + line.length + 1, 0) + position.character;
  let result = text;
  for (const edit of [...edits].sort((a, b) => offsetOf(b.range.start) - offsetOf(a.range.start))) {
    result = result.slice(0, offsetOf(edit.range.start)) + edit.newText + result.slice(offsetOf(edit.range.end));
  }
  return result;
}

describe('pins in a TypeScript module, in the editor', () => {
  let server: TestServer;
  let workspace: WorkspaceFixture;
  let uri: string;
  let text: string;

  before(async () => {
    text = module(ECHO_SCHEMA_PIN, STALE_TOOL_PIN);
    workspace = createWorkspace('toolpin-source-', {
      // echo_upper's schema gained a property since both pins were taken.
      'control.json': { version: 1, rewrite: { echo_upper: { inputSchema: { type: 'object', properties: { text: { type: 'string' }, shout: { type: 'boolean' } }, required: ['text'] } } } },
      'pins.ts': text,
      'plain.ts': 'export const answer = 42;\n',
      // Never opened: the workspace scan reads it because it names a pin module.
      'scanned.mts': "import { mcpInvoke$ } from '@loom/plugin-mcp';\nexport const s = mcpInvoke$('s', { toolName: 'echo_upper', expectedSchemaHash: 'fnv1a64:XYZ' });\n",
    });
    uri = workspace.uriOf('pins.ts');
    server = await startTestServer({ rootUri: workspace.uri });
  });

  after(async () => {
    await server.stop();
    workspace.remove();
  });

  test('drift diagnostics sit on the pin literals of both calls; the computed argument is TP110', async () => {
    server.open(uri, text, 'typescript');
    const published = await server.diagnostics(uri, (params) => params.diagnostics.filter((diagnostic) => diagnostic.code === 'TP400').length === 2, 30_000);
    const lines = text.split('\n');
    const covered = (diagnostic: { range: { start: { line: number; character: number }; end: { line: number; character: number } } }): string =>
      lines[diagnostic.range.start.line]!.slice(diagnostic.range.start.character, diagnostic.range.end.character);
    const drifts = published.diagnostics.filter((diagnostic) => diagnostic.code === 'TP400');
    assert.deepEqual(drifts.map(covered).sort(), [`'${ECHO_SCHEMA_PIN}'`, `'${STALE_TOOL_PIN}'`].sort());
    assert.ok(drifts.some((diagnostic) => /tool "echo_upper" on server "demo" changed since it was pinned: pinned fnv1a64:a76fe8d6d023fca0/.test(String(diagnostic.message))));
    const computed = published.diagnostics.filter((diagnostic) => diagnostic.code === 'TP110');
    assert.deepEqual(computed.map(covered), ['subject()']);
    assert.equal(computed[0]!.severity, 3, 'information');
  });

  test('hover on the schema pin shows the state and both hashes', async () => {
    const line = text.split('\n').findIndex((candidate) => candidate.includes('expectedSchemaHash'));
    const character = text.split('\n')[line]!.indexOf(ECHO_SCHEMA_PIN) + 3;
    const hover = (await server.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line, character } })) as Hover;
    const value = (hover.contents as { value: string }).value;
    assert.match(value, /drifted/);
    assert.match(value, /fnv1a64:a76fe8d6d023fca0/);
    assert.match(value, /\| live \| `fnv1a64:[0-9a-f]{16}` \|/);
  });

  test('the re-pin quick fix keeps the single quotes and changes only the pin', async () => {
    const published = server.published.filter((params) => params.uri === uri).at(-1)!;
    const drift = published.diagnostics.find((diagnostic) => diagnostic.code === 'TP400' && String(diagnostic.message).includes('input schema'))!;
    assert.ok(drift, 'the schema drift is published');
    const actions = (await server.connection.sendRequest('textDocument/codeAction', { textDocument: { uri }, range: drift.range, context: { diagnostics: [drift] } })) as CodeAction[];
    const repin = actions.find((action) => action.title.startsWith('Re-pin "echo_upper"'));
    assert.ok(repin, `a re-pin action is offered; got ${actions.map((action) => action.title).join(', ')}`);
    const edit = repin.edit as WorkspaceEdit;
    const documentEdits = edit.documentChanges
      ? ((edit.documentChanges.find((change) => 'textDocument' in change && change.textDocument.uri === uri) as TextDocumentEdit).edits as TextEdit[])
      : edit.changes![uri]!;
    assert.equal(documentEdits.length, 1);
    const newText = documentEdits[0]!.newText;
    assert.match(newText, /^'fnv1a64:[0-9a-f]{16}'$/, 'single quotes, as written');
    const newPin = newText.slice(1, -1);
    assert.notEqual(newPin, ECHO_SCHEMA_PIN);
    assert.equal(applyTextEdits(text, documentEdits), module(newPin, STALE_TOOL_PIN), 'only the schema pin changed');
  });

  test('a module on disk that is never opened is checked by the workspace scan', async () => {
    const scanned = workspace.uriOf('scanned.mts');
    const published = await server.diagnostics(scanned, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP204'), 20_000);
    const malformed = published.diagnostics.find((diagnostic) => diagnostic.code === 'TP204')!;
    assert.deepEqual(malformed.range, { start: { line: 1, character: 79 }, end: { line: 1, character: 92 } }, "the range of 'fnv1a64:XYZ'");
  });

  test('a TypeScript file without pins gets no diagnostics', async () => {
    const plain = workspace.uriOf('plain.ts');
    server.open(plain, 'export const answer = 42;\n', 'typescript');
    const published = await server.diagnostics(plain, () => true, 10_000);
    assert.deepEqual(published.diagnostics, []);
  });
});
