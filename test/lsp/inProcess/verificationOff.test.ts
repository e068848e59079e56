/**
 * `toolpin.verify.enable` false (issue 13, offline row): turning live verification off is a
 * setting, not a problem of every pin. A drifted pin then gets no diagnostic at all (no "cannot
 * verify" per pin, which made 10,000 diagnostics for a 10,000-step file), the structure checks
 * still run, no server is asked for a listing, and the status says verification is off.
 * Turning it back on verifies the pins again.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StatusNotification, type StatusParams } from '../../../server/src/protocol';
import { startInProcessServer, type InProcessServer } from '../../support/inProcessServer';
import { ADD_NUMBERS, ECHO_UPPER } from '../../support/referenceVectors';
import { createWorkspace, type WorkspaceFixture } from '../../support/workspaceFixture';

const STALE = 'fnv1a64:0000000000000000';
const TEXT = `{
  "blueprint": "shout",
  "formatVersion": 1,
  "steps": [
    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "${STALE}" } },
    { "id": "typo", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "fnv1a64:12" } }
  ]
}
`;
const codes = (params: { diagnostics: Array<{ code?: unknown }> }): string[] => params.diagnostics.map((diagnostic) => String(diagnostic.code));

let workspace: WorkspaceFixture;
let server: InProcessServer;
before(async () => {
  workspace = createWorkspace('toolpin-inproc-verify-off-');
  workspace.mcpServers({ demo: { command: 'fake-mcp-server' } });
  server = await startInProcessServer({ rootUri: workspace.uri, settings: { verify: { enable: false }, validate: { debounceMs: 0 } }, servers: { demo: [ECHO_UPPER, ADD_NUMBERS] } });
});
after(async () => {
  await server.stop();
  workspace.remove();
});

test('verification off: structure problems only, no server asked, and the status says off', async () => {
  const uri = workspace.write('flows/shout.blueprint.jsonc', TEXT);
  server.open(uri, TEXT);
  const published = await server.diagnostics(uri, (params) => params.diagnostics.length > 0);
  assert.deepEqual(codes(published), ['TP204'], 'the malformed pin only; nothing per pin for verification');
  const status = await server.notification<StatusParams>(StatusNotification.method, (params) => params.servers.length > 0);
  assert.equal(status.verification, 'off');
  assert.deepEqual(status.servers.map((entry) => [entry.name, entry.state]), [['demo', 'off']]);
  assert.equal(server.servers.current.calls.ensure, 0, 'no listing was asked for');
  assert.deepEqual(server.servers.current.contacted, []);
});

test('turned back on, the pins are verified again', async () => {
  const uri = workspace.uriOf('flows/shout.blueprint.jsonc');
  const seen = server.published.length;
  server.configure({ verify: { enable: true }, validate: { debounceMs: 0 } });
  const published = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= seen && codes(params).includes('TP400'), 10_000);
  assert.deepEqual(codes(published), ['TP400', 'TP204']);
});
