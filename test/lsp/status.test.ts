/**
 * `toolpin/status` and the code lenses follow the published diagnostics: right after an edit that
 * fixes a drifted pin, the next status says one drifted pin fewer (within a second of the
 * publication), and a client that supports `workspace/codeLens/refresh` is asked for fresh lenses,
 * which then agree too. Real built server over stdio, the fixture MCP server serving echo_upper
 * with a rewritten schema (so both pins at the reference hash are drifted).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CodeLens, PublishDiagnosticsParams } from 'vscode-languageserver-protocol';
import type { StatusParams } from '../../server/src/protocol';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';
import { waitFor } from '../support/waiting';

const fixtureServer = path.join(repoRoot(), 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const REFERENCE = 'fnv1a64:a76fe8d6d023fca0';

function step(id: string, pin: string): string {
  return `    { "id": "${id}", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "${pin}", "arguments": { "text": "hi" } } }`;
}

function blueprint(first: string, second: string): string {
  return `{\n  "blueprint": "shout-twice",\n  "formatVersion": 1,\n  "steps": [\n${step('one', first)},\n${step('two', second)}\n  ]\n}\n`;
}

const drifted = (params: PublishDiagnosticsParams): number => params.diagnostics.filter((diagnostic) => diagnostic.code === 'TP400').length;

describe('status and code lenses follow the published diagnostics', () => {
  let server: TestServer;
  let workspace: string;
  let uri: string;
  const statuses: Array<{ at: number; status: StatusParams }> = [];
  const refreshes: number[] = [];

  before(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-status-'));
    const control = path.join(workspace, 'control.json');
    writeFileSync(control, JSON.stringify({ version: 1, rewrite: { echo_upper: { inputSchema: { type: 'object', properties: { text: { type: 'string' }, shout: { type: 'boolean' } }, required: ['text'] } } } }));
    writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--control-file', control] } } }));
    uri = `file://${path.join(workspace, 'shout.blueprint.jsonc')}`;
    writeFileSync(path.join(workspace, 'shout.blueprint.jsonc'), blueprint(REFERENCE, REFERENCE));
    server = await startTestServer({ rootUri: `file://${workspace}`, capabilities: { workspace: { codeLens: { refreshSupport: true } } } });
    server.connection.onNotification('toolpin/status', (status: StatusParams) => {
      statuses.push({ at: Date.now(), status });
    });
    server.connection.onRequest('workspace/codeLens/refresh', () => {
      refreshes.push(Date.now());
      return null;
    });
  });

  after(async () => {
    await server.stop();
    rmSync(workspace, { recursive: true, force: true });
  });

  const lensTitles = async (): Promise<string[]> => {
    const lenses = (await server.connection.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as CodeLens[];
    return lenses.map((lens) => lens.command?.title ?? '');
  };

  test('an edit that fixes one of two drifted pins: the next status says 1 drifted within a second', async () => {
    const text = blueprint(REFERENCE, REFERENCE);
    server.open(uri, text);
    const before = await server.diagnostics(uri, (params) => drifted(params) === 2, 20_000);
    await waitFor('a status with 2 drifted pins', () => statuses.some(({ status }) => status.pins.drifted === 2));
    const live = /live (fnv1a64:[0-9a-f]{16})/.exec(String(before.diagnostics.find((diagnostic) => diagnostic.code === 'TP400')!.message))?.[1];
    assert.ok(live, 'the drift message names the live hash');
    assert.ok((await lensTitles()).includes('2 pins · 2 drifted · verified just now'), String(await lensTitles()));

    // The edit a re-pin quick fix makes: the first pin becomes the live hash.
    const line = text.split('\n').findIndex((candidate) => candidate.includes('"id": "one"'));
    const character = text.split('\n')[line]!.indexOf(REFERENCE);
    const statusesBefore = statuses.length;
    const refreshesBefore = refreshes.length;
    server.change(uri, 2, [{ range: { start: { line, character }, end: { line, character: character + REFERENCE.length } }, text: live }]);
    // The waiter resolves as the publication arrives, so the time right after it is the arrival's.
    await server.diagnostics(uri, (params) => params.version === 2 && drifted(params) === 1, 10_000);
    const publishedAt = Date.now();
    await waitFor('a status with 1 drifted pin', () => statuses.slice(statusesBefore).some(({ status }) => status.pins.drifted === 1));
    const next = statuses.slice(statusesBefore).find(({ status }) => status.pins.drifted === 1)!;
    const lag = next.at - publishedAt;
    console.log(`  status followed the publication after ${lag} ms`);
    assert.ok(lag < 1000, `the status followed the publication within a second (took ${lag} ms)`);
    // No status after the fix claims a count the diagnostics no longer show.
    assert.deepEqual(
      statuses.slice(statusesBefore).map(({ status }) => status.pins.drifted),
      statuses.slice(statusesBefore).map(() => 1),
      'every status sent after the fix says 1 drifted',
    );
    assert.equal(next.status.pins.verified, 1);

    // The code lenses: the server asked for a refresh after the publication, and they agree.
    await waitFor('a workspace/codeLens/refresh request', () => refreshes.length > refreshesBefore);
    assert.ok(refreshes[refreshesBefore]! - publishedAt < 1000, 'the refresh followed the publication within a second');
    const titles = await lensTitles();
    assert.ok(titles.includes('2 pins · 1 drifted · verified just now'), `lens titles: ${titles.join(' | ')}`);
    assert.ok(titles.includes('Re-pin all'), 'one pin is still drifted, so "Re-pin all" stays');
  });

  test('closing the document: the disk copy (both pins drifted) is published again, and the status follows it', async () => {
    const statusesBefore = statuses.length;
    const publishedBefore = server.published.length;
    server.close(uri);
    await waitFor('the disk copy published after the close', () => server.published.slice(publishedBefore).some((params) => params.uri === uri && params.version === undefined && drifted(params) === 2), 10_000);
    await waitFor('a status with the disk copy\'s 2 drifted pins', () => statuses.slice(statusesBefore).some(({ status }) => status.pins.drifted === 2));
  });
});

describe('editing a connector re-checks the blueprints of its folder, and the status follows', () => {
  let server: TestServer;
  let workspace: string;
  const statuses: StatusParams[] = [];

  before(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-status-connector-'));
    server = await startTestServer({ rootUri: `file://${workspace}` });
    server.connection.onNotification('toolpin/status', (status: StatusParams) => {
      statuses.push(status);
    });
  });

  after(async () => {
    await server.stop();
    rmSync(workspace, { recursive: true, force: true });
  });

  test('a blueprint naming a server only a connector defines: fixing the connector\'s name clears TP406 there', async () => {
    const connector = (name: string) => `{
  "name": "${name}",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(fixtureServer)}, "--stdio"] },
    "toolsSnapshot": {}
  }
}
`;
    const connectorUri = `file://${path.join(workspace, 'demo.connector.jsonc')}`;
    const blueprintUri = `file://${path.join(workspace, 'shout.blueprint.jsonc')}`;
    const blueprintText = `{\n  "blueprint": "shout",\n  "formatVersion": 1,\n  "steps": [\n${step('one', REFERENCE).replace('"server": "demo"', '"server": "demo_tools"')}\n  ]\n}\n`;
    writeFileSync(path.join(workspace, 'demo.connector.jsonc'), connector('demo_toolz'));
    writeFileSync(path.join(workspace, 'shout.blueprint.jsonc'), blueprintText);
    server.open(connectorUri, connector('demo_toolz'));
    server.open(blueprintUri, blueprintText);
    await server.diagnostics(blueprintUri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP406'), 20_000);

    // Only the connector is edited; the blueprint's text stays as it is.
    const publishedBefore = server.published.length;
    server.change(connectorUri, 2, [{ range: { start: { line: 1, character: 11 }, end: { line: 1, character: 21 } }, text: 'demo_tools' }]);
    await waitFor(
      'the blueprint published again without TP406, its pin verified against the connector\'s server',
      () => server.published.slice(publishedBefore).some((params) => params.uri === blueprintUri && !params.diagnostics.some((diagnostic) => diagnostic.code === 'TP406')),
      20_000,
    );
    await waitFor('a status counting the verified pin', () => statuses.some((status) => status.pins.verified === 1 && status.servers.some((entry) => entry.name === 'demo_tools' && entry.state === 'listed')), 20_000);

    // Breaking the name again needs no listing at all: the blueprint is re-checked because its
    // folder's connector changed, and its pin is no longer verified.
    const publishedAfterFix = server.published.length;
    const statusesAfterFix = statuses.length;
    server.change(connectorUri, 3, [{ range: { start: { line: 1, character: 11 }, end: { line: 1, character: 21 } }, text: 'demo_toolz' }]);
    await waitFor(
      'the blueprint published again with TP406',
      () => server.published.slice(publishedAfterFix).some((params) => params.uri === blueprintUri && params.diagnostics.some((diagnostic) => diagnostic.code === 'TP406')),
      10_000,
    );
    await waitFor('a status with no verified pin', () => statuses.slice(statusesAfterFix).some((status) => status.pins.verified === 0));
  });
});
