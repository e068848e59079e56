/**
 * The first open (issue 14, item 1), in a real VS Code window: a fresh window on a folder laid out
 * like examples/ (blueprints/ and connectors/ side by side, .jsonc files, a .mcp.json), where
 * server "demo" is declared only in .mcp.json and server "notes_tools" only in a connector file.
 * Only the blueprint is opened. Within 10 s the window must hold one drift diagnostic per drifted
 * pin, each naming its tool, and at no moment an unknown-server diagnostic (TP406, "no server
 * named", "no MCP server is configured") for any file: the blueprint must not be verified before
 * the connector files of its folder are known.
 *
 * This file runs only in its own window: test/host/run-code-server.mjs opens a second, fresh
 * window on a copy of test/host/first-open/ (adding the connector and .mcp.json, whose fixture
 * servers have already moved when they start) with TOOLPIN_HOST_SUITE=first-open, and index.ts
 * then loads this file alone. The main window never loads it.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { codeOf, describeDiagnostics, EXTENSION_ID, hostEnv } from './helpers';

/** How long after the blueprint is opened the drift must be shown: what a user waits at most. */
const WINDOW_MS = 10_000;

/** The pins of test/host/first-open/blueprints/triage.blueprint.jsonc that the moved servers drift. */
const DRIFTED = [
  { tool: 'echo_upper', server: 'demo' },
  { tool: 'add_numbers', server: 'notes_tools' },
] as const;

function isUnknownServer(diagnostic: vscode.Diagnostic): boolean {
  return codeOf(diagnostic) === 'TP406' || /no server named|no MCP server is configured/.test(diagnostic.message);
}

/** The line of the step that pins `tool`, found in the document (not a hard-coded number). */
function stepLine(document: vscode.TextDocument, tool: string): number {
  const at = document.getText().indexOf(`"toolName": "${tool}"`);
  assert.notEqual(at, -1, `the blueprint has no step for ${tool}`);
  return document.positionAt(at).line;
}

(hostEnv.suite === 'first-open' ? describe : describe.skip)('The first open of a blueprint in a fresh window', () => {
  it('shows one drift per drifted pin, naming the tool, within 10 s, and never an unknown server in any file', async function () {
    this.timeout(WINDOW_MS + 20_000);
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'no workspace folder is open (the launcher opens a copy of test/host/first-open/)');
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `extension ${EXTENSION_ID} is not installed in this host`);
    // Fresh: Toolpin activates on its languages only, and nothing of it is open yet.
    assert.equal(extension.isActive, false, 'Toolpin was already active: the window is not fresh');
    assert.deepEqual(
      vscode.workspace.textDocuments.filter((document) => /\.(blueprint|connector)\.jsonc?$/.test(document.uri.path)).map((document) => document.uri.path),
      [],
      'a blueprint or connector file was already open',
    );

    // The window's diagnostics, from before the open, at every change VS Code reports
    // (onDidChangeDiagnostics, which the extension host debounces by about 50 ms) and at every
    // 50 ms poll, each time over the whole window (getDiagnostics()), not only the blueprint. A
    // publication replaced in less than that could go unseen here; it would flash too briefly for
    // a user to see as well. test/lsp and test/nvim watch every single publication.
    const unknown: string[] = [];
    const timeline: string[] = [];
    const started = Date.now();
    const look = () => {
      for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) {
        for (const diagnostic of diagnostics.filter((d) => d.source === 'toolpin' && isUnknownServer(d))) {
          unknown.push(`${Date.now() - started} ms ${vscode.workspace.asRelativePath(uri)}: ${String(codeOf(diagnostic))} ${diagnostic.message}`);
        }
      }
    };
    const subscription = vscode.languages.onDidChangeDiagnostics((event) => {
      timeline.push(`${Date.now() - started} ms: ${event.uris.map((uri) => vscode.workspace.asRelativePath(uri)).join(', ')}`);
      look();
    });
    try {
      const blueprint = vscode.Uri.joinPath(folder.uri, 'blueprints', 'triage.blueprint.jsonc');
      const document = await vscode.workspace.openTextDocument(blueprint);
      await vscode.window.showTextDocument(document);
      const expected = DRIFTED.map(({ tool, server }) => ({ tool, server, line: stepLine(document, tool) })).sort((a, b) => a.line - b.line);

      const drift = () => vscode.languages.getDiagnostics(blueprint).filter((d) => d.source === 'toolpin' && codeOf(d) === 'TP400');
      const complete = () => {
        const seen = drift().map((d) => ({ line: d.range.start.line, tool: /tool "([^"]+)"/.exec(d.message)?.[1] }));
        return JSON.stringify(seen.sort((a, b) => a.line - b.line)) === JSON.stringify(expected.map(({ line, tool }) => ({ line, tool })));
      };
      // The whole window is watched, because "never within the window" cannot be established
      // earlier; polled as well as driven by the event. It ends early only once an unknown server
      // was seen (the test has failed). `completeAt` is when the drift was first complete.
      const deadline = started + WINDOW_MS;
      let completeAt: number | undefined;
      look();
      while (unknown.length === 0 && Date.now() < deadline) {
        if (completeAt === undefined && complete()) completeAt = Date.now() - started;
        await new Promise((resolve) => setTimeout(resolve, 50));
        look();
      }
      const elapsed = Date.now() - started;
      const all = vscode.languages
        .getDiagnostics()
        .map(([uri, diagnostics]) => `${vscode.workspace.asRelativePath(uri)}:\n  ${describeDiagnostics(diagnostics)}`)
        .join('\n');
      const report = `after ${elapsed} ms; diagnostics now:\n${all}\nchanges:\n${timeline.join('\n')}`;

      assert.deepEqual(unknown, [], `unknown-server diagnostics were shown, ${report}`);
      assert.ok(completeAt !== undefined && complete(), `the drift diagnostics were not complete within ${WINDOW_MS} ms, ${report}`);
      for (const { tool, server, line } of expected) {
        const [diagnostic] = drift().filter((d) => d.range.start.line === line);
        assert.ok(diagnostic, `no TP400 on the ${tool} pin, ${report}`);
        assert.match(diagnostic.message, new RegExp(`tool "${tool}" on server "${server}" changed since it was pinned`));
        assert.equal(diagnostic.severity, vscode.DiagnosticSeverity.Error);
      }
      // reverse_text (no "server", found on notes_tools only) is pinned right: nothing on its line.
      const reverseLine = stepLine(document, 'reverse_text');
      const onReverse = vscode.languages.getDiagnostics(blueprint).filter((d) => d.source === 'toolpin' && d.range.start.line === reverseLine);
      assert.deepEqual(onReverse.map((d) => d.message), [], `reverse_text is pinned right, ${report}`);
      console.log(`first open: the drift was complete ${completeAt ?? elapsed} ms after the blueprint was opened (${timeline.length} diagnostic change events in ${elapsed} ms)`);
    } finally {
      subscription.dispose();
    }
  });
});
