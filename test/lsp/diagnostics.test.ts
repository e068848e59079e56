import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROBLEM_CODES } from '../../server/src/core/problems';
import { ServerInfoRequest } from '../../server/src/protocol';
import { compact, notifyConfiguration, repoRoot, startTestServer, type TestServer } from '../support/lspClient';

const BROKEN = `{
  "blueprint": "triage",
  "formatVersion": 1,
  "steps": [
    { "id": "open-issue", "effect": "mcp.invoke",
      "input": { "toolName": "create_issue", "expectedSchemaHash": "fnv1a64:123" } },
    { "id": "open-issue", "effect": "noop" }
  ]
}
`;
// Line 5 (0-based) holds the malformed pin; line 6 the duplicate id.
const EXPECTED_BROKEN: Array<[string, number, number, number, number, number]> = [
  ['TP204', 1, 5, 67, 5, 80],
  ['TP200', 1, 6, 12, 6, 24],
];

describe('language server over a real stdio connection', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.stop();
  });

  test('didOpen of a broken blueprint publishes exact codes and ranges', async () => {
    const uri = 'file:///ws/broken.blueprint.jsonc';
    server.open(uri, BROKEN);
    const published = await server.diagnostics(uri);
    assert.deepEqual(compact(published.diagnostics), EXPECTED_BROKEN);
    assert.equal(published.version, 1);
    for (const diagnostic of published.diagnostics) assert.equal(diagnostic.source, 'toolpin');
    assert.match(String(published.diagnostics[1]!.message), /duplicate step id "open-issue"/);
  });

  test('didChange (incremental) that fixes the file clears the diagnostics', async () => {
    const uri = 'file:///ws/fixing.blueprint.jsonc';
    server.open(uri, BROKEN);
    await server.diagnostics(uri, (params) => params.diagnostics.length === 2);
    // Rename the second id and complete the pin, as two incremental edits in one change.
    server.change(uri, 2, [
      { range: { start: { line: 6, character: 13 }, end: { line: 6, character: 23 } }, text: 'notify' },
      { range: { start: { line: 5, character: 76 }, end: { line: 5, character: 79 } }, text: 'a76fe8d6d023fca0' },
    ]);
    const published = await server.diagnostics(uri, (params) => params.version === 2);
    // No error or warning is left; the pin itself cannot be verified without a configured server,
    // which is information, not a finding.
    assert.deepEqual(compact(published.diagnostics), [['TP403', 3, 5, 67, 5, 93]]);
    assert.match(String(published.diagnostics[0]!.message), /no MCP server is configured/);
  });

  test('a burst of changes is checked once, for the last version', async () => {
    const uri = 'file:///ws/burst.blueprint.jsonc';
    server.open(uri, BROKEN);
    await server.diagnostics(uri, (params) => params.version === 1);
    for (let version = 2; version <= 20; version++) {
      server.change(uri, version, [{ text: BROKEN.replace('"noop"', `"noop${version}"`) }]);
    }
    const last = await server.diagnostics(uri, (params) => params.version === 20);
    assert.deepEqual(compact(last.diagnostics), EXPECTED_BROKEN);
    const forThisUri = server.published.filter((params) => params.uri === uri);
    assert.ok(forThisUri.length <= 3, `expected the debounce to drop stale versions, saw ${forThisUri.length} publications`);
  });

  test('didClose publishes an empty list', async () => {
    const uri = 'file:///ws/closing.connector.json';
    server.open(uri, '{ "name": "Bad Name", "provider": "mcp" }');
    const first = await server.diagnostics(uri);
    assert.deepEqual(first.diagnostics.map((diagnostic) => diagnostic.code), ['TP300', 'TP104']);
    const before = server.published.length;
    server.close(uri);
    const cleared = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= before && params.diagnostics.length === 0);
    assert.deepEqual(cleared.diagnostics, []);
  });

  test('a connector file gets connector checks', async () => {
    const uri = 'file:///ws/tools.connector.jsonc';
    const text = `{
  "name": "github_tools", "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": "node", "cwd": "./x" },
    "include": ["a"],
    "toolsSnapshot": { "b": "sha256:${'0'.repeat(64)}" }
  }
}`;
    server.open(uri, text);
    const published = await server.diagnostics(uri);
    assert.deepEqual(compact(published.diagnostics), [
      ['TP303', 2, 3, 55, 3, 60],
      ['TP305', 1, 5, 23, 5, 26],
    ]);
  });

  test('files that are not Toolpin documents are never published', async () => {
    server.open('file:///ws/package.json', '{ "name": 1, }');
    const marker = 'file:///ws/marker.blueprint.json';
    server.open(marker, '{}');
    await server.diagnostics(marker);
    assert.equal(server.published.filter((params) => params.uri === 'file:///ws/package.json').length, 0);
  });

  test('garbage input never takes the server down', async () => {
    const uri = 'file:///ws/garbage.blueprint.json';
    server.open(uri, '\u0000{{{]]]"\\u12' + 'x'.repeat(1000));
    const published = await server.diagnostics(uri);
    assert.ok(published.diagnostics.length > 0);
    assert.ok(published.diagnostics.some((diagnostic) => diagnostic.code === 'TP100'), 'the syntax error is reported');
    const info = await server.connection.sendRequest(ServerInfoRequest);
    assert.ok(info.version.length > 0);
  });

  test('toolpin/serverInfo lists every problem code, with its severity and title, and nothing else', async () => {
    const info = await server.connection.sendRequest(ServerInfoRequest);
    const expected = Object.entries(PROBLEM_CODES).map(([code, entry]) => ({ code, severity: entry.severity, title: entry.title }));
    assert.deepEqual(info.problemCodes, expected);
    // The table itself is checked against docs/diagnostics.md (test/unit/docs.test.ts); here, that
    // every band reached the client and no code came twice.
    const codes = info.problemCodes.map((entry) => entry.code);
    assert.equal(new Set(codes).size, codes.length, 'no code is listed twice');
    assert.deepEqual([...new Set(codes.map((code) => code.slice(0, 3)))].sort(), ['TP1', 'TP2', 'TP3', 'TP4']);
  });
});

describe('settings', () => {
  test('toolpin.validate.enable = false clears diagnostics; true brings them back', async () => {
    const server = await startTestServer();
    try {
      const uri = 'file:///ws/settings.blueprint.jsonc';
      server.open(uri, BROKEN);
      await server.diagnostics(uri, (params) => params.diagnostics.length === 2);
      let seen = server.published.length;
      notifyConfiguration(server, { validate: { enable: false, debounceMs: 0 } });
      await server.diagnostics(uri, (params) => server.published.indexOf(params) >= seen && params.diagnostics.length === 0);
      seen = server.published.length;
      notifyConfiguration(server, { validate: { enable: true, debounceMs: 0 } });
      const back = await server.diagnostics(uri, (params) => server.published.indexOf(params) >= seen);
      assert.deepEqual(compact(back.diagnostics), EXPECTED_BROKEN);
    } finally {
      await server.stop();
    }
  });

  test('settings are pulled with workspace/configuration when the client supports it', async () => {
    const server = await startTestServer({ configuration: true, settings: { validate: { enable: false } } });
    try {
      const uri = 'file:///ws/pulled.blueprint.jsonc';
      // Opening happens after initialized; the pulled setting turns validation off.
      await new Promise((resolve) => setImmediate(resolve));
      server.open(uri, BROKEN);
      const published = await server.diagnostics(uri, (params) => params.diagnostics.length === 0, 5000);
      assert.deepEqual(published.diagnostics, []);
    } finally {
      await server.stop();
    }
  });
});

describe('the CLI runs the same server: toolpin lsp --stdio', () => {
  test('publishes the same diagnostics', async () => {
    const server = await startTestServer({ command: [path.join(repoRoot(), 'dist', 'cli.js'), 'lsp', '--stdio'] });
    try {
      const uri = 'file:///ws/cli.blueprint.jsonc';
      server.open(uri, BROKEN);
      const published = await server.diagnostics(uri);
      assert.deepEqual(compact(published.diagnostics), EXPECTED_BROKEN);
    } finally {
      await server.stop();
    }
    assert.notEqual(server.process.exitCode, null, 'the server process ended after exit');
  });
});
