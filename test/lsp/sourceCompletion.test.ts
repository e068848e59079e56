/**
 * Completion inside the literals of `mcpInvoke$` and `defineConnector` calls in a TypeScript
 * module, through the real built language server over stdio, with the fixture MCP server serving
 * tools whose names need care in every quote (a hyphen and a dot; a double quote and a backslash;
 * a single quote, a backtick and `${`). Every item, applied in both of VS Code's suggest modes,
 * leaves a module whose literal at the cursor reads back (with Toolpin's own source reader) as
 * exactly the item's label, in the quote it was written with, and whose text before and after
 * that literal is unchanged.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CompletionItem } from 'vscode-languageserver-protocol';
import type { JsonNode } from '../../server/src/core/json/jsonDocument';
import { readSource } from '../../server/src/core/documents/source/sourceReader';
import { applyCompletion, marked, positionAt } from '../support/completionEdits';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';

const fixtureServer = path.join(repoRoot(), 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const TOOLS = [
  { name: 'echo_upper', description: 'Upper-case the text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'get-issue.v2', description: 'Read an issue.', inputSchema: { type: 'object', properties: { id: { type: 'integer' } } } },
  { name: 'say "hi" \\ now', description: 'Needs escaping in double quotes.', inputSchema: { type: 'object' } },
  { name: "it's `${x}`", description: 'Needs escaping in single quotes and backticks.', inputSchema: { type: 'object' } },
];
const NAMES = TOOLS.map((tool) => tool.name).sort();
const ZERO_TOOL_PIN = `sha256:${'0'.repeat(64)}`;

let server: TestServer;
let workspace: string;
let uri: string;
let version = 1;

function module(stepOptions: string, providerConfig: string): string {
  const transport = `transport: { kind: 'stdio', command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(fixtureServer)}, '--stdio', '--tools-file', 'tools.json'] }`;
  return `// A connector and a step, written for the completion tests.
import { defineConnector } from '@objectstack/spec/integration';
import * as loom from '@loom/plugin-mcp';

export const demo = defineConnector({
  name: 'demo',
  provider: 'mcp',
  providerConfig: {
    ${transport},
    ${providerConfig}
  },
});

/* The step calls the demo server. */
export const step = loom.mcpInvoke$('call#1', { ${stepOptions} }); // trailing comment
`;
}

const PINNED_STEP = "toolName: 'echo_upper', server: 'demo', expectedSchemaHash: 'fnv1a64:0000000000000000'";
const PINNED_CONFIG = `toolsSnapshot: { echo_upper: '${ZERO_TOOL_PIN}' },`;

/** Every string node of the calls a module holds, keys included. */
function stringNodes(text: string): JsonNode[] {
  const reading = readSource(text, 'pins.ts');
  const found: JsonNode[] = [];
  const stack: JsonNode[] = [...reading.invocations.flatMap((call) => (call.options ? [call.options] : [])), ...reading.connectors.flatMap((call) => (call.config ? [call.config] : []))];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'string') found.push(node);
    stack.push(...(node.children ?? []));
  }
  return found;
}

async function completeAt(document: string): Promise<{ text: string; offset: number; items: CompletionItem[] }> {
  const { text, offset } = marked(document);
  server.change(uri, ++version, [{ text }]);
  const items = (await server.connection.sendRequest('textDocument/completion', { textDocument: { uri }, position: positionAt(text, offset) })) as CompletionItem[];
  return { text, offset, items };
}

/**
 * Completes at the marked cursor, checks the labels, then applies every item in both modes: the
 * literal that held the cursor reads back as the label, keeps its quote (an unquoted key stays
 * unquoted when the name is an identifier), and nothing outside it changed.
 */
async function checkEvery(document: string, expected: string[] | RegExp): Promise<void> {
  const { text, offset, items } = await completeAt(document);
  const labels = items.map((item) => item.label).sort();
  if (Array.isArray(expected)) assert.deepEqual(labels, expected, `the items at ${JSON.stringify(document)}`);
  else assert.ok(labels.length === 1 && expected.test(labels[0]!), `one live pin at ${JSON.stringify(document)}: ${labels.join(', ')}`);
  const literal = stringNodes(text).find((node) => offset >= node.offset && offset <= node.offset + node.length)!;
  assert.ok(literal, 'the cursor is in a literal the reader sees');
  const quote = /["'`]/.test(text[literal.offset]!) ? text[literal.offset] : undefined;
  for (const item of items) {
    for (const mode of ['insert', 'replace'] as const) {
      const applied = applyCompletion(text, offset, item, mode, false).text;
      const shown = `${JSON.stringify(item.label)} in ${mode} mode → ${JSON.stringify(applied)}`;
      const written = stringNodes(applied).find((node) => node.offset === literal.offset);
      assert.ok(written, `a literal still starts where the completed one did: ${shown}`);
      assert.equal(written.value, item.label, shown);
      const writtenQuote = /["'`]/.test(applied[written.offset]!) ? applied[written.offset] : undefined;
      if (quote) assert.equal(writtenQuote, quote, `the quote stays: ${shown}`);
      else assert.equal(writtenQuote, /^[A-Za-z_$][\w$]*$/.test(item.label) ? undefined : "'", `an unquoted key stays unquoted when it can: ${shown}`);
      assert.equal(applied.slice(0, literal.offset), text.slice(0, literal.offset), `nothing before the literal changed: ${shown}`);
      assert.equal(applied.slice(written.offset + written.length), text.slice(literal.offset + literal.length), `nothing after the literal changed: ${shown}`);
    }
  }
}

before(async () => {
  workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-source-completion-'));
  writeFileSync(path.join(workspace, 'tools.json'), JSON.stringify({ tools: TOOLS }));
  uri = `file://${path.join(workspace, 'pins.ts')}`;
  const pinned = module(PINNED_STEP, PINNED_CONFIG);
  writeFileSync(path.join(workspace, 'pins.ts'), pinned);
  server = await startTestServer({ rootUri: `file://${workspace}` });
  server.open(uri, pinned, 'typescript');
  // Drift on both made-up pins means the server has listed its tools.
  await server.diagnostics(uri, (params) => params.diagnostics.filter((diagnostic) => diagnostic.code === 'TP400').length === 2, 30_000);
});

after(async () => {
  await server.stop();
  rmSync(workspace, { recursive: true, force: true });
});

describe('source: mcpInvoke$ options', () => {
  for (const [name, options] of [
    ['toolName, an empty single-quoted literal', "toolName: '|', server: 'demo'"],
    ['toolName, a partly typed double-quoted literal', 'toolName: "ec|", server: \'demo\''],
    ['toolName, a backtick literal with the cursor inside a name', "toolName: `ec|ho`, server: 'demo'"],
    ['toolName, no server named', "toolName: '|'"],
  ] as const) {
    test(name, () => checkEvery(module(options, PINNED_CONFIG), NAMES));
  }

  test('server: the servers the workspace declares', () => checkEvery(module("toolName: 'echo_upper', server: 'de|'", PINNED_CONFIG), ['demo']));

  test('expectedSchemaHash: the live schema pin of the step’s tool', () =>
    checkEvery(module("toolName: 'echo_upper', server: 'demo', expectedSchemaHash: \"fnv1a64:00|00\"", PINNED_CONFIG), /^fnv1a64:[0-9a-f]{16}$/));

  test('expectedSchemaHash of a tool whose name needs escaping', () =>
    checkEvery(module("toolName: 'it\\'s `${x}`', server: 'demo', expectedSchemaHash: `|`", PINNED_CONFIG), /^fnv1a64:[0-9a-f]{16}$/));

  test('nothing is offered outside the literals Toolpin reads', async () => {
    assert.deepEqual((await completeAt(module("toolName: |'echo_upper', server: 'demo'", PINNED_CONFIG))).items, [], 'before the opening quote');
    assert.deepEqual((await completeAt(module("toolName: 'echo_upper'|, server: 'demo'", PINNED_CONFIG))).items, [], 'after the closing quote');
    assert.deepEqual((await completeAt(module("toolName: 'echo_upper', server: 'demo', arguments: { toolName: '|' }", PINNED_CONFIG))).items, [], 'a toolName in the arguments');
    assert.deepEqual((await completeAt(module(PINNED_STEP, `${PINNED_CONFIG}\n    label: '|',`))).items, [], 'a providerConfig member Toolpin does not complete');
  });
});

describe('source: defineConnector providerConfig', () => {
  test('an include entry', () => checkEvery(module(PINNED_STEP, `include: ['echo_upper', 'ge|'],\n    ${PINNED_CONFIG}`), NAMES));

  test('a quoted toolsSnapshot key', () => checkEvery(module(PINNED_STEP, `toolsSnapshot: { "|": '${ZERO_TOOL_PIN}' },`), NAMES));

  test('an unquoted toolsSnapshot key stays unquoted when the name allows', () => checkEvery(module(PINNED_STEP, `toolsSnapshot: { ec|: '${ZERO_TOOL_PIN}' },`), NAMES));

  test('a toolsSnapshot key of a connector with an include: the included tools only', () =>
    checkEvery(module(PINNED_STEP, `include: ['get-issue.v2'],\n    toolsSnapshot: { '|': '${ZERO_TOOL_PIN}' },`), ['get-issue.v2']));

  test('a toolsSnapshot value: the live tool pin', () => checkEvery(module(PINNED_STEP, `toolsSnapshot: { 'get-issue.v2': '|' },`), /^sha256:[0-9a-f]{64}$/));
});
