/**
 * The policy file in the editor: `.toolpin/policy.jsonc`, opened, shows its own mistakes (TP413)
 * on the exact value, follows its edits, and clears when closed. (Which policy applies to the
 * findings is the saved file's: test/lsp/policy.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startInProcessServer, type InProcessServer } from '../../support/inProcessServer';
import { textAt } from '../../support/lspSession';
import { createWorkspace, type WorkspaceFixture } from '../../support/workspaceFixture';

const BROKEN = `{
  // Severity overrides for this repository.
  "rules": [ { "severity": { "TP400": "fatal" } } ]
}
`;
const FIXED = BROKEN.replace('"fatal"', '"warning"');

let workspace: WorkspaceFixture;
let server: InProcessServer;
before(async () => {
  workspace = createWorkspace('toolpin-inproc-policy-file-');
  server = await startInProcessServer({ rootUri: workspace.uri, settings: { validate: { debounceMs: 0 } } });
});
after(async () => {
  await server.stop();
  workspace.remove();
});

test('an open policy file shows TP413 on the bad value, follows edits, and clears on close', async () => {
  const uri = workspace.write('.toolpin/policy.jsonc', BROKEN);
  server.open(uri, BROKEN, 'jsonc');
  const broken = await server.diagnostics(uri, (params) => params.diagnostics.length > 0);
  assert.deepEqual(broken.diagnostics.map((diagnostic) => [diagnostic.code, textAt(BROKEN, diagnostic.range)]), [['TP413', '"fatal"']]);
  assert.match(String(broken.diagnostics[0]!.message), /policy\.jsonc/);

  const seen = server.published.length;
  server.change(uri, 2, [{ text: FIXED }]);
  const fixed = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= seen && params.version === 2);
  assert.deepEqual(fixed.diagnostics, []);

  server.change(uri, 3, [{ text: BROKEN }]);
  await server.diagnostics(uri, (params) => params.version === 3 && params.diagnostics.length === 1);
  const beforeClose = server.published.length;
  server.close(uri);
  const cleared = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= beforeClose);
  assert.deepEqual(cleared.diagnostics, []);
});
