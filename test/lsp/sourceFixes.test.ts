/**
 * Quick fixes and fix-all in a TypeScript connector module, through the real built language
 * server over stdio with the fixture MCP server: "pin an unpinned tool" adds a `toolsSnapshot`
 * entry in the call's own style (unquoted key, single quotes, trailing comma, same indentation),
 * "remove the pin" of a tool the server no longer serves cuts the entry with its comma, and
 * fix-all re-pins the drifted pin in its own quotes. Each edit is applied to the module and the
 * result compared with the whole expected text: only the intended characters change, every
 * comment stays.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CodeAction, Diagnostic, TextDocumentEdit, TextEdit, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { offsetAt } from '../support/completionEdits';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';

const fixtureServer = path.join(repoRoot(), 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const STALE = `sha256:${'3'.repeat(64)}`;
const RETIRED = `sha256:${'7'.repeat(64)}`;

function module(snapshotEntries: string): string {
  return `/* Connectors in code, written for the fix tests. */
import { defineConnector } from '@objectstack/spec/integration';

export const crm = defineConnector({ name: 'crm', provider: 'rest', providerConfig: { baseUrl: url('/v2') } });

export const demo = defineConnector({
  name: 'demo',
  provider: 'mcp',
  providerConfig: {
    transport: { kind: 'stdio', command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(fixtureServer)}, '--stdio'] },
    include: ['echo_upper', 'reverse_text', 'retired_tool'],
    toolsSnapshot: {
      // pinned by hand
${snapshotEntries}    },
  },
});
`;
}

const ENTRIES = `      echo_upper: '${STALE}', // rewritten since
      retired_tool: "${RETIRED}",
`;

function applyEdits(text: string, edits: readonly TextEdit[]): string {
  let result = text;
  for (const edit of [...edits].sort((a, b) => offsetAt(text, b.range.start) - offsetAt(text, a.range.start))) {
    result = result.slice(0, offsetAt(text, edit.range.start)) + edit.newText + result.slice(offsetAt(text, edit.range.end));
  }
  return result;
}

function editsOf(action: CodeAction, uri: string): TextEdit[] {
  const edit = action.edit as WorkspaceEdit;
  if (edit.documentChanges) {
    return edit.documentChanges.flatMap((change) => ('textDocument' in change && change.textDocument.uri === uri ? (change as TextDocumentEdit).edits as TextEdit[] : []));
  }
  return edit.changes?.[uri] ?? [];
}

describe('fixes in a TypeScript connector module', () => {
  let server: TestServer;
  let workspace: string;
  let uri: string;
  const text = module(ENTRIES);
  let diagnostics: Diagnostic[];

  before(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-source-fixes-'));
    uri = `file://${path.join(workspace, 'connectors.ts')}`;
    writeFileSync(path.join(workspace, 'connectors.ts'), text);
    server = await startTestServer({ rootUri: `file://${workspace}` });
    server.open(uri, text, 'typescript');
    const codes = ['TP400', 'TP401', 'TP405'];
    diagnostics = (await server.diagnostics(uri, (params) => codes.every((code) => params.diagnostics.some((diagnostic) => diagnostic.code === code)), 30_000)).diagnostics;
  });

  after(async () => {
    await server.stop();
    rmSync(workspace, { recursive: true, force: true });
  });

  async function actionsFor(code: string, only?: string[]): Promise<CodeAction[]> {
    const diagnostic = diagnostics.find((candidate) => candidate.code === code)!;
    assert.ok(diagnostic, `${code} is published`);
    return (await server.connection.sendRequest('textDocument/codeAction', {
      textDocument: { uri },
      range: diagnostic.range,
      context: { diagnostics: [diagnostic], ...(only ? { only } : {}) },
    })) as CodeAction[];
  }

  test('TP405: the unpinned tool is pinned on a new line in the call’s style, after the other entries', async () => {
    const actions = await actionsFor('TP405');
    const pin = actions.find((action) => action.title.startsWith('Pin "reverse_text"'));
    assert.ok(pin, `a pin action is offered; got ${actions.map((action) => action.title).join(', ')}`);
    const result = applyEdits(text, editsOf(pin, uri));
    const live = /reverse_text: '(sha256:[0-9a-f]{64})',/.exec(result)?.[1];
    assert.ok(live, `the new entry is written with a bare key, single quotes and a trailing comma: ${result}`);
    assert.equal(result, module(`${ENTRIES}      reverse_text: '${live}',\n`));
  });

  test('TP401: the pin of a tool the server no longer serves is removed with its comma; the comments stay', async () => {
    const actions = await actionsFor('TP401');
    const remove = actions.find((action) => action.title.startsWith('Remove the pin of "retired_tool"'));
    assert.ok(remove, `a removal is offered; got ${actions.map((action) => action.title).join(', ')}`);
    assert.equal(applyEdits(text, editsOf(remove, uri)), module(`      echo_upper: '${STALE}', // rewritten since\n`));
  });

  test('fix-all re-pins the drifted pin in its own single quotes and changes nothing else', async () => {
    const actions = await actionsFor('TP400', ['source.fixAll.toolpin']);
    assert.equal(actions.length, 1, actions.map((action) => action.title).join(', '));
    const result = applyEdits(text, editsOf(actions[0]!, uri));
    const live = /echo_upper: '(sha256:[0-9a-f]{64})', \/\/ rewritten since/.exec(result)?.[1];
    assert.ok(live && live !== STALE, `the pin advanced in its quotes: ${result}`);
    assert.equal(result, module(ENTRIES.replace(STALE, live)));
  });
});
