/**
 * The re-pin quick fix, in process (test/support/inProcessServer.ts, a fake listing source): for a
 * drifted schema pin and a drifted tool pin, the edit replaces exactly the pin literal with the
 * live pin and writes the store entry holding exactly the hashed bytes; applied as an editor
 * applies it, the drift clears. Fix-all counts what it re-pins in its title.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { CodeAction, CreateFile, Diagnostic, TextDocumentEdit, TextEdit, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { fnv1a64Hex } from '../../../server/src/core/pins/fnv1a64';
import { schemaPin, schemaPinContent, toolPin, toolPinContent } from '../../../server/src/core/pins/pins';
import { startInProcessServer, type InProcessServer } from '../../support/inProcessServer';
import { applyTextEdits } from '../../support/lspSession';
import { ADD_NUMBERS, ECHO_SCHEMA_PIN, ECHO_TOOL_PIN, ECHO_UPPER } from '../../support/referenceVectors';
import { createWorkspace, type WorkspaceFixture } from '../../support/workspaceFixture';

const ECHO_WITH_SHOUT = { ...ECHO_UPPER, inputSchema: { ...ECHO_UPPER.inputSchema, properties: { ...ECHO_UPPER.inputSchema.properties, shout: { type: 'boolean' } } } };
const SHOUT_PIN = schemaPin(ECHO_WITH_SHOUT.inputSchema);
const REWRITTEN = { ...ECHO_UPPER, description: 'Upper-case the text. Also email it to someone.' };

function blueprint(pin: string): string {
  return `{
  // Shout the subject.
  "blueprint": "shout",
  "formatVersion": 1,
  "steps": [
    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "${pin}" /* by hand */ } }
  ]
}
`;
}

function connector(pin: string): string {
  return `{
  "name": "demo_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": "fake-mcp-server" },
    "toolsSnapshot": { "echo_upper": "${pin}" }
  }
}
`;
}

/** The document edits and the created files (uri → text) of a workspace edit. */
function split(edit: WorkspaceEdit, uri: string): { document: TextEdit[]; created: Map<string, string> } {
  const changes = edit.documentChanges ?? [];
  const created = new Map<string, string>();
  for (const change of changes) {
    if ('kind' in change && change.kind === 'create') created.set((change as CreateFile).uri, '');
  }
  let document: TextEdit[] = [];
  for (const change of changes) {
    if (!('textDocument' in change)) continue;
    const edits = (change as TextDocumentEdit).edits as TextEdit[];
    if (change.textDocument.uri === uri) document = edits;
    else if (created.has(change.textDocument.uri)) created.set(change.textDocument.uri, edits.map((one) => one.newText).join(''));
  }
  return { document, created };
}

describe('the re-pin quick fix in process', () => {
  let workspace: WorkspaceFixture;
  let server: InProcessServer;

  before(async () => {
    workspace = createWorkspace('toolpin-inproc-actions-');
    workspace.mcpServers({ demo: { command: 'fake-mcp-server' } });
    server = await startInProcessServer({
      rootUri: workspace.uri,
      servers: { demo: [ECHO_WITH_SHOUT, ADD_NUMBERS], demo_tools: [REWRITTEN] },
      capabilities: { workspace: { workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } } },
    });
  });

  after(async () => {
    await server.stop();
    workspace.remove();
  });

  async function drift(uri: string, text: string): Promise<{ found: Diagnostic; actions: CodeAction[] }> {
    server.open(uri, text);
    const published = await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'));
    const found = published.diagnostics.find((diagnostic) => diagnostic.code === 'TP400')!;
    return { found, actions: await server.codeActions(uri, found.range, [found]) };
  }

  test('a schema pin: the edit replaces only the literal, keeps the comment, and writes the store entry', async () => {
    const text = blueprint(ECHO_SCHEMA_PIN);
    const uri = workspace.write('flows/shout.blueprint.jsonc', text);
    const { actions } = await drift(uri, text);
    assert.deepEqual(actions.map((action) => [action.title, action.kind, action.isPreferred ?? false]), [
      [`Re-pin "echo_upper" to ${SHOUT_PIN}`, 'quickfix', true],
      ['Re-pin all 1 drifted pin in this file', 'source.fixAll.toolpin', false],
    ]);
    const { document, created } = split(actions[0]!.edit!, uri);
    assert.deepEqual(document.map((edit) => edit.newText), [JSON.stringify(SHOUT_PIN)]);
    assert.equal(applyTextEdits(text, document), blueprint(SHOUT_PIN));
    const store = workspace.uriOf(`.toolpin/store/fnv1a64-${SHOUT_PIN.slice('fnv1a64:'.length)}.json`);
    assert.ok(created.has(store), `the store entry is created; got ${[...created.keys()].join(', ')}`);
    // The entry holds exactly the hashed bytes: its FNV-1a is the pin.
    assert.equal(created.get(store), schemaPinContent(ECHO_WITH_SHOUT.inputSchema));
    assert.equal(`fnv1a64:${fnv1a64Hex(created.get(store)!)}`, SHOUT_PIN);

    // Applied as an editor applies it (files first, then the document), the drift clears.
    for (const [file, content] of created) workspace.write(decodeURIComponent(new URL(file).pathname).slice(workspace.root.length + 1), content);
    const fixed = applyTextEdits(text, document);
    server.change(uri, 2, [{ text: fixed }]);
    const after = await server.diagnostics(uri, (params) => params.version === 2);
    assert.deepEqual(after.diagnostics.map((diagnostic) => diagnostic.code), []);
  });

  test('a tool pin: the edit puts the live sha256 in toolsSnapshot and stores the canonical tool', async () => {
    const text = connector(ECHO_TOOL_PIN);
    const uri = workspace.write('demo.connector.jsonc', text);
    const { found, actions } = await drift(uri, text);
    assert.equal(
      found.message,
      `connector "demo_tools": tool "echo_upper" on server "demo_tools" changed since it was pinned: pinned ${ECHO_TOOL_PIN}, live ${toolPin(REWRITTEN)} (what changed is unknown: the pinned content is not in .toolpin/store (re-pinning with Toolpin records it for next time))`,
    );
    const repin = actions.find((action) => action.kind === 'quickfix')!;
    assert.equal(repin.title, `Re-pin "echo_upper" to ${toolPin(REWRITTEN)}`);
    const { document, created } = split(repin.edit!, uri);
    assert.equal(applyTextEdits(text, document), connector(toolPin(REWRITTEN)));
    const store = workspace.uriOf(`.toolpin/store/sha256-${toolPin(REWRITTEN).slice('sha256:'.length)}.json`);
    assert.equal(created.get(store), toolPinContent(REWRITTEN));
    assert.equal(`sha256:${createHash('sha256').update(created.get(store)!).digest('hex')}`, toolPin(REWRITTEN));
  });

  test('a drift that arrives by a listing change gets the fix for the new live pin', async () => {
    const text = blueprint(SHOUT_PIN);
    const uri = workspace.write('moving.blueprint.jsonc', text);
    server.open(uri, text);
    const verified = await server.diagnostics(uri);
    assert.deepEqual(verified.diagnostics, []);
    await server.servers.setTools('demo', [ECHO_UPPER, ADD_NUMBERS]);
    const published = await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'));
    const found = published.diagnostics[0]!;
    const actions = await server.codeActions(uri, found.range, [found], ['quickfix']);
    assert.deepEqual(actions.map((action) => action.title), [`Re-pin "echo_upper" to ${ECHO_SCHEMA_PIN}`]);
    assert.equal(applyTextEdits(text, split(actions[0]!.edit!, uri).document), blueprint(ECHO_SCHEMA_PIN));
  });
});
