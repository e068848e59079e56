/**
 * Pins kept in another module (`import { PINS } from './pins'`), in the editor, through the real
 * built language server over stdio and the fixture MCP server: the drift is on the use in the
 * importer; the hover and the review's details say where the pin is written; the quick fix and "Re-pin all" edit that
 * module and leave the importer alone; and when the module changes (an edit in the editor, or a
 * change on disk reported by the file watcher), the importer's diagnostics are computed again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DidChangeWatchedFilesNotification, FileChangeType, type PublishDiagnosticsParams, type TextDocumentEdit, type TextEdit, type WorkspaceEdit } from 'vscode-languageserver-protocol';
import { startTestServer, type TestServer } from '../support/lspClient';
import { ECHO_SCHEMA_PIN } from '../support/referenceVectors';
import { createWorkspace, fixtureServer, type WorkspaceFixture } from '../support/workspaceFixture';

const STALE = 'fnv1a64:0000000000000000';
const STEPS = `import { mcpInvoke$ } from '@loom/plugin-mcp';
import { PINS } from './pins';

export const shout = mcpInvoke$('shout', { toolName: 'echo_upper', server: 'demo', expectedSchemaHash: PINS.echo });
`;
const pins = (echo: string): string => `export const PINS = {\n  echo: '${echo}',\n} as const;\n`;
const USE_LINE = 3;
const USE_CHARACTER = STEPS.split('\n')[USE_LINE]!.indexOf('PINS.echo');

function drifts(params: PublishDiagnosticsParams): PublishDiagnosticsParams['diagnostics'] {
  return params.diagnostics.filter((diagnostic) => diagnostic.code === 'TP400');
}

describe('pins imported from another module, in the editor', () => {
  let server: TestServer;
  let workspace: WorkspaceFixture;
  let stepsUri: string;
  let pinsUri: string;

  before(async () => {
    workspace = createWorkspace('toolpin-imported-', { '.vscode/mcp.json': { servers: { demo: fixtureServer() } }, 'steps.ts': STEPS, 'pins.ts': pins(STALE) });
    stepsUri = workspace.uriOf('steps.ts');
    pinsUri = workspace.uriOf('pins.ts');
    server = await startTestServer({ rootUri: workspace.uri, capabilities: { workspace: { workspaceEdit: { documentChanges: true } } } });
  });

  after(async () => {
    await server.stop();
    workspace.remove();
  });

  /** The next publication for `uri` after the publications seen so far that satisfies `accept`. */
  function next(uri: string, accept: (params: PublishDiagnosticsParams) => boolean): Promise<PublishDiagnosticsParams> {
    const mark = server.published.length;
    return server.diagnostics(uri, (params) => server.published.indexOf(params) >= mark && accept(params), 30_000);
  }

  test('the drift is on the use; the hover names the defining module; the quick fix and Re-pin all edit only it', async () => {
    server.open(stepsUri, STEPS, 'typescript');
    const published = await server.diagnostics(stepsUri, (params) => drifts(params).length === 1, 30_000);
    const drift = drifts(published)[0]!;
    assert.deepEqual(drift.range, { start: { line: USE_LINE, character: USE_CHARACTER }, end: { line: USE_LINE, character: USE_CHARACTER + 'PINS.echo'.length } });
    assert.ok(!published.diagnostics.some((diagnostic) => diagnostic.code === 'TP110'), 'the imported pin is read, not "computed"');

    const hover = await server.hoverText(stepsUri, { line: USE_LINE, character: USE_CHARACTER + 6 });
    assert.match(hover, /drifted/);
    assert.match(hover, /Written in `pins\.ts:2:9`/);

    const details = (await server.connection.sendRequest('toolpin/pinDetails', { uri: stepsUri, position: { line: USE_LINE, character: USE_CHARACTER + 6 } })) as { state: string; writtenIn?: string } | null;
    assert.equal(details?.state, 'drifted');
    assert.equal(details?.writtenIn, 'pins.ts:2:9', 'the review names the module that writes the pin');

    const actions = await server.codeActions(stepsUri, drift.range, [drift]);
    const repin = actions.find((action) => action.title.startsWith('Re-pin "echo_upper"'));
    assert.ok(repin, `a re-pin is offered; got ${actions.map((action) => action.title).join(', ')}`);
    const changes = ((repin.edit as WorkspaceEdit).documentChanges ?? []) as TextDocumentEdit[];
    const edited = changes.filter((change) => 'textDocument' in change && change.edits.length > 0);
    assert.deepEqual(
      edited.map((change) => [change.textDocument.uri, (change.edits as TextEdit[]).map((edit) => [edit.range.start.line, edit.range.start.character, edit.newText])]),
      [[pinsUri, [[1, 8, `'${ECHO_SCHEMA_PIN}'`]]]],
      'only the literal in pins.ts, in its own quotes',
    );

    const all = (await server.connection.sendRequest('toolpin/repinEdits', { uri: stepsUri })) as { edit: WorkspaceEdit | null; repins: number };
    assert.equal(all.repins, 1);
    const allChanges = ((all.edit?.documentChanges ?? []) as TextDocumentEdit[]).filter((change) => 'textDocument' in change && change.edits.length > 0);
    assert.deepEqual(allChanges.map((change) => change.textDocument.uri), [pinsUri]);
  });

  test('an edit of the defining module in the editor analyzes the importer again', async () => {
    server.open(pinsUri, pins(STALE), 'typescript');
    const verified = next(stepsUri, (params) => drifts(params).length === 0);
    server.change(pinsUri, 2, [{ text: pins(ECHO_SCHEMA_PIN) }]);
    const published = await verified;
    assert.deepEqual(published.diagnostics, [], 'the pin now matches');
  });

  test('a change of the defining module on disk (file watcher) analyzes the importer again', async () => {
    workspace.write('pins.ts', pins(ECHO_SCHEMA_PIN));
    server.close(pinsUri);
    // The editor no longer holds it: the disk's text is read, then changed behind the server's back.
    const drifted = next(stepsUri, (params) => drifts(params).length === 1);
    workspace.write('pins.ts', pins(STALE));
    await server.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: pinsUri, type: FileChangeType.Changed }] });
    const published = await drifted;
    assert.match(String(drifts(published)[0]!.message), /echo_upper/);
  });
});
