/**
 * An untrusted workspace (run-code-server.mjs --untrusted: workspace trust on, the folder never
 * trusted): Toolpin still checks structure, but starts no MCP server — the .mcp.json the launcher
 * wrote names the fixture server with a --pid-file, and that file must never appear — and reports
 * every pin as "cannot verify" saying why. Structure (TP200 on broken.blueprint.jsonc) is checked by
 * extension.test.ts in this mode too.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { codeActions, codeOf, describeDiagnostics, diagnosticsWhere, ECHO_PIN, hostEnv, hoverText, openAndActivate, positionOf, requireLiveFixture, withCode, workspaceFile } from './helpers';

(hostEnv.trust === 'untrusted' ? describe : describe.skip)('Toolpin in an untrusted workspace', () => {
  let pidFile: string;

  before(async () => {
    pidFile = requireLiveFixture().pidFile;
    await openAndActivate('drifted.blueprint.jsonc');
  });

  it('the workspace is not trusted, and the extension is active anyway (limited support)', () => {
    assert.equal(vscode.workspace.isTrusted, false);
    assert.equal(vscode.extensions.getExtension('toolpin.toolpin')?.isActive, true);
  });

  it('reports the drifted pin as TP403 "cannot verify" because the workspace is not trusted', async () => {
    const uri = workspaceFile('drifted.blueprint.jsonc');
    const document = await vscode.workspace.openTextDocument(uri);
    const [unverified] = await diagnosticsWhere(uri, (all) => all.some((d) => codeOf(d) === 'TP403'), 'TP403 on the echo_upper pin').then((all) =>
      all.filter((d) => codeOf(d) === 'TP403'),
    );
    assert.ok(unverified);
    assert.equal(unverified.severity, vscode.DiagnosticSeverity.Information);
    assert.match(unverified.message, /cannot verify/);
    assert.match(unverified.message, /not trusted/);
    // The message names the command that did not run and how to trust the folder in VS Code.
    assert.match(unverified.message, /the folder is not trusted, so Toolpin did not run `node [^`]*fixture-server\.mjs --stdio --control-file [^`]*` \(trust the workspace in VS Code to verify its pins\)/);
    assert.equal(document.getText(unverified.range), `"${ECHO_PIN.REFERENCE}"`);
    assert.deepEqual(withCode(uri, 'TP400'), [], `no drift can be known without a listing:\n  ${describeDiagnostics(withCode(uri, 'TP400'))}`);

    const hover = await hoverText(uri, positionOf(document, ECHO_PIN.REFERENCE, 0, 4));
    assert.match(hover, /cannot verify/);
    assert.match(hover, /not trusted/);
  });

  it('offers no re-pin for a pin it cannot verify', async () => {
    const uri = workspaceFile('drifted.blueprint.jsonc');
    const [unverified] = withCode(uri, 'TP403');
    assert.ok(unverified);
    const titles = (await codeActions(uri, unverified.range)).map((action) => action.title);
    assert.deepEqual(
      titles.filter((title) => /re-pin/i.test(title)),
      [],
      `no re-pin action; got: ${titles.join(', ')}`,
    );
  });

  it('toolpin.refresh and toolpin.clearCache start no server', async () => {
    await vscode.commands.executeCommand('toolpin.refresh');
    await vscode.commands.executeCommand('toolpin.clearCache');
    const uri = workspaceFile('drifted.blueprint.jsonc');
    await diagnosticsWhere(uri, (all) => all.some((d) => codeOf(d) === 'TP403' && /not trusted/.test(d.message)), 'TP403 (not trusted) after refresh');
  });

  it('never started the fixture MCP server (its --pid-file does not exist)', () => {
    // Last on purpose: everything above had its chance to start a server.
    assert.equal(fs.existsSync(pidFile), false, `${pidFile} exists: a server was started in an untrusted workspace`);
  });
});
