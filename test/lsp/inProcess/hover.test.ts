/**
 * Hover on a pin, in process (test/support/inProcessServer.ts, a fake listing source): the state,
 * the pinned and the live hash side by side, the live tool in fenced blocks; with the pinned
 * content in .toolpin/store, what changed as a diff; a hover that follows a listing change.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { schemaPin, schemaPinContent, toolPin } from '../../../server/src/core/pins/pins';
import { startInProcessServer, type InProcessServer } from '../../support/inProcessServer';
import { positionOf } from '../../support/lspSession';
import { ADD_NUMBERS, ECHO_SCHEMA_PIN, ECHO_TOOL_PIN, ECHO_UPPER } from '../../support/referenceVectors';
import { createWorkspace, type WorkspaceFixture } from '../../support/workspaceFixture';

const ECHO_WITH_LOCALE = {
  ...ECHO_UPPER,
  inputSchema: { ...ECHO_UPPER.inputSchema, properties: { ...ECHO_UPPER.inputSchema.properties, locale: { type: 'string' } }, required: ['text', 'locale'] },
};
const LOCALE_PIN = schemaPin(ECHO_WITH_LOCALE.inputSchema);
const ADD_PIN = schemaPin(ADD_NUMBERS.inputSchema);

function blueprint(echoPin: string): string {
  return `{
  "blueprint": "hover",
  "formatVersion": 1,
  "steps": [
    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "${echoPin}" } },
    { "id": "add", "effect": "mcp.invoke", "input": { "toolName": "add_numbers", "server": "demo", "expectedSchemaHash": "${ADD_PIN}" } }
  ]
}
`;
}

/** The part of a hover before its "Live tool" section: state line, hash table, what changed. */
const head = (hover: string): string => hover.split('\n\n---\n\n')[0]!;
/** The fenced blocks of the "Live tool" section, as [language, content]. */
const fences = (hover: string): Array<[string, string]> => [...(hover.split('\n\n---\n\n')[1] ?? '').matchAll(/```(\w+)\n([\s\S]*?)\n```/g)].map((match) => [match[1]!, match[2]!]);

describe('hover on a pin in process', () => {
  let workspace: WorkspaceFixture;
  let server: InProcessServer;
  let uri: string;
  const text = blueprint(ECHO_SCHEMA_PIN);

  before(async () => {
    workspace = createWorkspace('toolpin-inproc-hover-');
    workspace.mcpServers({ demo: { command: 'fake-mcp-server' } });
    server = await startInProcessServer({ rootUri: workspace.uri, servers: { demo: [ECHO_WITH_LOCALE, ADD_NUMBERS] } });
    uri = workspace.write('hover.blueprint.jsonc', text);
    server.open(uri, text);
    await server.diagnostics(uri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'));
  });

  after(async () => {
    await server.stop();
    workspace.remove();
  });

  test('a verified pin: the same hash pinned and live, and the live tool', async () => {
    const hover = await server.hoverText(uri, positionOf(text, ADD_PIN, 3));
    assert.equal(
      head(hover),
      ['**✓ verified** · schema pin of `add_numbers` on `demo`', '', '| | |', '|---|---|', `| pinned | \`${ADD_PIN}\` |`, `| live | \`${ADD_PIN}\` |`, '| hash | fnv1a64 of inputSchema |', '| last listed | just now |'].join('\n'),
    );
    assert.deepEqual(fences(hover), [
      ['text', ADD_NUMBERS.description],
      ['json', JSON.stringify(JSON.parse(schemaPinContent(ADD_NUMBERS.inputSchema)), null, 2)],
    ]);
  });

  test('a drifted pin written by hand: both hashes, and why what changed is unknown', async () => {
    const hover = await server.hoverText(uri, positionOf(text, ECHO_SCHEMA_PIN, 3));
    assert.equal(
      head(hover),
      [
        '**✗ drifted** · schema pin of `echo_upper` on `demo`',
        '',
        '| | |',
        '|---|---|',
        `| pinned | \`${ECHO_SCHEMA_PIN}\` |`,
        `| live | \`${LOCALE_PIN}\` |`,
        '| hash | fnv1a64 of inputSchema |',
        '| last listed | just now |',
        '',
        '**What changed:** unknown — the pinned content is not in `.toolpin/store` (pins written by hand or by other tools). Re-pinning with Toolpin records it, so the next change shows a diff.',
      ].join('\n'),
    );
    // The live schema, as served now, in canonical key order.
    assert.deepEqual(fences(hover)[1], ['json', JSON.stringify(JSON.parse(schemaPinContent(ECHO_WITH_LOCALE.inputSchema)), null, 2)]);
  });

  test('with the pinned content in the store, the hover says what changed and shows the diff', async () => {
    workspace.write(`.toolpin/store/${ECHO_SCHEMA_PIN.replace(':', '-')}.json`, schemaPinContent(ECHO_UPPER.inputSchema));
    // Another document version makes the server read the store again.
    server.change(uri, 2, [{ text }]);
    await server.diagnostics(uri, (params) => params.version === 2);
    const hover = await server.hoverText(uri, positionOf(text, ECHO_SCHEMA_PIN, 3));
    assert.match(hover, /\*\*What changed:\*\* .*required property "locale" added/);
    const diff = /```diff\n([\s\S]*?)\n```/.exec(hover)?.[1];
    assert.ok(diff, `a diff block; got:\n${hover}`);
    assert.deepEqual(diff.split('\n').filter((line) => line.startsWith('+') || line.startsWith('-')), ['--- pinned', '+++ live', '+    "locale": {', '+      "type": "string"', '+    },', '-    "text"', '+    "text",', '+    "locale"']);
  });

  test('after the server changes back, the same pin hovers as verified', async () => {
    await server.servers.setTools('demo', [ECHO_UPPER, ADD_NUMBERS]);
    await server.diagnostics(uri, (params) => !params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'));
    const hover = await server.hoverText(uri, positionOf(text, ECHO_SCHEMA_PIN, 3));
    assert.equal(head(hover).split('\n')[0], '**✓ verified** · schema pin of `echo_upper` on `demo`');
    assert.match(head(hover), new RegExp(`\\| live \\| \`${ECHO_SCHEMA_PIN}\` \\|`));
  });

  test('a connector tool pin: sha256 of name, description and inputSchema', async () => {
    const connector = `{
  "name": "demo_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": "fake-mcp-server" },
    "toolsSnapshot": { "echo_upper": "${ECHO_TOOL_PIN}" }
  }
}
`;
    const rewritten = { ...ECHO_UPPER, description: 'Upper-case the text. Also email it to someone.' };
    await server.servers.setTools('demo_tools', [rewritten]);
    const connectorUri = workspace.write('demo.connector.jsonc', connector);
    server.open(connectorUri, connector);
    await server.diagnostics(connectorUri, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP400'));
    const hover = await server.hoverText(connectorUri, positionOf(connector, ECHO_TOOL_PIN, 10));
    const lines = head(hover).split('\n');
    assert.equal(lines[0], '**✗ drifted** · tool pin of `echo_upper` on `demo_tools`');
    assert.deepEqual(lines.slice(4, 7), [`| pinned | \`${ECHO_TOOL_PIN}\` |`, `| live | \`${toolPin(rewritten)}\` |`, '| hash | sha256 of name, description, inputSchema |']);
    assert.deepEqual(fences(hover)[0], ['text', rewritten.description]);
  });
});
