/**
 * In-host tests that run in every launcher mode (trusted and untrusted workspace): activation, a
 * structure diagnostic, a clean file, language ids. They run inside a real VS Code extension host
 * (code-server here, desktop VS Code through @vscode/test-electron elsewhere) against the workspace
 * copied from test/host/workspace/. Helpers and waiting rules: helpers.ts.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import {
  codeOf,
  describeDiagnostics,
  diagnosticsWhere,
  EXTENSION_ID,
  hostEnv,
  hoverText,
  LANGUAGE_ID,
  pollUntil,
  positionOf,
  toolpinDiagnostics,
  waitForDiagnostics,
  withCode,
  workspaceFile,
} from './helpers';

/** The range of the string literal (quotes included) of the `n`-th (0-based) `"id": "<id>"`. */
function rangeOfNthIdLiteral(document: vscode.TextDocument, id: string, n: number): vscode.Range {
  const text = document.getText();
  const pattern = new RegExp(`"id"\\s*:\\s*("${id}")`, 'g');
  const matches = [...text.matchAll(pattern)];
  assert.ok(matches.length > n, `fixture ${document.uri.path} has ${matches.length} "id": "${id}" entries, need ${n + 1}`);
  const match = matches[n]!;
  const start = match.index! + match[0].length - match[1]!.length;
  return new vscode.Range(document.positionAt(start), document.positionAt(start + match[1]!.length));
}

function rangeTuple(range: vscode.Range): [number, number, number, number] {
  return [range.start.line, range.start.character, range.end.line, range.end.character];
}

describe('Toolpin in a real VS Code extension host', () => {
  // Editors stay open at the end on purpose: the launcher's final screenshot shows them. Nothing
  // is saved (files.autoSave is off) and the workspace is a throw-away copy.

  it('is installed and activates when a blueprint document is opened', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `extension ${EXTENSION_ID} is not installed in this host`);
    console.log(
      `  (${EXTENSION_ID} ${String(extension.packageJSON.version)} from ${extension.extensionUri.toString()}; ` +
        `launcher mode: ${process.env.TOOLPIN_HOST_MODE ?? 'none'}; active before opening: ${extension.isActive})`,
    );
    // The launcher says which copy must be under test: the repository (development mode) or the
    // folder the VSIX was installed into (--vsix). A stale install must not pass for the real one.
    // (Unset when another launcher, e.g. runTestElectron, runs the suite.)
    const mode = process.env.TOOLPIN_HOST_MODE;
    const expectedPath = process.env.TOOLPIN_HOST_EXTENSION_PATH;
    if (mode) {
      assert.ok(expectedPath, `TOOLPIN_HOST_MODE=${mode} but TOOLPIN_HOST_EXTENSION_PATH is not set`);
      assert.equal(extension.extensionUri.fsPath, expectedPath, `${EXTENSION_ID} is loaded from the wrong folder (mode ${mode})`);
    }

    const document = await vscode.workspace.openTextDocument(workspaceFile('broken.blueprint.jsonc'));
    await vscode.window.showTextDocument(document);

    await pollUntil(() => extension.isActive, 20_000, `${EXTENSION_ID} to activate`);
    assert.equal(extension.isActive, true);
  });

  it('runs with the workspace trust the launcher set up', () => {
    // Trusted: --disable-workspace-trust (run-code-server.mjs) or test-electron's equivalent.
    // Untrusted: trust enabled and the folder never trusted (run-code-server.mjs --untrusted).
    assert.equal(vscode.workspace.isTrusted, hostEnv.trust === 'trusted', `vscode.workspace.isTrusted is ${vscode.workspace.isTrusted} in the ${hostEnv.trust} mode`);
  });

  it('reports TP200 on the second "open-issue" id of broken.blueprint.jsonc', async () => {
    const uri = workspaceFile('broken.blueprint.jsonc');
    const wait = waitForDiagnostics(
      uri,
      (all) => all.some((d) => d.source === 'toolpin' && codeOf(d) === 'TP200'),
      20_000,
      'a toolpin TP200 diagnostic',
    );
    let document: vscode.TextDocument;
    try {
      // Already open from the first test (opened here when that test is filtered out by grep).
      document = await vscode.workspace.openTextDocument(uri);
      await wait.done;
    } finally {
      wait.dispose();
    }

    const duplicates = toolpinDiagnostics(uri).filter((d) => codeOf(d) === 'TP200');
    assert.equal(duplicates.length, 1, `expected exactly one TP200, got:\n  ${describeDiagnostics(duplicates)}`);
    const diagnostic = duplicates[0]!;
    assert.equal(diagnostic.severity, vscode.DiagnosticSeverity.Error);
    assert.deepEqual(
      rangeTuple(diagnostic.range),
      rangeTuple(rangeOfNthIdLiteral(document, 'open-issue', 1)),
      'TP200 must cover the second "open-issue" string literal, quotes included',
    );
    assert.match(diagnostic.message, /duplicate/i);
    assert.match(diagnostic.message, /open-issue/);
  });

  it('publishes no toolpin error or warning for good.blueprint.jsonc, and verifies its pins when trusted', async () => {
    const uri = workspaceFile('good.blueprint.jsonc');
    // The server publishes (an empty array, for a clean file) after every check, and VS Code fires
    // onDidChangeDiagnostics for that URI even when the array is empty. So: subscribe, open, wait
    // for the first change event naming this URI, then assert. (The workspace scan may have
    // published it already; then the open publishes it again.)
    const wait = waitForDiagnostics(uri, (_all, changed) => changed, 20_000, 'the first diagnostics publication');
    let document: vscode.TextDocument;
    try {
      document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document);
      await wait.done;
    } finally {
      wait.dispose();
    }

    if (hostEnv.trust === 'untrusted') {
      // No server may be started: every pin is "cannot verify" (information), and says why.
      const unverified = await diagnosticsWhere(uri, (all) => all.filter((d) => codeOf(d) === 'TP403').length === 2, 'two TP403 (cannot verify)');
      for (const diagnostic of unverified) {
        assert.equal(codeOf(diagnostic), 'TP403', describeDiagnostics(unverified));
        assert.equal(diagnostic.severity, vscode.DiagnosticSeverity.Information);
        assert.match(diagnostic.message, /not trusted/);
      }
    } else {
      // Both pins match the fixture server "demo". Verified pins publish nothing, so the positive
      // proof is the hover, asked once the server's listing has arrived (drifted.blueprint.jsonc
      // shows TP400 only from a listing).
      await diagnosticsWhere(workspaceFile('drifted.blueprint.jsonc'), (all) => all.some((d) => codeOf(d) === 'TP400'), 'TP400 (the listing of "demo" arrived)');
      for (const pin of ['fnv1a64:d21cac35ccab9a0e', 'fnv1a64:3712870629e19d1d']) {
        const hover = await hoverText(uri, positionOf(document, pin, 0, 3));
        assert.match(hover, /verified/, `hover on ${pin}:\n${hover}`);
      }
      assert.deepEqual(withCode(uri, 'TP403'), [], 'nothing is "cannot verify" with a trusted workspace and a running server');
    }
    const problems = toolpinDiagnostics(uri).filter((diagnostic) => diagnostic.severity <= vscode.DiagnosticSeverity.Warning);
    assert.deepEqual(problems, [], `expected no toolpin error or warning, got:\n  ${describeDiagnostics(problems)}`);
  });

  it(`gives the opened blueprint documents the language id ${LANGUAGE_ID}`, async () => {
    for (const name of ['broken.blueprint.jsonc', 'good.blueprint.jsonc']) {
      const document = await vscode.workspace.openTextDocument(workspaceFile(name));
      assert.equal(document.languageId, LANGUAGE_ID, `${name} has language id ${document.languageId}`);
    }
  });
});
