/**
 * Issue 22 §1 in the editor, through a real LSP connection to the built server: a re-pin's
 * WorkspaceEdit never creates or overwrites a path that is a link out of the folder. The store
 * entry at the live hash's name planted as a link to a file outside is left out of the edit, and a
 * document that is itself a link leading out gets no re-pin at all (quick fix, fix-all, and the
 * `toolpin/repinEdits` request of "Re-pin all").
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CodeAction, CreateFile, Diagnostic, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { startTestServer, type TestServer } from '../support/lspClient';
import { ECHO_TOOL_PIN } from '../support/referenceVectors';
import { createWorkspace, FIXTURE_SERVER, type WorkspaceFixture } from '../support/workspaceFixture';

const LIVE_HEX = ECHO_TOOL_PIN.slice('sha256:'.length);

function connector(name: string): string {
  return `{
  "name": "${name}",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(FIXTURE_SERVER)}, "--stdio"] },
    "include": ["echo_upper"],
    "toolsSnapshot": { "echo_upper": "sha256:${'4'.repeat(64)}" }
  }
}
`;
}

function createdUris(edit: WorkspaceEdit | undefined): string[] {
  return (edit?.documentChanges ?? []).flatMap((change) => ('kind' in change && change.kind === 'create' ? [(change as CreateFile).uri] : []));
}

describe('WorkspaceEdits never write through a link out of the folder', () => {
  let workspace: WorkspaceFixture;
  let outside: string;
  let server: TestServer;
  let plainUri: string;
  let linkedUri: string;
  let plantedUri: string;
  const plainText = connector('demo_tools');
  const linkedText = connector('linked_tools');

  before(async () => {
    outside = mkdtempSync(path.join(tmpdir(), 'toolpin-outside-'));
    writeFileSync(path.join(outside, '.bashrc'), 'export A=1\n');
    writeFileSync(path.join(outside, 'linked.connector.jsonc'), linkedText);
    workspace = createWorkspace('toolpin-symlink-edits-', { 'demo.connector.jsonc': plainText });
    mkdirSync(workspace.path('.toolpin/store'), { recursive: true });
    // The name is the live hash, which the server decides: an attacker knows it in advance.
    symlinkSync(path.join(outside, '.bashrc'), workspace.path(`.toolpin/store/sha256-${LIVE_HEX}.json`));
    symlinkSync(path.join(outside, 'linked.connector.jsonc'), workspace.path('linked.connector.jsonc'));
    plainUri = workspace.uriOf('demo.connector.jsonc');
    linkedUri = workspace.uriOf('linked.connector.jsonc');
    plantedUri = workspace.uriOf(`.toolpin/store/sha256-${LIVE_HEX}.json`);
    server = await startTestServer({ rootUri: workspace.uri, capabilities: { workspace: { workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } } } });
    server.open(plainUri, plainText);
    server.open(linkedUri, linkedText);
  });

  after(async () => {
    await server.stop();
    workspace.remove();
    rmSync(outside, { recursive: true, force: true });
  });

  async function drift(uri: string): Promise<Diagnostic> {
    const published = await server.diagnostics(uri, (params) => params.diagnostics.some((found) => found.code === 'TP400'), 30_000);
    return published.diagnostics.find((found) => found.code === 'TP400')!;
  }

  async function actions(uri: string, diagnostic: Diagnostic, only?: string[]): Promise<CodeAction[]> {
    return (await server.connection.sendRequest('textDocument/codeAction', { textDocument: { uri }, range: diagnostic.range, context: { diagnostics: [diagnostic], ...(only ? { only } : {}) } })) as CodeAction[];
  }

  test('the re-pin quick fix leaves out the store entry planted as a link, and keeps the others', { timeout: 60_000 }, async () => {
    const found = await drift(plainUri);
    const repin = (await actions(plainUri, found)).find((action) => action.title.startsWith('Re-pin "echo_upper"'));
    assert.ok(repin?.edit, 'the re-pin is offered');
    const created = createdUris(repin.edit);
    assert.ok(!created.includes(plantedUri), `no CreateFile at the planted link; got ${created.join(', ')}`);
    assert.ok(created.some((uri) => uri.includes('/.toolpin/store/full-')), 'the full-definition entry, a plain path, is still created');
    const fixAll = (await actions(plainUri, found, ['source.fixAll.toolpin']))[0];
    assert.ok(!createdUris(fixAll?.edit).includes(plantedUri), 'fix-all leaves it out too');
  });

  test('a document that is a link leading out gets no re-pin edit', { timeout: 60_000 }, async () => {
    const found = await drift(linkedUri);
    const offered = await actions(linkedUri, found);
    assert.deepEqual(offered.filter((action) => action.edit !== undefined).map((action) => action.title), []);
    const bulk = (await server.connection.sendRequest('toolpin/repinEdits', { uri: linkedUri })) as { edit: WorkspaceEdit | null; repins: number };
    assert.deepEqual(bulk, { edit: null, repins: 0 });
  });
});
