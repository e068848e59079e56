/**
 * The contributed commands, run the way the command palette runs them (trusted workspace only).
 * Runs after drift.test.ts (index.ts orders the files), so echo_upper may be at control version 2
 * or 3: the tests read the live hash from the diagnostics instead of assuming one.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { codeOf, count, describeDiagnostics, diagnosticsAfter, diagnosticsWhere, ECHO_PIN, hostEnv, openAndActivate, pollUntil, requireLiveFixture, withCode, workspaceFile } from './helpers';

const LIVE_IN_MESSAGE = /live (fnv1a64:[0-9a-f]{16})/;

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

(hostEnv.trust === 'trusted' ? describe : describe.skip)('Toolpin commands (trusted workspace)', () => {
  let pidFile: string;

  before(async () => {
    pidFile = requireLiveFixture().pidFile;
    await openAndActivate('many-drifted.blueprint.jsonc');
  });

  it('contributes every command it declares', async () => {
    const all = new Set(await vscode.commands.getCommands(true));
    for (const id of [
      'toolpin.refresh',
      'toolpin.repinFile',
      'toolpin.reviewRepin',
      'toolpin.comparePinnedAndLive',
      'toolpin.clearCache',
      'toolpin.setCredential',
      'toolpin.showOutput',
      'toolpin.showProblems',
    ]) {
      assert.ok(all.has(id), `${id} is registered`);
    }
  });

  it('toolpin.refresh lists the servers again and keeps the findings', async () => {
    const uri = workspaceFile('many-drifted.blueprint.jsonc');
    await diagnosticsWhere(uri, (all) => all.filter((d) => codeOf(d) === 'TP400').length === 2, 'two TP400');
    await vscode.commands.executeCommand('toolpin.refresh');
    await vscode.commands.executeCommand('toolpin.refresh', ['demo']);
    await diagnosticsWhere(uri, (all) => all.filter((d) => codeOf(d) === 'TP400').length === 2, 'two TP400 after the refresh');
  });

  it('toolpin.clearCache ends the server session; a new server process lists again', async () => {
    const uri = workspaceFile('many-drifted.blueprint.jsonc');
    const readPid = () => Number(fs.readFileSync(pidFile, 'utf8').trim());
    const before = readPid();
    assert.ok(before > 0 && isRunning(before), `the fixture server (pid ${before}) runs before the cache is cleared`);
    await vscode.commands.executeCommand('toolpin.clearCache');
    // Clearing closes the session, which ends the server's process; the re-check that follows
    // starts a new one (the fixture writes its --pid-file as it starts).
    await pollUntil(() => !isRunning(before), 10_000, `the old fixture server (pid ${before}) to end`);
    await pollUntil(() => fs.existsSync(pidFile) && readPid() !== before && isRunning(readPid()), 15_000, 'a new fixture server process');
    // refresh resolves once the server has been listed again.
    await vscode.commands.executeCommand('toolpin.refresh');
    await diagnosticsWhere(uri, (all) => all.filter((d) => codeOf(d) === 'TP400').length === 2, 'two TP400 after clearing the cache');
  });

  it('toolpin.repinFile re-pins every drifted pin of the file', async () => {
    const uri = workspaceFile('many-drifted.blueprint.jsonc');
    // The command asks the server for its fix-all, which needs a listing: refresh resolves only
    // once the server has been listed (the diagnostics the client holds may be older than that).
    await vscode.commands.executeCommand('toolpin.refresh');
    const drifted = await diagnosticsWhere(uri, (all) => all.filter((d) => codeOf(d) === 'TP400').length === 2, 'two TP400').then((all) =>
      all.filter((d) => codeOf(d) === 'TP400'),
    );
    const liveHashes = new Set(drifted.map((d) => LIVE_IN_MESSAGE.exec(d.message)?.[1]));
    assert.equal(liveHashes.size, 1, `both drifts name one live hash:\n  ${describeDiagnostics(drifted)}`);
    const liveHash = [...liveHashes][0]!;
    assert.ok(liveHash, describeDiagnostics(drifted));
    assert.notEqual(liveHash, ECHO_PIN.REFERENCE);

    const cleared = diagnosticsAfter(uri, (all) => !all.some((d) => codeOf(d) === 'TP400'), 'every TP400 to clear after "Re-pin All Drifted in File"');
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document);
    const repinned = await vscode.commands.executeCommand<number>('toolpin.repinFile', uri);
    assert.equal(repinned, 2, 'the command reports two re-pins');
    const text = document.getText();
    assert.equal(count(text, ECHO_PIN.REFERENCE), 0, 'no reference pin is left');
    assert.equal(count(text, `"${liveHash}"`), 2, 'both echo_upper steps carry the live pin');
    assert.equal(count(text, '"fnv1a64:d21cac35ccab9a0e"'), 1, 'the verified add_numbers pin is untouched');
    await cleared;
    assert.deepEqual(withCode(uri, 'TP400'), []);
  });

  it('toolpin.showOutput shows the Toolpin output channel and leaves the focus in the editor', async () => {
    const editor = vscode.window.activeTextEditor;
    assert.ok(editor, 'the blueprint of the tests before is the active editor');
    // A shown output channel's text reaches the extension host as a document of the "output"
    // scheme named after the channel (VS Code syncs every text model it opens).
    const isToolpinOutput = (document: vscode.TextDocument): boolean => document.uri.scheme === 'output' && /toolpin/i.test(decodeURIComponent(document.uri.toString()));
    await vscode.commands.executeCommand('toolpin.showOutput');
    try {
      await pollUntil(() => vscode.workspace.textDocuments.some(isToolpinOutput), 10_000, 'the Toolpin output channel to be shown');
    } catch (error) {
      const outputs = vscode.workspace.textDocuments.filter((document) => document.uri.scheme === 'output').map((document) => document.uri.toString());
      assert.fail(`${String(error)}; output documents open: ${outputs.join(', ') || 'none'}`);
    }
    // The command shows the channel with preserveFocus: typing goes on in the editor.
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), editor.document.uri.toString(), 'the focus stays in the editor');
  });

  it('toolpin.showProblems opens a quick pick, which closes on workbench.action.closeQuickOpen', async () => {
    // The command resolves only when its quick pick closes: it must still be pending while the
    // quick pick is up, then settle without an error once it is closed. Closing is retried
    // (bounded) because the quick pick may not be up yet at the first attempt.
    let settled = false;
    const running = Promise.resolve(vscode.commands.executeCommand('toolpin.showProblems')).finally(() => {
      settled = true;
    });
    // Nothing closes the quick pick for half a second: a command that returned without waiting
    // for it would have settled by then (an error would reject here and fail the test).
    const early = await Promise.race([running.then(() => 'settled' as const), new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 500))]);
    assert.equal(early, 'pending', 'toolpin.showProblems settled before its quick pick was closed: it did not wait for the quick pick');
    const deadline = Date.now() + 10_000;
    while (!settled) {
      assert.ok(Date.now() < deadline, 'toolpin.showProblems did not settle within 10 s of closing its quick pick');
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      await Promise.race([running, new Promise((resolve) => setTimeout(resolve, 100))]);
    }
    await running;
  });
});
