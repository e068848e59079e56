/**
 * Toolpin's own completions, from the real built language server over stdio with the fixture MCP
 * server serving tools whose names need care (a hyphen and a dot, a quote and a backslash): every
 * item, applied in VS Code's insert mode and in its replace mode, leaves a document that parses,
 * writes the value exactly (escaped where JSON needs it) and leaves the cursor inside the value.
 * Each position is tried in an empty string, a partly typed string and where no value is written
 * yet, and in the awkward spots around those (an unterminated string, a missing comma).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findNodeAtOffset, parseTree } from 'jsonc-parser';
import type { CompletionItem } from 'vscode-languageserver-protocol';
import { applyCompletion, cursorProblem, marked, positionAt, syntaxErrors } from '../support/completionEdits';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';

const fixtureServer = path.join(repoRoot(), 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const TOOLS = [
  { name: 'echo_upper', description: 'Upper-case the text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'get-issue.v2', description: 'Read an issue.', inputSchema: { type: 'object', properties: { id: { type: 'integer' } } } },
  { name: 'say "hi" \\ now', description: 'A name that JSON must escape.', inputSchema: { type: 'object' } },
];
const NAMES = TOOLS.map((tool) => tool.name).sort();

let server: TestServer;
let workspace: string;
let blueprintUri: string;
let connectorUri: string;
const versions = new Map<string, number>();

function blueprint(input: string): string {
  return `{
  // Calls a tool of the demo server.
  "blueprint": "calls",
  "formatVersion": 1,
  "steps": [
    { "id": "call", "effect": "mcp.invoke", "input": ${input} }
  ]
}
`;
}

function connector(providerConfig: string): string {
  const transport = `"transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(fixtureServer)}, "--stdio", "--tools-file", "tools.json"] }`;
  return `{
  "name": "demo_tools",
  "provider": "mcp",
  "providerConfig": { ${transport}, ${providerConfig} }
}
`;
}

async function completeAt(uri: string, document: string): Promise<{ text: string; offset: number; items: CompletionItem[] }> {
  const { text, offset } = marked(document);
  const version = (versions.get(uri) ?? 1) + 1;
  versions.set(uri, version);
  server.change(uri, version, [{ text }]);
  const items = (await server.connection.sendRequest('textDocument/completion', { textDocument: { uri }, position: positionAt(text, offset) })) as CompletionItem[];
  return { text, offset, items };
}

/** The value at the cursor after the edit, and, when it is a member's value, the member's key. */
function completedAt(text: string, cursor: number): { value: unknown; key?: string } {
  const node = findNodeAtOffset(parseTree(text)!, cursor, true)!;
  const key = node.parent?.type === 'property' ? (node.parent.children![0]!.value as string) : undefined;
  return { value: node.value, key };
}

/**
 * Applies every item in both suggest modes and checks the result. `expect` says what the value
 * written must be: the item's label (a tool, server or pin), or for a key completion the label as
 * the key and a live tool pin as its value, or the label as the key of a member that has its value.
 */
async function checkEvery(uri: string, document: string, expected: string[] | RegExp, expect: 'label' | 'member' | 'key' = 'label'): Promise<void> {
  const { text, offset, items } = await completeAt(uri, document);
  const labels = items.map((item) => item.label).sort();
  if (Array.isArray(expected)) assert.deepEqual(labels, expected, `the items at ${JSON.stringify(document)}`);
  else assert.ok(labels.length === 1 && expected.test(labels[0]!), `one live pin at ${JSON.stringify(document)}: ${labels.join(', ')}`);
  for (const item of items) {
    for (const mode of ['insert', 'replace'] as const) {
      const applied = applyCompletion(text, offset, item, mode, false);
      const shown = `${JSON.stringify(item.label)} in ${mode} mode → ${JSON.stringify(applied.text)}`;
      assert.deepEqual(syntaxErrors(applied.text), [], shown);
      const completed = completedAt(applied.text, applied.cursor);
      if (expect === 'key') {
        // The member has its value already: the cursor stays in the completed key.
        assert.equal(completed.value, item.label, shown);
        continue;
      }
      assert.equal(cursorProblem(applied), undefined, shown);
      if (expect === 'label') assert.equal(completed.value, item.label, shown);
      else {
        assert.equal(completed.key, item.label, shown);
        assert.match(String(completed.value), /^sha256:[0-9a-f]{64}$/, shown);
      }
    }
  }
}

before(async () => {
  workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-completion-'));
  writeFileSync(path.join(workspace, 'tools.json'), JSON.stringify({ tools: TOOLS }));
  writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--tools-file', path.join(workspace, 'tools.json')] } } }));
  mkdirSync(path.join(workspace, 'flows'));
  blueprintUri = `file://${path.join(workspace, 'flows', 'calls.blueprint.jsonc')}`;
  connectorUri = `file://${path.join(workspace, 'demo.connector.jsonc')}`;
  const pinnedBlueprint = blueprint('{ "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "fnv1a64:0000000000000000" }');
  const pinnedConnector = connector(`"toolsSnapshot": { "echo_upper": "sha256:${'0'.repeat(64)}" }`);
  writeFileSync(path.join(workspace, 'flows', 'calls.blueprint.jsonc'), pinnedBlueprint);
  writeFileSync(path.join(workspace, 'demo.connector.jsonc'), pinnedConnector);
  // VS Code's capabilities: snippets are expanded, so an added comma can follow the cursor.
  server = await startTestServer({ rootUri: `file://${workspace}`, capabilities: { textDocument: { completion: { completionItem: { snippetSupport: true } } } } });
  server.open(blueprintUri, pinnedBlueprint);
  server.open(connectorUri, pinnedConnector);
  // Drift on the made-up pins means both servers have listed their tools.
  await server.diagnostics(blueprintUri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 20_000);
  await server.diagnostics(connectorUri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'), 20_000);
});

after(async () => {
  await server.stop();
  rmSync(workspace, { recursive: true, force: true });
});

describe('blueprint: toolName', () => {
  const cases: Array<[string, string]> = [
    ['an empty string', '{ "server": "demo", "toolName": "|" }'],
    ['a partial string', '{ "server": "demo", "toolName": "ec|" }'],
    ['the cursor inside a typed name', '{ "server": "demo", "toolName": "ec|ho" }'],
    ['no value yet', '{ "server": "demo", "toolName": | }'],
    ['no value yet, before another member and no comma', '{ "server": "demo", "toolName": |\n "arguments": {} }'],
    ['a bare word, not yet a string', '{ "server": "demo", "toolName": ec| }'],
    ['an unterminated string', '{ "server": "demo", "toolName": "ec|\n }'],
  ];
  for (const [name, input] of cases) test(name, () => checkEvery(blueprintUri, blueprint(input), NAMES));

  test('nothing is offered outside the value or for a toolName that is not the step input', async () => {
    assert.deepEqual((await completeAt(blueprintUri, blueprint('{ "toolName": "echo_upper"| }'))).items, []);
    assert.deepEqual((await completeAt(blueprintUri, blueprint('{ "toolName": |"echo_upper" }'))).items, []);
    assert.deepEqual((await completeAt(blueprintUri, blueprint('{ "toolName": "t", "arguments": { "toolName": "|" } }'))).items, []);
  });
});

describe('blueprint: server', () => {
  for (const [name, input] of [
    ['an empty string', '{ "toolName": "echo_upper", "server": "|" }'],
    ['a partial string', '{ "toolName": "echo_upper", "server": "de|" }'],
    ['no value yet', '{ "toolName": "echo_upper", "server": | }'],
  ] as const) {
    test(name, () => checkEvery(blueprintUri, blueprint(input), ['demo', 'demo_tools']));
  }
});

describe('blueprint: expectedSchemaHash', () => {
  const pin = /^fnv1a64:[0-9a-f]{16}$/;
  for (const [name, input] of [
    ['an empty string', '{ "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "|" }'],
    ['a partial string', '{ "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "fnv1a64:|" }'],
    ['the cursor inside a stale pin', '{ "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "fnv1a64:0000|000000000000" }'],
    ['no value yet', '{ "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": | }'],
    ['no value yet, a member after it', '{ "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": |, "arguments": {} }'],
    ['the pin of a name that needs escaping', '{ "server": "demo", "toolName": "say \\"hi\\" \\\\ now", "expectedSchemaHash": "|" }'],
  ] as const) {
    test(name, () => checkEvery(blueprintUri, blueprint(input), pin));
  }
});

describe('connector: include', () => {
  for (const [name, config] of [
    ['an empty string', '"include": ["|"]'],
    ['a partial string', '"include": ["ge|"]'],
    ['no value yet', '"include": [ | ]'],
    ['after an entry with no comma', '"include": [ "echo_upper" | ]'],
    ['before an entry with no comma', '"include": [ | "echo_upper" ]'],
  ] as const) {
    test(name, () => checkEvery(connectorUri, connector(config), NAMES));
  }
});

describe('connector: toolsSnapshot', () => {
  for (const [name, config] of [
    ['a key, an empty string', '"toolsSnapshot": { "|" }'],
    ['a key, a partial string', '"toolsSnapshot": { "ec|" }'],
    ['a key, no key yet', '"toolsSnapshot": { | }'],
    ['a key, no key yet, after a member with no comma', `"toolsSnapshot": { "echo_upper": "sha256:${'0'.repeat(64)}" | }`],
    ['a key, an unterminated string', '"toolsSnapshot": { "ec|\n }'],
  ] as const) {
    test(name, () => checkEvery(connectorUri, connector(config), NAMES, 'member'));
  }

  test('a key with its value already written completes the key alone', () => checkEvery(connectorUri, connector('"toolsSnapshot": { "ec|": "x" }'), NAMES, 'key'));

  test('a key of a connector with an include offers the included tools only', () =>
    checkEvery(connectorUri, connector('"include": ["get-issue.v2"], "toolsSnapshot": { | }'), ['get-issue.v2'], 'member'));

  const pin = /^sha256:[0-9a-f]{64}$/;
  for (const [name, config] of [
    ['a value, an empty string', '"toolsSnapshot": { "get-issue.v2": "|" }'],
    ['a value, a partial string', '"toolsSnapshot": { "get-issue.v2": "sha|" }'],
    ['a value, no value yet', '"toolsSnapshot": { "get-issue.v2": | }'],
    ['a value of a name that needs escaping', '"toolsSnapshot": { "say \\"hi\\" \\\\ now": "|" }'],
  ] as const) {
    test(name, () => checkEvery(connectorUri, connector(config), pin));
  }
});
