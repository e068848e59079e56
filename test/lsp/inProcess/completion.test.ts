/**
 * Completion from live listings, in process (test/support/inProcessServer.ts, a fake listing
 * source): tool names inside `toolName` (replacing exactly the string's content), server names
 * inside `server`, the live pin inside `expectedSchemaHash`, and a tool the server starts serving
 * later is offered as soon as the listing changes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CompletionItem } from 'vscode-languageserver-protocol';
import { startInProcessServer, type InProcessServer } from '../../support/inProcessServer';
import { positionOf, textAt } from '../../support/lspSession';
import { ECHO_SCHEMA_PIN, ECHO_UPPER, FIXTURE_DEFAULT_TOOLS, REVERSE_TEXT } from '../../support/referenceVectors';
import { createWorkspace, type WorkspaceFixture } from '../../support/workspaceFixture';

const TEXT = `{
  "blueprint": "complete",
  "formatVersion": 1,
  "steps": [
    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_up", "server": "demo", "expectedSchemaHash": "fnv1a64:0000000000000000" } }
  ]
}
`;

const labels = (items: CompletionItem[]): string[] => items.map((item) => item.label);
/** The range a completion item's edit replaces, as the text it covers. */
const replaced = (item: CompletionItem, text = TEXT): string => textAt(text, (item.textEdit as { range: Parameters<typeof textAt>[1] }).range);

describe('completion in process', () => {
  let workspace: WorkspaceFixture;
  let server: InProcessServer;
  let uri: string;

  before(async () => {
    workspace = createWorkspace('toolpin-inproc-completion-');
    workspace.mcpServers({ demo: { command: 'fake-mcp-server' }, other: { command: 'fake-mcp-server' } });
    server = await startInProcessServer({ rootUri: workspace.uri, servers: { demo: FIXTURE_DEFAULT_TOOLS, other: [REVERSE_TEXT] } });
    uri = workspace.write('complete.blueprint.jsonc', TEXT);
    server.open(uri, TEXT);
    // Completion answers from the listings held now: wait until the step was verified (the
    // tool "echo_up" is not served), which needed demo's listing.
    await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP401'));
  });

  after(async () => {
    await server.stop();
    workspace.remove();
  });

  test('a tool name: the tools of the step\'s server, in its order, replacing the string\'s content', async () => {
    const items = await server.completion(uri, positionOf(TEXT, '"echo_up"', 4));
    assert.deepEqual(labels(items), ['echo_upper', 'add_numbers', 'reverse_text']);
    const echo = items[0]!;
    assert.equal(echo.detail, 'tool on demo');
    assert.equal(echo.documentation, ECHO_UPPER.description);
    assert.equal((echo.textEdit as { newText: string }).newText, 'echo_upper');
    assert.equal(replaced(echo), 'echo_up', 'the edit replaces what is typed inside the quotes, not the quotes');
  });

  test('a server name: every configured server', async () => {
    const items = await server.completion(uri, positionOf(TEXT, '"demo"', 1));
    assert.deepEqual(labels(items).sort(), ['demo', 'other']);
  });

  test('a pin: the live schema pin of the step\'s tool, not the stale one written', async () => {
    // The step names "echo_up", which is not served: write the full name first.
    const text = TEXT.replace('"echo_up"', '"echo_upper"');
    server.change(uri, 2, [{ text }]);
    await server.diagnostics(uri, (params) => params.version === 2);
    const items = await server.completion(uri, positionOf(text, '"fnv1a64:', 1));
    assert.deepEqual(labels(items), [ECHO_SCHEMA_PIN]);
    assert.equal(replaced(items[0]!, text), 'fnv1a64:0000000000000000', 'the edit replaces the whole stale pin inside the quotes');
    server.change(uri, 3, [{ text: TEXT }]);
    await server.diagnostics(uri, (params) => params.version === 3);
  });

  test('a tool the server starts serving is offered once the listing changes', async () => {
    const added = { name: 'echo_lower', description: 'Lower-case the input text.', inputSchema: { type: 'object' } };
    await server.servers.setTools('demo', [...FIXTURE_DEFAULT_TOOLS, added]);
    const items = await server.completion(uri, positionOf(TEXT, '"echo_up"', 4));
    assert.deepEqual(labels(items), ['echo_upper', 'add_numbers', 'reverse_text', 'echo_lower']);
  });
});
