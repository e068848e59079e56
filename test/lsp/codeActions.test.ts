/**
 * Quick fixes through the real built language server over stdio, with the fixture MCP server (a
 * real process) behind a connector and an mcp.json: for each diagnostic the test asks for code
 * actions as an editor does, applies the returned edit to the text and compares the result byte
 * for byte. Covered: lower-casing a pin (TP204, TP306), a mistyped `server` (TP406, also when the
 * client drops `Diagnostic.data`), a mistyped or obsolete `include` entry (TP404), and the fix-all
 * action, which lower-cases but never guesses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CodeAction, Diagnostic, TextDocumentEdit, TextEdit, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { startTestServer, type TestServer } from '../support/lspClient';
import { ECHO_SCHEMA_PIN, ECHO_TOOL_PIN } from '../support/referenceVectors';
import { createWorkspace, FIXTURE_SERVER, fixtureServer, type WorkspaceFixture } from '../support/workspaceFixture';

const ADD_SCHEMA_UPPER = 'fnv1a64:00112233AABBCCDD';
/** Not the schema pin of reverse_text: it drifted (TP400). */
const DRIFTED_PIN = 'fnv1a64:0000000000000000';

function blueprint(server: string, addPin: string, reversePin = DRIFTED_PIN): string {
  return `{
  // Two steps, each with a mistake a quick fix can mend.
  "blueprint": "fixes",
  "formatVersion": 1,
  "steps": [
    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "${server}", "expectedSchemaHash": "${ECHO_SCHEMA_PIN}" } },
    { "id": "add", "effect": "mcp.invoke", "input": { "toolName": "add_numbers", "server": "memory", "expectedSchemaHash": "${addPin}" /* by hand */ },
    },
    { "id": "reverse", "effect": "mcp.invoke", "input": { "toolName": "reverse_text", "server": "memory", "expectedSchemaHash": "${reversePin}" } },
  ],
}
`;
}

function connector(include: string, pin: string): string {
  return `{
  // The fixture server, with a mistyped include entry.
  "name": "demo_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(FIXTURE_SERVER)}, "--stdio"] },
    "include": [
${include}
    ],
    "toolsSnapshot": { "echo_upper": "${pin}" }
  }
}
`;
}

/** Applies LSP text edits to a text, the way an editor does (positions in UTF-16 code units). */
function applyLspEdits(text: string, edits: readonly TextEdit[]): string {
  const lines = text.split('\n');
  const offsetOf = (position: { line: number; character: number }): number =>
    lines.slice(0, position.line).reduce((sum, line) => sum + line.length + 1, 0) + position.character;
  let result = text;
  for (const edit of [...edits].sort((a, b) => offsetOf(b.range.start) - offsetOf(a.range.start))) {
    result = result.slice(0, offsetOf(edit.range.start)) + edit.newText + result.slice(offsetOf(edit.range.end));
  }
  return result;
}

/** The edits of `action` to the document `uri` (and a check that it edits nothing else). */
function documentEdits(action: CodeAction, uri: string): TextEdit[] {
  const changes = (action.edit as WorkspaceEdit).documentChanges ?? [];
  assert.deepEqual(
    changes.map((change) => ('textDocument' in change ? change.textDocument.uri : change.kind)),
    [uri],
    `"${action.title}" edits this document only`,
  );
  return (changes[0] as TextDocumentEdit).edits as TextEdit[];
}

describe('quick fixes in the editor', () => {
  let server: TestServer;
  let workspace: WorkspaceFixture;
  let blueprintUri: string;
  let connectorUri: string;
  const blueprintText = blueprint('memroy', ADD_SCHEMA_UPPER);
  const connectorText = connector(`      "echo_upper",\n      "revers_text", // the one we need\n`, ECHO_TOOL_PIN.toUpperCase());

  before(async () => {
    workspace = createWorkspace('toolpin-fixes-', { 'fixes.blueprint.jsonc': blueprintText, 'demo.connector.jsonc': connectorText });
    workspace.mcpServers({ memory: fixtureServer(), everything: fixtureServer() });
    blueprintUri = workspace.uriOf('fixes.blueprint.jsonc');
    connectorUri = workspace.uriOf('demo.connector.jsonc');
    server = await startTestServer({
      rootUri: workspace.uri,
      capabilities: { workspace: { workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } } },
    });
    server.open(blueprintUri, blueprintText);
    server.open(connectorUri, connectorText);
  });

  after(async () => {
    await server.stop();
    workspace.remove();
  });

  async function diagnostic(uri: string, code: string): Promise<Diagnostic> {
    const published = await server.diagnostics(uri, (params) => params.diagnostics.some((found) => found.code === code), 20_000);
    return published.diagnostics.find((found) => found.code === code)!;
  }

  async function actionsFor(uri: string, found: Diagnostic, only?: string[]): Promise<CodeAction[]> {
    return (await server.connection.sendRequest('textDocument/codeAction', {
      textDocument: { uri },
      range: found.range,
      context: { diagnostics: [found], ...(only ? { only } : {}) },
    })) as CodeAction[];
  }

  test('TP406 says "did you mean" and the fix replaces only the server value', async () => {
    const unknown = await diagnostic(blueprintUri, 'TP406');
    assert.match(String(unknown.message), /no server named "memroy" is configured \(known: [a-z_, ]+\); did you mean "memory"\?$/);
    const actions = await actionsFor(blueprintUri, unknown);
    const rename = actions.find((action) => action.title === 'Change server to "memory"');
    assert.ok(rename, `offered; got ${actions.map((action) => action.title).join(', ')}`);
    assert.equal(rename.isPreferred, true);
    assert.equal(applyLspEdits(blueprintText, documentEdits(rename, blueprintUri)), blueprint('memory', ADD_SCHEMA_UPPER));
  });

  test('TP406 without Diagnostic.data (as Neovim 0.7 sends it) still gets the fix', async () => {
    const unknown = await diagnostic(blueprintUri, 'TP406');
    // An undefined member is not sent: the request carries no "data" at all.
    const withoutData: Diagnostic = { ...unknown, data: undefined };
    const actions = await actionsFor(blueprintUri, withoutData);
    const rename = actions.find((action) => action.title === 'Change server to "memory"');
    assert.ok(rename, `offered; got ${actions.map((action) => action.title).join(', ')}`);
    assert.equal(applyLspEdits(blueprintText, documentEdits(rename, blueprintUri)), blueprint('memory', ADD_SCHEMA_UPPER));
  });

  test('TP204: "Lower-case the pin" lower-cases the literal and keeps the comment next to it', async () => {
    const malformed = await diagnostic(blueprintUri, 'TP204');
    const actions = await actionsFor(blueprintUri, malformed);
    const lower = actions.find((action) => action.title === 'Lower-case the pin');
    assert.ok(lower, `offered; got ${actions.map((action) => action.title).join(', ')}`);
    assert.equal(applyLspEdits(blueprintText, documentEdits(lower, blueprintUri)), blueprint('memroy', ADD_SCHEMA_UPPER.toLowerCase()));
  });

  test('fix-all re-pins and lower-cases, but does not guess the server name', async () => {
    const drift = await diagnostic(blueprintUri, 'TP400');
    const actions = await actionsFor(blueprintUri, drift, ['source.fixAll.toolpin']);
    // The title starts with "Re-pin all N": the client's re-pin commands count from it.
    assert.deepEqual(actions.map((action) => [action.title, action.kind]), [['Re-pin all 1 drifted pin and lower-case 1 pin written in uppercase hex in this file', 'source.fixAll.toolpin']]);
    const changes = (actions[0]!.edit as WorkspaceEdit).documentChanges ?? [];
    const documentEdit = changes.find((change): change is TextDocumentEdit => 'textDocument' in change && change.textDocument.uri === blueprintUri)!;
    assert.ok(changes.some((change) => 'kind' in change && change.kind === 'create' && /\/\.toolpin\/store\/fnv1a64-[0-9a-f]{16}\.json$/.test(change.uri)), 'the re-pin writes its store entry');
    const result = applyLspEdits(blueprintText, documentEdit.edits as TextEdit[]);
    const livePin = /"reverse_text", "server": "memory", "expectedSchemaHash": "(fnv1a64:[0-9a-f]{16})"/.exec(result)?.[1];
    assert.ok(livePin && livePin !== DRIFTED_PIN, 'reverse_text is re-pinned to the live pin');
    assert.equal(result, blueprint('memroy', ADD_SCHEMA_UPPER.toLowerCase(), livePin));
  });

  test('fix-all with nothing drifted is titled by what it does', async () => {
    const uri = workspace.uriOf('lower.blueprint.jsonc');
    const text = blueprint('memory', ADD_SCHEMA_UPPER, ADD_SCHEMA_UPPER.replace('00112233', '44556677'));
    server.open(uri, text);
    const malformed = await diagnostic(uri, 'TP204');
    const actions = await actionsFor(uri, malformed, ['source.fixAll.toolpin']);
    assert.deepEqual(actions.map((action) => action.title), ['Lower-case 2 pins written in uppercase hex in this file']);
    assert.equal(applyLspEdits(text, documentEdits(actions[0]!, uri)), text.replace(ADD_SCHEMA_UPPER, ADD_SCHEMA_UPPER.toLowerCase()).replace('fnv1a64:44556677AABBCCDD', 'fnv1a64:44556677aabbccdd'));
  });

  test('TP404 suggests the served tool; the fixes correct the entry or remove it, keeping comments and commas', async () => {
    const unserved = await diagnostic(connectorUri, 'TP404');
    assert.match(String(unserved.message), /include names "revers_text", which server "demo_tools" does not serve; the runtime drops it silently; did you mean "reverse_text"\?$/);
    // Without `only`, the fix-all action comes too; the quick fixes of this diagnostic come first.
    const actions = (await actionsFor(connectorUri, unserved)).filter((action) => action.kind === 'quickfix');
    assert.deepEqual(
      actions.map((action) => [action.title, action.isPreferred ?? false]),
      [
        ['Change "revers_text" to "reverse_text"', true],
        ['Remove "revers_text" from include', false],
      ],
    );
    const pin = ECHO_TOOL_PIN.toUpperCase();
    assert.equal(applyLspEdits(connectorText, documentEdits(actions[0]!, connectorUri)), connector(`      "echo_upper",\n      "reverse_text", // the one we need\n`, pin));
    // The comment after the entry stays, on the line the entry had; the trailing comma of the
    // entry before stays too, since the author writes them.
    assert.equal(applyLspEdits(connectorText, documentEdits(actions[1]!, connectorUri)), connector(`      "echo_upper",\n      // the one we need\n`, pin));
  });

  test('TP306: lower-casing a tool pin written in uppercase, also through fix-all, which leaves the include alone', async () => {
    const malformed = await diagnostic(connectorUri, 'TP306');
    const include = `      "echo_upper",\n      "revers_text", // the one we need\n`;
    const expected = connector(include, ECHO_TOOL_PIN);
    const quick = (await actionsFor(connectorUri, malformed)).find((action) => action.title === 'Lower-case the pin');
    assert.ok(quick);
    assert.equal(applyLspEdits(connectorText, documentEdits(quick, connectorUri)), expected);
    const fixAll = await actionsFor(connectorUri, malformed, ['source.fixAll.toolpin']);
    assert.equal(fixAll.length, 1);
    assert.equal(applyLspEdits(connectorText, documentEdits(fixAll[0]!, connectorUri)), expected);
  });

  test('TP308 removes the duplicate include entry; TP305 offers to add the pinned tool to include or to drop its pin', async () => {
    const uri = workspace.uriOf('duplicate.connector.jsonc');
    const text = `{
  "name": "dup_tools", "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(FIXTURE_SERVER)}, "--stdio"] },
    "include": ["echo_upper", /* again: */ "echo_upper"],
    "toolsSnapshot": { "echo_upper": "${ECHO_TOOL_PIN}", "add_numbers": "${ECHO_TOOL_PIN}" }
  }
}
`;
    server.open(uri, text);
    const duplicate = await diagnostic(uri, 'TP308');
    const [dedupe] = (await actionsFor(uri, duplicate, ['quickfix']));
    assert.equal(dedupe?.title, 'Remove the duplicate "echo_upper" from include');
    assert.equal(applyLspEdits(text, documentEdits(dedupe, uri)), text.replace('["echo_upper", /* again: */ "echo_upper"]', '["echo_upper" /* again: */]'));
    const excluded = await diagnostic(uri, 'TP305');
    const choices = await actionsFor(uri, excluded, ['quickfix']);
    assert.deepEqual(choices.map((action) => [action.title, action.isPreferred ?? false]), [['Add "add_numbers" to include', false], ['Remove the pin of "add_numbers"', false]]);
    assert.equal(applyLspEdits(text, documentEdits(choices[0]!, uri)), text.replace('/* again: */ "echo_upper"]', '/* again: */ "echo_upper", "add_numbers"]'));
    assert.equal(applyLspEdits(text, documentEdits(choices[1]!, uri)), text.replace(`, "add_numbers": "${ECHO_TOOL_PIN}"`, ''));
  });

  test('after the fixes are applied, the diagnostics they fixed are gone', async () => {
    const fixed = blueprint('memory', ADD_SCHEMA_UPPER.toLowerCase());
    server.change(blueprintUri, 2, [{ text: fixed }]);
    const published = await server.diagnostics(blueprintUri, (params) => params.version === 2, 20_000);
    const codes = published.diagnostics.map((found) => found.code);
    assert.ok(!codes.includes('TP204') && !codes.includes('TP406'), `left: ${codes.join(', ')}`);
  });
});
