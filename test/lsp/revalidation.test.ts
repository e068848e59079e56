/**
 * A listing change reaches the documents one way, and once: through the real built language server
 * over stdio, with two fixture MCP servers, `toolpin/refresh` publishes every document that uses a
 * server exactly once, and a server's `notifications/tools/list_changed` publishes exactly once the
 * documents that use that server, and no other.
 *
 * Counting needs a quiet window: after the expected publication, the test waits until no
 * publication has arrived for QUIET_MS, then counts. A second publication of the same change comes
 * within milliseconds of the first (both are scheduled by the same listing event), well inside it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { PublishDiagnosticsParams } from 'vscode-languageserver-protocol';
import { RefreshRequest, StatusNotification } from '../../server/src/protocol';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';
import { within } from '../support/waiting';

const root = repoRoot();
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const ECHO_SCHEMA_PIN = 'fnv1a64:a76fe8d6d023fca0';
const QUIET_MS = 1500;

function blueprint(name: string, server: string): string {
  return `{
  "blueprint": "${name}",
  "formatVersion": 1,
  "steps": [
    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "${server}", "expectedSchemaHash": "${ECHO_SCHEMA_PIN}", "arguments": { "text": "hi" } } }
  ]
}
`;
}

/** Resolves once no publication at all has arrived for `quietMs` (bounded by `timeoutMs`). */
async function quiet(server: TestServer, quietMs = QUIET_MS, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen = server.published.length;
  let since = Date.now();
  while (Date.now() - since < quietMs) {
    if (Date.now() > deadline) throw new Error(`publications did not stop within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (server.published.length !== seen) {
      seen = server.published.length;
      since = Date.now();
    }
  }
}

function countsAfter(server: TestServer, start: number, uris: readonly string[]): number[] {
  const later: PublishDiagnosticsParams[] = server.published.slice(start);
  return uris.map((uri) => later.filter((params) => params.uri === uri).length);
}

describe('a listing change revalidates each document once', () => {
  let server: TestServer;
  let workspace: string;
  let control: string;
  let demoUri: string;
  let otherUri: string;

  before(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-revalidation-'));
    control = path.join(workspace, 'control.json');
    writeFileSync(control, JSON.stringify({ version: 1 }));
    writeFileSync(
      path.join(workspace, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--control-file', control] },
          other: { command: process.execPath, args: [fixtureServer, '--stdio'] },
        },
      }),
    );
    mkdirSync(path.join(workspace, 'flows'));
    const demoFile = path.join(workspace, 'flows', 'demo.blueprint.jsonc');
    const otherFile = path.join(workspace, 'flows', 'other.blueprint.jsonc');
    writeFileSync(demoFile, blueprint('demo', 'demo'));
    writeFileSync(otherFile, blueprint('other', 'other'));
    demoUri = `file://${demoFile}`;
    otherUri = `file://${otherFile}`;
    server = await startTestServer({ rootUri: `file://${workspace}` });
    // Both documents are scanned from the disk. A pending listing publishes no problem either, so
    // the status says when both servers are listed and both pins verified; only then is it quiet.
    let settled!: () => void;
    const listed = new Promise<void>((resolve) => (settled = resolve));
    server.connection.onNotification(StatusNotification, (status) => {
      if (status.pins.verified === 2 && status.servers.length === 2 && status.servers.every((entry) => entry.state === 'listed')) settled();
    });
    await within(listed, 20_000, 'both servers listed and both pins verified');
    await quiet(server);
  });

  after(async () => {
    await server.stop();
    rmSync(workspace, { recursive: true, force: true });
  });

  test('toolpin/refresh publishes every document exactly once', async () => {
    const start = server.published.length;
    await server.connection.sendRequest(RefreshRequest, {});
    await quiet(server);
    assert.deepEqual(countsAfter(server, start, [demoUri, otherUri]), [1, 1], 'one publication per document after a refresh');
  });

  test("toolpin/refresh of one server publishes only its documents, once", async () => {
    const start = server.published.length;
    await server.connection.sendRequest(RefreshRequest, { servers: ['other'] });
    await quiet(server);
    assert.deepEqual(countsAfter(server, start, [demoUri, otherUri]), [0, 1]);
  });

  test("a server's list_changed publishes its documents exactly once, and no other", async () => {
    const start = server.published.length;
    // The rewrite drifts echo_upper's schema on "demo" only: its document must show the drift.
    writeFileSync(control, JSON.stringify({ version: 2, rewrite: { echo_upper: { inputSchema: { type: 'object', properties: { text: { type: 'string' }, loud: { type: 'boolean' } } } } } }));
    await server.diagnostics(demoUri, (params) => server.published.indexOf(params) >= start && params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 20_000);
    await quiet(server);
    assert.deepEqual(countsAfter(server, start, [demoUri, otherUri]), [1, 0], 'one publication for the server that changed, none for the other');
  });
});
