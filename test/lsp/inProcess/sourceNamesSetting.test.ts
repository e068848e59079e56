/**
 * The `toolpin.sources.invokeFunctions` setting in the language server (issue 11: "a setting for
 * re-exported or aliased names"): a module that calls `mcpInvoke$` under another name, from a
 * module of the team's own, is a document only when the setting names that module; changing the
 * setting while the server runs makes the module's pins verified without a restart.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startInProcessServer, type InProcessServer } from '../../support/inProcessServer';
import { ADD_NUMBERS, ECHO_UPPER } from '../../support/referenceVectors';
import { createWorkspace, type WorkspaceFixture } from '../../support/workspaceFixture';

const STALE = 'fnv1a64:0000000000000000';
const MODULE = `import { invoke } from '@acme/steps';

export const shout = invoke('shout', { toolName: 'echo_upper', server: 'demo', expectedSchemaHash: '${STALE}' });
`;
const codes = (params: { diagnostics: Array<{ code?: unknown }> }): string[] => params.diagnostics.map((diagnostic) => String(diagnostic.code));

let workspace: WorkspaceFixture;
let server: InProcessServer;
before(async () => {
  workspace = createWorkspace('toolpin-inproc-source-names-');
  workspace.mcpServers({ demo: { command: 'fake-mcp-server' } });
  workspace.write('src/steps.ts', MODULE);
  server = await startInProcessServer({ rootUri: workspace.uri, settings: { validate: { debounceMs: 0 } }, servers: { demo: [ECHO_UPPER, ADD_NUMBERS] } });
});
after(async () => {
  await server.stop();
  workspace.remove();
});

test('without the setting the aliased call is not read; with it, its pin is verified and drift is reported', async () => {
  const uri = workspace.uriOf('src/steps.ts');
  server.open(uri, MODULE, 'typescript');
  const before = await server.diagnostics(uri);
  assert.deepEqual(codes(before), [], 'invoke from @acme/steps is not a pin call by default');

  const seen = server.published.length;
  server.configure({ validate: { debounceMs: 0 }, sources: { invokeFunctions: ['@acme/steps#invoke'] } });
  const after = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= seen && codes(params).includes('TP400'), 10_000);
  assert.deepEqual(codes(after), ['TP400']);
  assert.match(String(after.diagnostics[0]!.message), /tool "echo_upper" on server "demo"/);

  // Typing in the module keeps reading it with the folder's names.
  const edited = MODULE.replace('export const shout', '// the shout step\nexport const shout');
  server.change(uri, 2, [{ text: edited }]);
  const typed = await server.diagnostics(uri, (params) => params.version === 2, 10_000);
  assert.deepEqual(codes(typed), ['TP400']);
});
