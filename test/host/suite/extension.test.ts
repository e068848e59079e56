/**
 * In-host tests: they run inside a real VS Code extension host (code-server here, desktop VS Code
 * through @vscode/test-electron elsewhere) against the workspace copied from test/host/workspace/.
 *
 * Waiting rules: never a fixed sleep. Diagnostics are awaited through
 * `vscode.languages.onDidChangeDiagnostics` (the current state is checked first, after
 * subscribing, so an early publication is not missed); activation, which has no event, is awaited
 * with a bounded poll of `Extension.isActive`.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

const EXTENSION_ID = 'toolpin.toolpin';
const LANGUAGE_ID = 'toolpin-blueprint';

/** Workspace file URI; the launcher opens a copy of test/host/workspace/ as the only folder. */
function workspaceFile(name: string): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open (the launcher must open the workspace copy)');
  return vscode.Uri.joinPath(folder.uri, name);
}

function toolpinDiagnostics(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'toolpin');
}

function codeOf(diagnostic: vscode.Diagnostic): string | number | undefined {
  const code = diagnostic.code;
  return typeof code === 'object' && code !== null ? code.value : code;
}

function describeDiagnostics(diagnostics: readonly vscode.Diagnostic[]): string {
  if (diagnostics.length === 0) return '(none)';
  return diagnostics
    .map((d) => {
      const r = d.range;
      return `${d.source}/${String(codeOf(d))} ${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character} ${d.message}`;
    })
    .join('\n  ');
}

/**
 * Resolves with the diagnostics of `uri` once `accept` returns true for them: checked at once
 * (after subscribing) and on every `onDidChangeDiagnostics` event that names `uri`. Rejects after
 * `timeoutMs` with what was last seen.
 */
function waitForDiagnostics(
  uri: vscode.Uri,
  accept: (all: vscode.Diagnostic[], changed: boolean) => boolean,
  timeoutMs: number,
  what: string,
): { done: Promise<vscode.Diagnostic[]>; dispose(): void } {
  const key = uri.toString();
  let subscription: vscode.Disposable | undefined;
  let timer: NodeJS.Timeout | undefined;
  const dispose = () => {
    subscription?.dispose();
    if (timer) clearTimeout(timer);
  };
  const done = new Promise<vscode.Diagnostic[]>((resolve, reject) => {
    const check = (changed: boolean) => {
      const all = vscode.languages.getDiagnostics(uri);
      if (accept(all, changed)) {
        dispose();
        resolve(all);
      }
    };
    subscription = vscode.languages.onDidChangeDiagnostics((event) => {
      if (event.uris.some((u) => u.toString() === key)) check(true);
    });
    timer = setTimeout(() => {
      dispose();
      reject(
        new Error(
          `timed out after ${timeoutMs} ms waiting for ${what} on ${uri.path}; diagnostics now:\n  ` +
            describeDiagnostics(vscode.languages.getDiagnostics(uri)),
        ),
      );
    }, timeoutMs);
    check(false);
  });
  return { done, dispose };
}

/** Polls a condition that has no event, at a short interval, for at most `timeoutMs`. */
async function pollUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

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

  it('publishes no toolpin error or warning for good.blueprint.jsonc', async () => {
    const uri = workspaceFile('good.blueprint.jsonc');
    // The server publishes (an empty array, for a clean file) after every check, and VS Code fires
    // onDidChangeDiagnostics for that URI even when the array is empty. So: subscribe, open, wait
    // for the first change event naming this URI, then assert. This file is opened for the first
    // time here, so the event cannot have happened before the subscription.
    const wait = waitForDiagnostics(uri, (_all, changed) => changed, 20_000, 'the first diagnostics publication');
    try {
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document);
      await wait.done;
    } finally {
      wait.dispose();
    }

    // The workspace configures no MCP server, so its pins are "cannot verify" (information, TP403):
    // that is not a finding against the file. Anything of warning or error severity would be.
    const problems = toolpinDiagnostics(uri).filter((diagnostic) => diagnostic.severity <= vscode.DiagnosticSeverity.Warning);
    assert.deepEqual(problems, [], `expected no toolpin error or warning, got:\n  ${describeDiagnostics(problems)}`);
    assert.ok(toolpinDiagnostics(uri).every((diagnostic) => diagnostic.code === 'TP403'), 'only "cannot verify" information remains');
  });

  it(`gives the opened blueprint documents the language id ${LANGUAGE_ID}`, async () => {
    for (const name of ['broken.blueprint.jsonc', 'good.blueprint.jsonc']) {
      const document = await vscode.workspace.openTextDocument(workspaceFile(name));
      assert.equal(document.languageId, LANGUAGE_ID, `${name} has language id ${document.languageId}`);
    }
  });
});
