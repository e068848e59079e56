/**
 * Drift diagnostics, in process (test/support/inProcessServer.ts): `startServer` on an in-memory
 * connection, verifying against a fake listing source that serves the reference tool from memory.
 * The diagnostic names the tool, the server and both hashes and covers the pin literal; a listing
 * that changes (as list_changed reports it) re-publishes without anyone typing; a server that
 * cannot be listed is "cannot verify", never drift; an untrusted workspace contacts no server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { schemaPin } from '../../../server/src/core/pins/pins';
import { RefreshRequest } from '../../../server/src/protocol';
import { startInProcessServer, type InProcessServer } from '../../support/inProcessServer';
import { textAt } from '../../support/lspSession';
import { ADD_NUMBERS, ECHO_SCHEMA_PIN, ECHO_UPPER } from '../../support/referenceVectors';
import { createWorkspace, type WorkspaceFixture } from '../../support/workspaceFixture';

/** echo_upper after the server added an optional property to its input schema. */
const ECHO_WITH_SHOUT = { ...ECHO_UPPER, inputSchema: { ...ECHO_UPPER.inputSchema, properties: { ...ECHO_UPPER.inputSchema.properties, shout: { type: 'boolean' } } } };
const SHOUT_PIN = schemaPin(ECHO_WITH_SHOUT.inputSchema);

function blueprint(pin: string): string {
  return `{
  "blueprint": "shout",
  "formatVersion": 1,
  "steps": [
    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "${pin}", "arguments": { "text": "hi" } } }
  ]
}
`;
}

const codes = (params: { diagnostics: Array<{ code?: unknown }> }): string[] => params.diagnostics.map((diagnostic) => String(diagnostic.code));

describe('drift diagnostics in process', () => {
  let workspace: WorkspaceFixture;
  let server: InProcessServer;

  before(async () => {
    workspace = createWorkspace('toolpin-inproc-diagnostics-');
    // Nothing is started: the fake answers for "demo" whatever its command says.
    workspace.mcpServers({ demo: { command: 'fake-mcp-server' } });
    server = await startInProcessServer({ rootUri: workspace.uri, servers: { demo: [ECHO_WITH_SHOUT, ADD_NUMBERS] } });
  });

  after(async () => {
    await server.stop();
    workspace.remove();
  });

  test('the drift diagnostic names the tool, the server and both hashes, on the pin literal', async () => {
    const text = blueprint(ECHO_SCHEMA_PIN);
    const uri = workspace.write('drifted.blueprint.jsonc', text);
    server.open(uri, text);
    const published = await server.diagnostics(uri, (params) => codes(params).includes('TP400'));
    assert.deepEqual(codes(published), ['TP400']);
    const drift = published.diagnostics[0]!;
    assert.equal(
      drift.message,
      `step "shout": the input schema of tool "echo_upper" on server "demo" changed since it was pinned: pinned ${ECHO_SCHEMA_PIN}, live ${SHOUT_PIN} (what changed is unknown: the pinned content is not in .toolpin/store (re-pinning with Toolpin records it for next time))`,
    );
    assert.equal(drift.severity, 1);
    assert.equal(drift.source, 'toolpin');
    assert.equal(textAt(text, drift.range), `"${ECHO_SCHEMA_PIN}"`);
  });

  test('a listing change re-publishes without typing: drift appears, then clears when the server goes back', async () => {
    const text = blueprint(SHOUT_PIN);
    const uri = workspace.write('moving.blueprint.jsonc', text);
    server.open(uri, text);
    const verified = await server.diagnostics(uri);
    assert.deepEqual(codes(verified), [], 'pinned at what the server serves: nothing to report');

    const seen = server.published.length;
    await server.servers.setTools('demo', [ECHO_UPPER, ADD_NUMBERS]);
    const drifted = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= seen && codes(params).includes('TP400'));
    assert.match(String(drifted.diagnostics[0]!.message), new RegExp(`pinned ${SHOUT_PIN}, live ${ECHO_SCHEMA_PIN}`));

    const again = server.published.length;
    await server.servers.setTools('demo', [ECHO_WITH_SHOUT, ADD_NUMBERS]);
    // A publication computed before the change may still arrive after it (checks run concurrently
    // with listings); the pin must clear, so the wait is for the first clean one after the change,
    // and it fails on the harness's timeout when the drift never clears.
    const cleared = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= again && !codes(params).includes('TP400'));
    assert.deepEqual(codes(cleared), []);
  });

  test('toolpin/refresh re-lists the named server through the listing source once, and re-publishes', async () => {
    const text = blueprint(SHOUT_PIN);
    const uri = workspace.write('refreshed.blueprint.jsonc', text);
    server.open(uri, text);
    await server.diagnostics(uri);
    const source = server.servers.current;
    const before = { refresh: source.calls.refresh, fetched: source.fetched.length, published: server.published.length };
    await server.connection.sendRequest(RefreshRequest, { servers: ['demo'] });
    assert.equal(source.calls.refresh - before.refresh, 1, 'one refresh of the source');
    assert.deepEqual(source.fetched.slice(before.fetched), ['demo'], 'demo, and only demo, listed again once');
    const republished = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= before.published);
    assert.deepEqual(codes(republished), []);
  });

  test('a server that cannot be listed is "cannot verify" (TP403), never drift', async () => {
    const other = createWorkspace('toolpin-inproc-unavailable-');
    other.mcpServers({ demo: { command: 'fake-mcp-server' } });
    const subject = await startInProcessServer({ rootUri: other.uri, servers: { demo: { unavailable: { reason: 'crashed', message: 'the server exited with code 3' } } } });
    try {
      const text = blueprint(ECHO_SCHEMA_PIN);
      const uri = other.write('down.blueprint.jsonc', text);
      subject.open(uri, text);
      const published = await subject.diagnostics(uri, (params) => params.diagnostics.length > 0);
      assert.deepEqual(codes(published), ['TP403']);
      assert.equal(published.diagnostics[0]!.message, 'step "shout": cannot verify: "demo": the server exited with code 3; never listed');
      assert.deepEqual(subject.servers.current.contacted, ['demo'], 'it was asked, and failed');
    } finally {
      await subject.stop();
      other.remove();
    }
  });

  test('in a workspace the client says is untrusted, no server is contacted and the pin is "cannot verify"', async () => {
    const other = createWorkspace('toolpin-inproc-untrusted-');
    other.mcpServers({ demo: { command: 'fake-mcp-server' } });
    const subject = await startInProcessServer({ rootUri: other.uri, trusted: false, servers: { demo: [ECHO_UPPER] } });
    try {
      const text = blueprint(ECHO_SCHEMA_PIN);
      const uri = other.write('untrusted.blueprint.jsonc', text);
      subject.open(uri, text);
      const published = await subject.diagnostics(uri, (params) => params.diagnostics.length > 0);
      assert.deepEqual(codes(published), ['TP403']);
      assert.equal(published.diagnostics[0]!.message, 'step "shout": cannot verify: "demo": the folder is not trusted, so Toolpin did not run `fake-mcp-server` (trust the workspace in VS Code to verify its pins); never listed');
      assert.deepEqual(subject.servers.current.contacted, [], 'the trust decision came first: no server was contacted');
      assert.ok(subject.servers.current.fetched.length > 0, 'a listing was asked for');
    } finally {
      await subject.stop();
      other.remove();
    }
  });
});
