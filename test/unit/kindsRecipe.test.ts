/**
 * The recipe "add a document kind" (ARCHITECTURE.md) holds: a kind declared in one module and
 * registered (here, test-only: `*.toypin.json` files that hold one connector instance, read by the
 * connector reader) reaches discovery, the watched files, the client's selector, the language
 * server's diagnostics and the CLI's check report, with nothing else changed (issue 24).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { Minimatch } from 'minimatch';
import { analyzeConnector } from '../../server/src/core/documents/connector';
import { analyzeDocument, connectorOf, documentKindOf } from '../../server/src/core/documents/documents';
import type { PinKind } from '../../server/src/core/documents/kinds/kind';
import { clientSelectors, registerDocumentKind, watchedFileGlobs } from '../../server/src/core/documents/kinds/registry';
import { checkCommand } from '../../server/src/cli/checkCommand';
import type { CliIo } from '../../server/src/cli/io';
import { findDocuments } from '../../server/src/engine/nodeFileSystem';
import { startInProcessServer } from '../support/inProcessServer';
import { parseCheckReport } from '../support/checkReport';
import { ECHO_UPPER } from '../support/referenceVectors';
import { createWorkspace, FIXTURE_SERVER, type WorkspaceFixture } from '../support/workspaceFixture';

/** A kind that exists only in this test. */
const TOY_KIND: PinKind = {
  id: 'toyPin',
  role: 'pins',
  title: 'A test-only kind: one connector instance per *.toypin.json file',
  patterns: ['*.toypin.json'],
  examples: ['tools/demo.toypin.json'],
  recognises: (name) => name.toLowerCase().endsWith('.toypin.json'),
  watchedFiles: ['**/*.toypin.json'],
  selectors: [{ scheme: 'file', language: 'json', pattern: '**/*.toypin.json' }],
  languages: [],
  activationEvents: ['workspaceContains:**/*.toypin.json'],
  settings: [],
  analyze: (text) => analyzeConnector(text),
  servers: 'declares',
  pinEdits: 'json',
  repins: 'write',
};

const STALE_PIN = `sha256:${'7'.repeat(64)}`;

/** A toy document: one instance of the fixture server pinning echo_upper at `pin`. */
function toyDocument(command: string, args: readonly string[], pin: string): string {
  return `${JSON.stringify({ name: 'toy_tools', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command, args }, include: ['echo_upper'], toolsSnapshot: { echo_upper: pin } } }, null, 2)}\n`;
}

function capture(cwd: string): { io: CliIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const io: CliIo = {
    readFile: (file) => readFile(file, 'utf8'),
    readStdin: async () => '',
    stdout: (text) => void (out += text),
    stderr: (text) => void (err += text),
    stderrIsTerminal: false,
    cwd,
  };
  return { io, out: () => out, err: () => err };
}

describe('a test-only kind reaches every consumer through the registry', () => {
  let workspace: WorkspaceFixture;
  let registration: { dispose(): void } | undefined;

  before(() => {
    workspace = createWorkspace('toolpin-toy-kind-');
    workspace.write('tools/demo.toypin.json', toyDocument(process.execPath, [FIXTURE_SERVER, '--stdio'], STALE_PIN));
  });
  after(() => {
    registration?.dispose();
    workspace.remove();
  });

  test('unregistered, the file is nobody\'s document', async () => {
    assert.equal(documentKindOf('tools/demo.toypin.json'), undefined);
    assert.deepEqual((await findDocuments([workspace.root])).files, []);
  });

  test('registered: recognised, found, watched and selected', async () => {
    registration = registerDocumentKind(TOY_KIND);
    assert.equal(documentKindOf(workspace.path('tools/demo.toypin.json')), 'toyPin');
    assert.deepEqual((await findDocuments([workspace.root])).files, [workspace.path('tools/demo.toypin.json')]);
    assert.ok(watchedFileGlobs().some((glob) => new Minimatch(glob, { dot: true }).match('tools/demo.toypin.json')), watchedFileGlobs().join(', '));
    assert.ok(clientSelectors().some((selector) => selector.pattern === '**/*.toypin.json'));
    const analysis = analyzeDocument('toyPin', toyDocument('node', [], STALE_PIN), 'demo.toypin.json');
    assert.equal(analysis.kind, 'toyPin');
    assert.deepEqual(connectorOf(analysis)?.instances.map((instance) => instance.name?.value), ['toy_tools']);
  });

  test('the CLI check report has the document and its drift, verified against the live server', async () => {
    const { io, out, err } = capture(workspace.root);
    const status = await checkCommand(io, { paths: ['.'], format: 'json', trust: true, env: process.env });
    assert.equal(status, 1, `${out()}\n${err()}`);
    const report: { files: Array<{ path: string; problems: Array<{ code: string; message: string }> }> } = parseCheckReport(out());
    assert.deepEqual(report.files.map((file) => file.path), ['tools/demo.toypin.json']);
    assert.deepEqual(report.files[0]?.problems.map((found) => found.code), ['TP400'], JSON.stringify(report.files[0]?.problems));
  });

  test('the language server publishes its diagnostics: a structure problem and the drift', async () => {
    const server = await startInProcessServer({ rootUri: workspace.uri, servers: { toy_tools: [ECHO_UPPER] } });
    try {
      const text = toyDocument('fake-mcp-server', [], STALE_PIN).replace('"provider": "mcp"', '"provider": "mcp", "surprise": 1');
      const uri = workspace.uriOf('tools/open.toypin.json');
      server.open(uri, text);
      const published = await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'));
      assert.deepEqual(published.diagnostics.map((diagnostic) => diagnostic.code).sort(), ['TP102', 'TP400']);
    } finally {
      await server.stop();
    }
  });
});
