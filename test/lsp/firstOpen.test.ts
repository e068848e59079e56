/**
 * The first minutes in an editor: a blueprint opened first, before anything else of its folder,
 * in a client that offers neither `workspace/configuration` nor watched files (Neovim 0.7 and many
 * minimal clients). The folder is laid out like `examples/`: blueprints/ and connectors/ side by
 * side, `.jsonc` files, and a `.mcp.json`. The server the blueprint uses is declared only in a
 * connector file, which the workspace scan finds; until the scan has been read, nothing may be
 * reported about unknown servers, and once it has, every drifted pin shows its drift.
 *
 * Each case starts the real built server over stdio and records every publication, so "never an
 * unknown-server diagnostic" is checked over the whole window, not only at its end.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Diagnostic, PublishDiagnosticsParams } from 'vscode-languageserver-protocol';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';

const root = repoRoot();
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
// The fixture server's unchanged pins (see test/fixtures/servers/README.md).
const ECHO_SCHEMA_PIN = 'fnv1a64:a76fe8d6d023fca0';

/** Writes an examples-like folder; the connector's server rewrote echo_upper's schema since the pin. */
function writeExampleLikeFolder(workspace: string): { blueprint: string } {
  const control = path.join(workspace, 'control.json');
  writeFileSync(control, JSON.stringify({ version: 1, rewrite: { echo_upper: { inputSchema: { type: 'object', properties: { text: { type: 'string' }, loud: { type: 'boolean' } }, required: ['text'] } } } }));
  mkdirSync(path.join(workspace, 'blueprints'));
  mkdirSync(path.join(workspace, 'connectors'));
  writeFileSync(
    path.join(workspace, 'connectors', 'notes.connector.jsonc'),
    `// The notes server is declared here only.
{
  "name": "notes",
  "type": "api",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(fixtureServer)}, "--stdio", "--control-file", ${JSON.stringify(control)}] },
    "include": ["echo_upper"]
  },
  "auth": { "type": "none" }
}
`,
  );
  // A second server, declared in .mcp.json, that the blueprint does not use; it must not hide the first.
  writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { other: { command: process.execPath, args: [fixtureServer, '--stdio'] } } }));
  const blueprint = path.join(workspace, 'blueprints', 'shout.blueprint.jsonc');
  writeFileSync(
    blueprint,
    `// Two steps on the connector's server, both pinned before the rewrite.
{
  "blueprint": "shout",
  "formatVersion": 1,
  "steps": [
    { "id": "one", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "notes", "expectedSchemaHash": "${ECHO_SCHEMA_PIN}" } },
    { "id": "two", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "notes", "expectedSchemaHash": "${ECHO_SCHEMA_PIN}" } }
  ]
}
`,
  );
  return { blueprint };
}

/** LSP 3.18 allows markup messages; the server sends plain strings. */
function messageOf(diagnostic: Diagnostic): string {
  return typeof diagnostic.message === 'string' ? diagnostic.message : diagnostic.message.value;
}

const UNKNOWN_SERVER = /no server named|no MCP server is configured/;

function unknownServerDiagnostics(published: readonly PublishDiagnosticsParams[]): string[] {
  return published.flatMap((params) => params.diagnostics.filter((diagnostic) => diagnostic.code === 'TP406' || UNKNOWN_SERVER.test(messageOf(diagnostic))).map(messageOf));
}

const clients: Array<{ name: string; workspace?: Record<string, unknown> }> = [
  { name: 'a client that offers neither configuration nor watched files' },
  // The test client answers no registerCapability request, as a client that refuses it would.
  { name: 'a client that offers watched files but refuses their registration', workspace: { didChangeWatchedFiles: { dynamicRegistration: true } } },
  { name: 'a client that offers configuration', workspace: { configuration: true } },
];

for (const client of clients) {
  describe(`a blueprint opened first, in ${client.name}`, () => {
    let server: TestServer;
    let workspace: string;
    let uri: string;

    before(async () => {
      workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-first-open-'));
      const { blueprint } = writeExampleLikeFolder(workspace);
      uri = `file://${blueprint}`;
      server = await startTestServer({ rootUri: `file://${workspace}`, capabilities: client.workspace ? { workspace: client.workspace } : undefined });
      // Opened at once, as an editor does right after `initialized`, racing the workspace scan.
      server.open(uri, (await import('node:fs')).readFileSync(blueprint, 'utf8'));
    });

    after(async () => {
      await server.stop();
      rmSync(workspace, { recursive: true, force: true });
    });

    test('shows one drift diagnostic per drifted pin within 10 s, naming the tool', async () => {
      const published = await server
        .diagnostics(uri, (params) => params.diagnostics.filter((diagnostic) => diagnostic.code === 'TP400').length === 2, 10_000)
        .catch((error: unknown) => {
          const seen = server.published.filter((params) => params.uri === uri).map((params) => params.diagnostics.map((diagnostic) => `${diagnostic.code} ${diagnostic.message}`));
          throw new Error(`${String(error)}; publications: ${JSON.stringify(seen)}`);
        });
      for (const diagnostic of published.diagnostics.filter((candidate) => candidate.code === 'TP400')) {
        assert.match(messageOf(diagnostic), /tool "echo_upper" on server "notes" changed since it was pinned: pinned fnv1a64:a76fe8d6d023fca0, live fnv1a64:[0-9a-f]{16}/);
      }
    });

    test('never publishes an unknown-server diagnostic, from the first publication on', () => {
      const forUri = server.published.filter((params) => params.uri === uri);
      assert.ok(forUri.length > 0, 'the blueprint was published at least once');
      assert.deepEqual(unknownServerDiagnostics(forUri), []);
    });
  });
}
