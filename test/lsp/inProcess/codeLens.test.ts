/**
 * Code lenses, in process (test/support/inProcessServer.ts, a fake listing source, and a clock the
 * test moves): "N pins · M drifted · verified <age>" on the blueprint's name and on each connector
 * instance, "Re-pin all" only when something drifted, "Refresh" naming the servers; the counts
 * follow a listing change, and the client is asked to refresh its lenses when one arrives.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CodeLensRefreshRequest } from 'vscode-languageserver-protocol';
import { schemaPin } from '../../../server/src/core/pins/pins';
import { startInProcessServer, type InProcessServer } from '../../support/inProcessServer';
import { textAt } from '../../support/lspSession';
import { ADD_NUMBERS, ECHO_SCHEMA_PIN, ECHO_TOOL_PIN, ECHO_UPPER, REVERSE_TEXT } from '../../support/referenceVectors';
import { waitFor } from '../../support/waiting';
import { createWorkspace, type WorkspaceFixture } from '../../support/workspaceFixture';

const ADD_PIN = schemaPin(ADD_NUMBERS.inputSchema);
const REVERSE_PIN = schemaPin(REVERSE_TEXT.inputSchema);
const ECHO_WITH_SHOUT = { ...ECHO_UPPER, inputSchema: { ...ECHO_UPPER.inputSchema, properties: { ...ECHO_UPPER.inputSchema.properties, shout: { type: 'boolean' } } } };

const BLUEPRINT = `{
  "blueprint": "lenses",
  "formatVersion": 1,
  "steps": [
    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "${ECHO_SCHEMA_PIN}" } },
    { "id": "add", "effect": "mcp.invoke", "input": { "toolName": "add_numbers", "server": "demo", "expectedSchemaHash": "${ADD_PIN}" } },
    { "id": "reverse", "effect": "mcp.invoke", "input": { "toolName": "reverse_text", "server": "demo", "expectedSchemaHash": "${REVERSE_PIN}" } }
  ]
}
`;

const CONNECTOR = `{
  "name": "demo_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": "fake-mcp-server" },
    "toolsSnapshot": { "echo_upper": "${ECHO_TOOL_PIN}" }
  }
}
`;

describe('code lenses in process', () => {
  let workspace: WorkspaceFixture;
  let server: InProcessServer;
  let clock = Date.UTC(2026, 0, 1, 12, 0, 0);
  let refreshes = 0;
  let blueprintUri: string;

  before(async () => {
    workspace = createWorkspace('toolpin-inproc-lens-');
    workspace.mcpServers({ demo: { command: 'fake-mcp-server' } });
    server = await startInProcessServer({
      rootUri: workspace.uri,
      now: () => clock,
      servers: { demo: [ECHO_WITH_SHOUT, ADD_NUMBERS, REVERSE_TEXT], demo_tools: [ECHO_UPPER] },
      capabilities: { workspace: { codeLens: { refreshSupport: true } } },
    });
    server.connection.onRequest(CodeLensRefreshRequest.type, () => {
      refreshes++;
    });
    blueprintUri = workspace.write('lenses.blueprint.jsonc', BLUEPRINT);
    server.open(blueprintUri, BLUEPRINT);
    await server.diagnostics(blueprintUri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'));
  });

  after(async () => {
    await server.stop();
    workspace.remove();
  });

  test('a blueprint: three pins, one drifted, on its name, with Re-pin all and Refresh', async () => {
    const lenses = await server.codeLens(blueprintUri);
    assert.deepEqual(
      lenses.map((lens) => [lens.command?.title, lens.command?.command, lens.command?.arguments]),
      [
        ['3 pins · 1 drifted · verified just now', 'toolpin.showOutput', []],
        ['Re-pin all', 'toolpin.repinFile', [blueprintUri]],
        ['Refresh', 'toolpin.refresh', [['demo']]],
      ],
    );
    for (const lens of lenses) assert.equal(textAt(BLUEPRINT, lens.range), '"lenses"', 'every lens stands on the blueprint name');
  });

  test('the age follows the clock: 3 min later the lens says so', async () => {
    clock += 3 * 60_000;
    const [summary] = await server.codeLens(blueprintUri);
    assert.equal(summary?.command?.title, '3 pins · 1 drifted · verified 3 min ago');
  });

  test('a listing change updates the counts, drops Re-pin all, and asks the client to refresh', async () => {
    const before = refreshes;
    const seen = server.published.length;
    await server.servers.setTools('demo', [ECHO_UPPER, ADD_NUMBERS, REVERSE_TEXT]);
    await server.diagnostics(blueprintUri, (params) => server.published.indexOf(params) >= seen);
    await waitFor('a workspace/codeLens/refresh request', () => refreshes > before);
    const lenses = await server.codeLens(blueprintUri);
    assert.deepEqual(lenses.map((lens) => lens.command?.title), ['3 pins · all verified · verified just now', 'Refresh']);
  });

  test('a connector: one lens group per instance, on its name', async () => {
    const uri = workspace.write('demo.connector.jsonc', CONNECTOR);
    server.open(uri, CONNECTOR);
    await server.diagnostics(uri);
    const lenses = await server.codeLens(uri);
    assert.deepEqual(lenses.map((lens) => [lens.command?.title, lens.command?.arguments]), [
      ['1 pin · all verified · verified just now', []],
      ['Refresh', [['demo_tools']]],
    ]);
    assert.equal(textAt(CONNECTOR, lenses[0]!.range), '"demo_tools"');
  });

  test('a server that cannot be listed: the pin counts as unverified and no age is claimed', async () => {
    await server.servers.setUnavailable('demo_tools', 'unreachable', 'connection refused');
    const uri = workspace.uriOf('demo.connector.jsonc');
    await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP403'));
    const [summary] = await server.codeLens(uri);
    assert.equal(summary?.command?.title, '1 pin · 1 unverified');
  });
});
