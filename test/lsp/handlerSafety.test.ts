/**
 * Notification handlers run through runSafe, through the real built language server over stdio:
 * malformed watched-files, trust and settings notifications are logged as Toolpin's own failures
 * (`toolpin: … failed`), and the server keeps serving: it still answers requests and still checks
 * a document opened afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DidChangeConfigurationNotification, DidChangeWatchedFilesNotification, LogMessageNotification } from 'vscode-languageserver-protocol';
import { DidChangeTrustNotification, ServerInfoRequest } from '../../server/src/protocol';
import { startTestServer, type TestServer } from '../support/lspClient';
import { waitFor } from '../support/waiting';

describe('notification handlers that fail', () => {
  let server: TestServer;
  const logged: string[] = [];

  before(async () => {
    server = await startTestServer();
    server.connection.onNotification(LogMessageNotification.type, (params) => void logged.push(params.message));
  });

  after(async () => {
    await server.stop();
  });

  test('a malformed didChangeWatchedFiles is logged as a Toolpin failure, and the server keeps serving', async () => {
    // `changes` must be an array; a client bug sends null.
    await server.connection.sendNotification(DidChangeWatchedFilesNotification.type, JSON.parse('{"changes": null}'));
    await waitFor('the watched-files failure to be logged', () => logged.some((line) => line.startsWith('toolpin: watched files failed')), 10_000);
    const info = await server.connection.sendRequest(ServerInfoRequest);
    assert.match(info.version, /^\d+\.\d+\.\d+/);
  });

  test('a trust notification without parameters is logged as a Toolpin failure', async () => {
    await server.connection.sendNotification(DidChangeTrustNotification, JSON.parse('null'));
    await waitFor('the trust failure to be logged', () => logged.some((line) => line.startsWith('toolpin: toolpin/didChangeTrust failed')), 10_000);
  });

  test('after the failures, a document opened is still checked', async () => {
    // Settings that are not an object fall back to the defaults, value by value: nothing fails.
    await server.connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { toolpin: 'not an object' } });
    const uri = 'file:///ws/after.connector.json';
    server.open(uri, '{ "name": "Bad Name", "provider": "mcp" }');
    const published = await server.diagnostics(uri);
    assert.deepEqual(published.diagnostics.map((diagnostic) => diagnostic.code), ['TP300', 'TP104']);
    assert.deepEqual(logged.filter((line) => line.startsWith('toolpin: settings change failed')), []);
  });
});
