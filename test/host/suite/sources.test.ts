/**
 * Pins written in TypeScript, in a real extension host (trusted workspace only): a module that
 * calls `mcpInvoke$` (imported under an alias) with echo_upper's reference pin in single quotes.
 * The fixture server "demo" has rewritten echo_upper since (the runner's control version 2, or
 * version 3 once drift.test has moved it on), so the pin is drifted whichever runs first. The
 * module is written by the test, after the files that count the workspace's pins have run (this
 * file sorts after them), and removed at the end.
 *
 * Shown: the document is served as `typescript`; the squiggle (TP400) covers exactly the pin
 * literal, quotes included; the "Re-pin" quick fix, applied through VS Code, changes only the pin,
 * keeps its single quotes and clears the diagnostic.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { codeActions, codeOf, diagnosticsAfter, diagnosticsWhere, ECHO_PIN, hostEnv, openAndActivate, requireLiveFixture, withCode, workspaceFile } from './helpers';

const NAME = 'pins.steps.ts';
const MODULE = `// Steps written in code for the host test.
import { mcpInvoke$ as invoke } from '@loom/plugin-mcp';

/* echo_upper was rewritten since this pin was taken. */
export const shout = invoke('shout#1', { toolName: 'echo_upper', server: "demo", expectedSchemaHash: '${ECHO_PIN.REFERENCE}' }); // drifted
`;

(hostEnv.trust === 'trusted' ? describe : describe.skip)('Pins in a TypeScript module (trusted workspace)', () => {
  const uri = () => workspaceFile(NAME);

  before(() => {
    requireLiveFixture();
    fs.writeFileSync(uri().fsPath, MODULE);
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync(uri().fsPath, { force: true });
  });

  it('squiggles the pin literal of the mcpInvoke$ call with TP400', async () => {
    const document = await openAndActivate(NAME);
    assert.equal(document.languageId, 'typescript');
    const drifts = (await diagnosticsWhere(uri(), (all) => all.some((d) => codeOf(d) === 'TP400'), 'TP400 on the pin in the TypeScript module', 30_000)).filter(
      (d) => codeOf(d) === 'TP400',
    );
    assert.equal(drifts.length, 1);
    const [drift] = drifts;
    assert.equal(drift!.severity, vscode.DiagnosticSeverity.Error);
    assert.equal(document.getText(drift!.range), `'${ECHO_PIN.REFERENCE}'`, 'the squiggle covers the pin literal, quotes included');
    assert.match(drift!.message, /"echo_upper"/);
    assert.match(drift!.message, /"demo"/);
  });

  it('the Re-pin quick fix changes only the pin, in its single quotes, and the squiggle goes', async () => {
    const [drift] = withCode(uri(), 'TP400');
    assert.ok(drift, 'TP400 is still there');
    const actions = await codeActions(uri(), drift.range);
    const repin = actions.find((action) => action.title.startsWith('Re-pin "echo_upper"'));
    assert.ok(repin?.edit, `a re-pin quick fix with an edit is offered; got:\n  ${actions.map((action) => action.title).join('\n  ')}`);
    assert.equal(repin.isPreferred, true);
    const cleared = diagnosticsAfter(uri(), (all) => !all.some((d) => codeOf(d) === 'TP400'), 'TP400 to go after the re-pin', 30_000);
    assert.ok(await vscode.workspace.applyEdit(repin.edit), 'VS Code applied the edit');
    const document = await vscode.workspace.openTextDocument(uri());
    const text = document.getText();
    const live = /expectedSchemaHash: '(fnv1a64:[0-9a-f]{16})'/.exec(text)?.[1];
    assert.ok(live && live !== ECHO_PIN.REFERENCE, `the pin advanced in single quotes:\n${text}`);
    assert.equal(text, MODULE.replace(ECHO_PIN.REFERENCE, live), 'nothing but the pin changed');
    await cleared;
    await document.save();
  });
});
