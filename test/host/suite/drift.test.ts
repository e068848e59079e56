/**
 * Live drift in a real extension host (trusted workspace only): the fixture MCP server "demo"
 * (started by the language server from the .mcp.json the launcher wrote) serves echo_upper with a
 * rewritten input schema (control version 2), so the pins at the reference hash are drifted.
 *
 * Order matters inside this file (one workspace, one server): the diagnostic, the hover and the
 * code actions look at drifted.blueprint.jsonc before the re-pin changes it; the review test then
 * moves the server on (control version 3) for review.blueprint.jsonc.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { PinDetails } from '../../../server/src/protocol';
import {
  codeActions,
  codeOf,
  describeDiagnostics,
  diagnosticsAfter,
  diagnosticsWhere,
  ECHO_PIN,
  ECHO_SCHEMA_V3,
  fnv1a64Hex,
  hostEnv,
  hoverText,
  openAndActivate,
  pollUntil,
  positionOf,
  requireLiveFixture,
  REVIEW_SCHEME,
  sortedJson,
  toolpinApi,
  withCode,
  workspaceFile,
} from './helpers';

type RepinResult = { applied: true; edit: unknown } | { applied: false; reason: string };

(hostEnv.trust === 'trusted' ? describe : describe.skip)('Live drift of a pinned tool (trusted workspace)', () => {
  let live: { controlFile: string; pidFile: string };
  const driftedUri = () => workspaceFile('drifted.blueprint.jsonc');

  before(() => {
    live = requireLiveFixture();
  });

  it('reports TP400 on the drifted pin, naming the tool, the server and both hashes', async () => {
    const document = await openAndActivate('drifted.blueprint.jsonc');
    const [drift] = await diagnosticsWhere(driftedUri(), (all) => all.some((d) => codeOf(d) === 'TP400'), 'TP400 on the echo_upper pin').then((all) =>
      all.filter((d) => codeOf(d) === 'TP400'),
    );
    assert.ok(drift);
    assert.equal(withCode(driftedUri(), 'TP400').length, 1, describeDiagnostics(withCode(driftedUri(), 'TP400')));
    assert.equal(drift.severity, vscode.DiagnosticSeverity.Error);
    assert.match(drift.message, /"echo_upper"/);
    assert.match(drift.message, /"demo"/);
    assert.ok(drift.message.includes(`pinned ${ECHO_PIN.REFERENCE}, live ${ECHO_PIN.V2}`), drift.message);
    assert.equal(document.getText(drift.range), `"${ECHO_PIN.REFERENCE}"`, 'the diagnostic covers the pin literal');
    assert.ok(fs.existsSync(live.pidFile), 'the fixture server wrote its --pid-file (it was started)');
  });

  it('hovers the pin with its state and both hashes', async () => {
    const document = await vscode.workspace.openTextDocument(driftedUri());
    const hover = await hoverText(driftedUri(), positionOf(document, ECHO_PIN.REFERENCE, 0, 4));
    assert.match(hover, /drifted/);
    assert.ok(hover.includes(ECHO_PIN.REFERENCE), `the pinned hash is shown:\n${hover}`);
    assert.ok(hover.includes(ECHO_PIN.V2), `the live hash is shown:\n${hover}`);
    assert.match(hover, /echo_upper/);
    assert.match(hover, /"locale"/, 'the live schema is shown');
  });

  it('offers "Re-pin" and "Review and re-pin" for the drifted pin', async () => {
    const [drift] = withCode(driftedUri(), 'TP400');
    assert.ok(drift, 'TP400 is still there');
    const actions = await codeActions(driftedUri(), drift.range);
    const titles = actions.map((action) => action.title);
    const repin = actions.find((action) => action.title === `Re-pin "echo_upper" to ${ECHO_PIN.V2}`);
    assert.ok(repin, `a re-pin quick fix is offered; got:\n  ${titles.join('\n  ')}`);
    assert.equal(repin.kind?.value, vscode.CodeActionKind.QuickFix.value);
    assert.equal(repin.isPreferred, true);
    assert.ok(repin.edit, 'the re-pin carries its edit');
    const review = actions.find((action) => action.title === 'Review and re-pin "echo_upper"…');
    assert.ok(review, `a review quick fix is offered; got:\n  ${titles.join('\n  ')}`);
    assert.equal(review.command?.command, 'toolpin.reviewRepin');
  });

  it('applies the re-pin: the pin changes, the store entry is written, TP400 clears', async () => {
    const uri = driftedUri();
    const [drift] = withCode(uri, 'TP400');
    assert.ok(drift);
    const repin = (await codeActions(uri, drift.range)).find((action) => action.title.startsWith('Re-pin "echo_upper"'));
    assert.ok(repin?.edit);

    const cleared = diagnosticsAfter(uri, (all) => !all.some((d) => codeOf(d) === 'TP400'), 'TP400 to clear after the re-pin');
    assert.equal(await vscode.workspace.applyEdit(repin.edit), true, 'the workspace edit applies');
    const document = await vscode.workspace.openTextDocument(uri);
    const text = document.getText();
    assert.equal(text.includes(ECHO_PIN.REFERENCE), false, 'the old pin is gone');
    assert.equal(text.split(`"expectedSchemaHash": "${ECHO_PIN.V2}"`).length - 1, 1, 'the pin is now the live hash');
    await cleared;
    assert.deepEqual(withCode(uri, 'TP400'), []);

    // The store entry: created in the workspace copy, holding exactly what was hashed. (The edit
    // creates the file; its text is in the editor buffer until saved — files.autoSave is off.)
    const storeUri = workspaceFile(`.toolpin/store/${ECHO_PIN.V2.replace(':', '-')}.json`);
    assert.ok(fs.existsSync(storeUri.fsPath), `${storeUri.fsPath} exists`);
    console.log(`  (the store entry has ${fs.statSync(storeUri.fsPath).size} bytes on disk until saved; VS Code keeps API edits in buffers)`);
    const stored = (await vscode.workspace.openTextDocument(storeUri)).getText();
    const v2Schema = {
      type: 'object',
      properties: { text: { type: 'string', description: 'Text to upper-case' }, locale: { type: 'string', description: 'BCP 47 locale for upper-casing' } },
      required: ['text'],
    };
    assert.equal(stored, sortedJson(v2Schema), 'the store entry is the canonical JSON of the live input schema');
    assert.equal(`fnv1a64:${fnv1a64Hex(stored)}`, ECHO_PIN.V2, 'and it hashes to the new pin');
  });

  it('review and re-pin: refuses when the live hash changed after the review, applies the reviewed one', async () => {
    const document = await openAndActivate('review.blueprint.jsonc');
    const uri = document.uri;
    await diagnosticsWhere(uri, (all) => all.some((d) => codeOf(d) === 'TP400' && d.message.includes(ECHO_PIN.V2)), 'TP400 (live V2)');
    const position = positionOf(document, ECHO_PIN.REFERENCE, 0, 4);

    // 1. The review: "Compare Pinned and Live" opens the pinned ↔ live diff and returns what it showed.
    const shown = await vscode.commands.executeCommand<PinDetails | undefined>('toolpin.comparePinnedAndLive', uri, { line: position.line, character: position.character });
    assert.ok(shown, 'the compare command found the pin');
    assert.equal(shown.tool, 'echo_upper');
    assert.equal(shown.server, 'demo');
    assert.equal(shown.state, 'drifted');
    assert.equal(shown.pinned, ECHO_PIN.REFERENCE);
    assert.equal(shown.live, ECHO_PIN.V2);
    await pollUntil(
      () => {
        const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
        return input instanceof vscode.TabInputTextDiff && input.original.scheme === REVIEW_SCHEME && input.modified.scheme === REVIEW_SCHEME;
      },
      10_000,
      `a diff editor of two ${REVIEW_SCHEME}: documents to be the active tab`,
    );
    const diff = vscode.window.tabGroups.activeTabGroup.activeTab!.input as vscode.TabInputTextDiff;
    const liveSide = (await vscode.workspace.openTextDocument(diff.modified)).getText();
    assert.match(liveSide, /"locale"/, 'the live side shows the live schema');
    assert.equal(liveSide.includes('maxLength'), false);

    // 2. The server moves on after the review (control version 3); wait until Toolpin has seen it.
    fs.writeFileSync(live.controlFile, JSON.stringify({ version: 3, rewrite: { echo_upper: { inputSchema: ECHO_SCHEMA_V3 } } }));
    await diagnosticsWhere(uri, (all) => all.some((d) => codeOf(d) === 'TP400' && d.message.includes(ECHO_PIN.V3)), 'TP400 naming the V3 live hash (list_changed)');

    // 3. Approving the reviewed hash is refused. (The command's modal cannot be clicked in-host, so
    //    the request the command sends after "Re-pin" goes through the extension's own client.)
    const { client } = toolpinApi();
    const request = { uri: uri.toString(), position: { line: position.line, character: position.character } };
    const refused = await client!.sendRequest<RepinResult>('toolpin/repin', { ...request, expectedLive: shown.live });
    assert.equal(refused.applied, false, `the re-pin of the reviewed hash must be refused: ${JSON.stringify(refused)}`);
    assert.ok(!refused.applied);
    assert.match(refused.reason, /changed after your review/);
    assert.ok(refused.reason.includes(ECHO_PIN.V2) && refused.reason.includes(ECHO_PIN.V3), refused.reason);
    assert.ok(document.getText().includes(ECHO_PIN.REFERENCE), 'the document is untouched');

    // 4. Approving what the server serves now applies.
    const accepted = await client!.sendRequest<RepinResult>('toolpin/repin', { ...request, expectedLive: ECHO_PIN.V3 });
    assert.equal(accepted.applied, true, JSON.stringify(accepted));
    assert.ok(accepted.applied);
    const edit = await client!.protocol2CodeConverter.asWorkspaceEdit(accepted.edit);
    const cleared = diagnosticsAfter(uri, (all) => !all.some((d) => codeOf(d) === 'TP400'), 'TP400 to clear after the reviewed re-pin');
    assert.equal(await vscode.workspace.applyEdit(edit), true);
    assert.ok(document.getText().includes(`"${ECHO_PIN.V3}"`), 'the pin is the reviewed live hash');
    await cleared;
  });
});
