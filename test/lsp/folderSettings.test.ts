/**
 * Resource-scoped settings through the real built language server over stdio: with two workspace
 * folders whose client answers `workspace/configuration` per `scopeUri`, `toolpin.validate.enable`
 * off in one folder only leaves that folder's documents without diagnostics, while the other
 * folder's are checked. The server asks with the folder as the scope.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigurationRequest, DidChangeWorkspaceFoldersNotification } from 'vscode-languageserver-protocol';
import { startTestServer, type TestServer } from '../support/lspClient';

/** A connector with a structure problem (TP300: the name is not an identifier), nothing live. */
const BROKEN_CONNECTOR = '{ "name": "Bad Name", "provider": "mcp" }';

describe('resource-scoped settings, per workspace folder', () => {
  let server: TestServer;
  let root: string;
  let checked: string;
  let quiet: string;
  const scopes: Array<string | null> = [];

  before(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'toolpin-folders-'));
    checked = path.join(root, 'checked');
    quiet = path.join(root, 'quiet');
    for (const folder of [checked, quiet]) mkdirSync(folder);
    server = await startTestServer({ rootUri: `file://${checked}`, configuration: true, capabilities: { workspace: { workspaceFolders: true } } });
    // Per scope, as VS Code does: the "quiet" folder turns validation off, everything else is default.
    server.connection.onRequest(ConfigurationRequest.type, (params) =>
      params.items.map((item) => {
        scopes.push(item.scopeUri ?? null);
        return item.scopeUri?.startsWith(`file://${quiet}`) ? { validate: { enable: false } } : {};
      }),
    );
    await server.connection.sendNotification(DidChangeWorkspaceFoldersNotification.type, { event: { added: [{ uri: `file://${quiet}`, name: 'quiet' }], removed: [] } });
  });

  after(async () => {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('a document of the folder with validate.enable off gets no diagnostics; the other folder is checked', async () => {
    const checkedUri = `file://${path.join(checked, 'a.connector.json')}`;
    const quietUri = `file://${path.join(quiet, 'b.connector.json')}`;
    writeFileSync(path.join(checked, 'a.connector.json'), BROKEN_CONNECTOR);
    writeFileSync(path.join(quiet, 'b.connector.json'), BROKEN_CONNECTOR);
    server.open(checkedUri, BROKEN_CONNECTOR);
    server.open(quietUri, BROKEN_CONNECTOR);
    const published = await server.diagnostics(checkedUri, (params) => params.diagnostics.length > 0, 20_000);
    assert.deepEqual(published.diagnostics.map((diagnostic) => diagnostic.code), ['TP300', 'TP104']);
    const silent = await server.diagnostics(quietUri, () => true, 20_000);
    assert.deepEqual(silent.diagnostics, []);
    // The same broken text in the quiet folder was never published with a problem.
    assert.deepEqual(server.published.filter((params) => params.uri === quietUri && params.diagnostics.length > 0), []);
    assert.ok(scopes.includes(`file://${quiet}`), `the server asked with the quiet folder as scopeUri; scopes asked: ${JSON.stringify(scopes)}`);
    assert.ok(scopes.includes(`file://${checked}`), 'and with the checked folder as scopeUri');
  });
});
