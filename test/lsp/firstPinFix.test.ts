/**
 * Issue 26 in the editor, through the real built server over stdio with the fixture MCP server:
 *
 * - a step that names a tool without `expectedSchemaHash` (TP206) gets a quick fix that adds the
 *   live pin after its `server`, with its store entries, in a blueprint file and in an
 *   `mcpInvoke$` call (its quotes and bare keys kept);
 * - "Re-pin all" is offered once, with one edit, when two problems share one pin (a source file's
 *   constant used by two calls), and the pin's own re-pin once;
 * - a client that cannot create files (no `resourceOperations`) gets, beside the re-pin's edit, a
 *   command the server runs to write the store entries itself; before, the entry was silently
 *   never written.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type CodeAction, type Diagnostic, ExecuteCommandRequest, type TextDocumentEdit, type TextEdit, type WorkspaceEdit } from 'vscode-languageserver-protocol';
import { startTestServer, type TestServer } from '../support/lspClient';
import { ECHO_SCHEMA_PIN } from '../support/referenceVectors';
import { createWorkspace, fixtureServer, type WorkspaceFixture } from '../support/workspaceFixture';

const STALE = 'fnv1a64:0000000000000000';

const BLUEPRINT = `{
  "blueprint": "first",
  "formatVersion": 1,
  "steps": [
    { "id": "pinned", "effect": "mcp.invoke", "input": { "toolName": "reverse_text", "server": "demo", "expectedSchemaHash": "${STALE}" } },
    {
      "id": "fresh",
      "effect": "mcp.invoke",
      "input": {
        "toolName": "echo_upper", // not pinned yet
        "server": "demo",
        "arguments": { "text": "hi" }
      }
    }
  ]
}
`;

const STEPS = `import { mcpInvoke$ } from '@loom/plugin-mcp';

export const fresh = mcpInvoke$('fresh', {
  toolName: 'echo_upper',
  server: 'demo',
});
`;

/** One pin, kept in a constant, used by two calls: two problems on one pin literal. */
const SHARED = `import { mcpInvoke$ } from '@loom/plugin-mcp';

const ECHO = '${STALE}';
export const a = mcpInvoke$('a', { toolName: 'echo_upper', server: 'demo', expectedSchemaHash: ECHO });
export const b = mcpInvoke$('b', { toolName: 'echo_upper', server: 'demo', expectedSchemaHash: ECHO });
`;

/** Applies LSP text edits to a text (positions in UTF-16 code units). */
function applyLspEdits(text: string, edits: readonly TextEdit[]): string {
  const lines = text.split('\n');
  const offsetOf = (position: { line: number; character: number }): number => lines.slice(0, position.line).reduce((sum, line) => sum + line.length + 1, 0) + position.character;
  let result = text;
  for (const edit of [...edits].sort((a, b) => offsetOf(b.range.start) - offsetOf(a.range.start))) {
    result = result.slice(0, offsetOf(edit.range.start)) + edit.newText + result.slice(offsetOf(edit.range.end));
  }
  return result;
}

function changesOf(action: CodeAction): Array<TextDocumentEdit | { kind: string; uri: string }> {
  return ((action.edit as WorkspaceEdit | undefined)?.documentChanges ?? []) as Array<TextDocumentEdit | { kind: string; uri: string }>;
}

function editsOf(action: CodeAction, uri: string): TextEdit[] {
  return changesOf(action).flatMap((change) => ('textDocument' in change && change.textDocument.uri === uri ? (change.edits as TextEdit[]) : []));
}

function everything(uri: string, text: string): { uri: string; range: { start: { line: number; character: number }; end: { line: number; character: number } } } {
  const lines = text.split('\n');
  return { uri, range: { start: { line: 0, character: 0 }, end: { line: lines.length - 1, character: 0 } } };
}

describe('first pins and store entries in the editor', () => {
  let workspace: WorkspaceFixture;
  let server: TestServer;
  let blueprintUri: string;
  let stepsUri: string;
  let sharedUri: string;

  before(async () => {
    workspace = createWorkspace('toolpin-first-pin-fix-');
    workspace.mcpServers({ demo: fixtureServer() });
    blueprintUri = workspace.write('flows/first.blueprint.jsonc', BLUEPRINT);
    stepsUri = workspace.write('src/steps.ts', STEPS);
    sharedUri = workspace.write('src/shared.ts', SHARED);
    // As VS Code declares: file creation through a WorkspaceEdit.
    server = await startTestServer({ rootUri: workspace.uri, capabilities: { workspace: { workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } } } });
    server.open(blueprintUri, BLUEPRINT);
    server.open(stepsUri, STEPS, 'typescript');
    server.open(sharedUri, SHARED, 'typescript');
    await server.diagnostics(blueprintUri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 30_000);
    await server.diagnostics(sharedUri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 30_000);
  });
  after(async () => {
    await server?.stop();
    workspace?.remove();
  });

  test('TP206 in a blueprint: a quick fix adds the live pin after "server", with its store entries', async () => {
    const diagnostics = server.latest(blueprintUri)!.diagnostics;
    const unpinned = diagnostics.find((diagnostic) => diagnostic.code === 'TP206');
    assert.ok(unpinned, JSON.stringify(diagnostics));
    const actions = await server.codeActions(blueprintUri, unpinned.range, [unpinned], ['quickfix']);
    const pin = actions.find((action) => action.title.startsWith('Pin "echo_upper"'));
    assert.ok(pin, JSON.stringify(actions.map((action) => action.title)));
    assert.equal(pin.title, `Pin "echo_upper" at ${ECHO_SCHEMA_PIN} (first pin, from the live listing of "demo")`);
    assert.notEqual(pin.isPreferred, true, 'a first pin accepts an unseen tool: never preferred');
    const after = applyLspEdits(BLUEPRINT, editsOf(pin, blueprintUri));
    assert.equal(after, BLUEPRINT.replace('"server": "demo",\n', `"server": "demo",\n        "expectedSchemaHash": "${ECHO_SCHEMA_PIN}",\n`));
    const created = changesOf(pin).flatMap((change) => ('kind' in change && change.kind === 'create' ? [change.uri] : []));
    assert.ok(created.some((uri) => uri.endsWith(`.toolpin/store/${ECHO_SCHEMA_PIN.replace(':', '-')}.json`)), JSON.stringify(created));
  });

  test('TP206 in an mcpInvoke$ call: the pin follows the call\'s quotes and bare keys', async () => {
    const published = await server.diagnostics(stepsUri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP206'));
    const unpinned = published.diagnostics.find((diagnostic) => diagnostic.code === 'TP206')!;
    const actions = await server.codeActions(stepsUri, unpinned.range, [unpinned], ['quickfix']);
    const pin = actions.find((action) => action.title.startsWith('Pin "echo_upper"'));
    assert.ok(pin, JSON.stringify(actions.map((action) => action.title)));
    assert.equal(applyLspEdits(STEPS, editsOf(pin, stepsUri)), STEPS.replace("server: 'demo',\n", `server: 'demo',\n  expectedSchemaHash: '${ECHO_SCHEMA_PIN}',\n`));
  });

  test('two problems on one pin: its re-pin and "Re-pin all" are offered once, with one edit', async () => {
    const diagnostics: Diagnostic[] = server.latest(sharedUri)!.diagnostics.filter((diagnostic) => diagnostic.code === 'TP400');
    assert.equal(diagnostics.length, 2, 'both calls report the shared pin');
    const { range } = everything(sharedUri, SHARED);
    const actions = await server.codeActions(sharedUri, range, diagnostics);
    const repinAll = actions.filter((action) => action.title.startsWith('Re-pin all'));
    assert.equal(repinAll.length, 1, JSON.stringify(actions.map((action) => [action.title, action.kind])));
    assert.equal(repinAll[0]!.title, 'Re-pin all 1 drifted pin in this file');
    assert.equal(editsOf(repinAll[0]!, sharedUri).length, 1, 'one edit for one pin literal (two would overlap)');
    const single = actions.filter((action) => action.title.startsWith('Re-pin "echo_upper"'));
    assert.equal(single.length, 1, JSON.stringify(actions.map((action) => action.title)));
    assert.equal(applyLspEdits(SHARED, editsOf(single[0]!, sharedUri)), SHARED.replace(STALE, ECHO_SCHEMA_PIN));
  });
});

describe('a client that cannot create files', () => {
  let workspace: WorkspaceFixture;
  let server: TestServer;
  let blueprintUri: string;

  before(async () => {
    workspace = createWorkspace('toolpin-no-create-');
    workspace.mcpServers({ demo: fixtureServer() });
    blueprintUri = workspace.write('flows/first.blueprint.jsonc', BLUEPRINT);
    // documentChanges but no resourceOperations, as eglot and older Neovim declare.
    server = await startTestServer({ rootUri: workspace.uri, capabilities: { workspace: { workspaceEdit: { documentChanges: true } } } });
    server.open(blueprintUri, BLUEPRINT);
    await server.diagnostics(blueprintUri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 30_000);
  });
  after(async () => {
    await server?.stop();
    workspace?.remove();
  });

  test('a re-pin carries a command, and the server writes the store entries when it runs', async () => {
    const drift = server.latest(blueprintUri)!.diagnostics.find((diagnostic) => diagnostic.code === 'TP400')!;
    const actions = await server.codeActions(blueprintUri, drift.range, [drift], ['quickfix']);
    const repin = actions.find((action) => action.title.startsWith('Re-pin "reverse_text"'));
    assert.ok(repin, JSON.stringify(actions.map((action) => action.title)));
    assert.deepEqual(changesOf(repin).map((change) => ('kind' in change ? change.kind : 'edit')), ['edit'], 'the edit creates no file');
    const live = /to (fnv1a64:[0-9a-f]{16})$/.exec(repin.title)![1]!;
    const entry = `.toolpin/store/${live.replace(':', '-')}.json`;
    assert.equal(workspace.exists(entry), false);
    assert.ok(repin.command, 'the action carries the command that writes the store entries');
    // The client applies the edit, then runs the command (LSP: edit first, then command).
    const result = (await server.connection.sendRequest(ExecuteCommandRequest.type, { command: repin.command.command, arguments: repin.command.arguments })) as { written: string[]; notWritten: unknown[] };
    assert.deepEqual(result.notWritten, []);
    assert.ok(result.written.includes(entry), JSON.stringify(result));
    assert.ok(workspace.exists(entry));
    assert.match(workspace.read(entry), /"properties"/, 'the entry holds the pinned input schema');
  });

  test('a command whose content does not hash to its pin writes nothing and says why', async () => {
    const drift = server.latest(blueprintUri)!.diagnostics.find((diagnostic) => diagnostic.code === 'TP400')!;
    const repin = (await server.codeActions(blueprintUri, drift.range, [drift], ['quickfix'])).find((action) => action.command !== undefined)!;
    const [uri, payloads] = repin.command!.arguments as [string, Array<Record<string, unknown>>];
    const forged = payloads.map((payload) => ({ ...payload, live: 'fnv1a64:1234567812345678' }));
    const result = (await server.connection.sendRequest(ExecuteCommandRequest.type, { command: repin.command!.command, arguments: [uri, forged] })) as { written: string[]; notWritten: Array<{ reason: string }> };
    assert.deepEqual(result.written, []);
    assert.match(result.notWritten[0]!.reason, /does not hash to the pin/);
    assert.equal(workspace.exists('.toolpin/store/fnv1a64-1234567812345678.json'), false);
  });
});
