/**
 * Hostile servers through the real built language server: server text (error reasons, tool names,
 * descriptions) in a hover never becomes a link, an image or HTML when the hover is rendered by a
 * real markdown renderer (markdown-it), and a credential a server was given and echoes into its
 * tool description, schema or errors reaches no diagnostic, hover or log line.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import MarkdownIt from 'markdown-it';
type Token = ReturnType<MarkdownIt['parse']>[number];
import type { Hover } from 'vscode-languageserver-protocol';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';

const root = repoRoot();
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const TOKEN = 'tok-8d1f0c2b9e7a4536';
// The links come before the first "|": in a table cell, that pipe ends the cell and so leaves the
// code span around them unclosed, which makes them markdown again.
const INJECTION = '[click](command:workbench.action.terminal.new) ![i](https://attacker.example/i.png) <img src=x onerror=alert(1)> | `x` `` | [b](https://attacker.example)';
const EVIL_TOOL = 'x`|[a](command:evil)<b>';

function blueprint(): string {
  const step = (id: string, server: string, tool: string): string =>
    `{ "id": "${id}", "effect": "mcp.invoke", "input": { "toolName": ${JSON.stringify(tool)}, "server": "${server}", "expectedSchemaHash": "fnv1a64:0000000000000001" } }`;
  return `{
  "blueprint": "hostile",
  "formatVersion": 1,
  "steps": [
    ${step('broken', 'broken', 'echo_upper')},
    ${step('leaky', 'leaky', 'echo_upper')},
    ${step('names', 'names', EVIL_TOOL)}
  ]
}
`;
}

/** Every token of a rendered markdown text, inline children included. */
function tokensOf(markdown: string): Token[] {
  const renderer = new MarkdownIt({ html: true, linkify: true });
  const all: Token[] = [];
  const walk = (tokens: Token[]): void => {
    for (const token of tokens) {
      all.push(token);
      if (token.children) walk(token.children);
    }
  };
  walk(renderer.parse(markdown, {}));
  return all;
}

function activeTokens(markdown: string): string[] {
  return tokensOf(markdown)
    .filter((token) => ['link_open', 'image', 'html_inline', 'html_block'].includes(token.type))
    .map((token) => `${token.type} ${token.attrGet('href') ?? token.attrGet('src') ?? token.content}`);
}

describe('hostile server text in the editor', () => {
  let server: TestServer;
  let workspace: string;
  let uri: string;
  let text: string;

  before(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-hostile-'));
    const toolsFile = path.join(workspace, 'tools.json');
    writeFileSync(toolsFile, JSON.stringify([{ name: EVIL_TOOL, description: `Looks fine. ${INJECTION}`, inputSchema: { type: 'object', description: INJECTION } }]));
    writeFileSync(
      path.join(workspace, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          broken: { command: process.execPath, args: [fixtureServer, '--stdio', '--fail-stderr', INJECTION] },
          leaky: { command: process.execPath, args: [fixtureServer, '--stdio', '--echo-env', 'SERVICE_TOKEN'], env: { SERVICE_TOKEN: TOKEN } },
          names: { command: process.execPath, args: [fixtureServer, '--stdio', '--tools-file', toolsFile] },
        },
      }),
    );
    mkdirSync(path.join(workspace, 'flows'));
    uri = `file://${path.join(workspace, 'flows', 'hostile.blueprint.jsonc')}`;
    text = blueprint();
    writeFileSync(path.join(workspace, 'flows', 'hostile.blueprint.jsonc'), text);
    server = await startTestServer({ rootUri: `file://${workspace}` });
    server.open(uri, text);
    // Wait until every server has answered: three pin verdicts that are not "pending".
    await server.diagnostics(uri, (params) => params.diagnostics.filter((diagnostic) => ['TP400', 'TP401', 'TP402', 'TP403'].includes(String(diagnostic.code))).length >= 3, 30_000);
  });

  after(async () => {
    await server.stop();
    rmSync(workspace, { recursive: true, force: true });
  });

  async function hoverOn(stepId: string): Promise<string> {
    const lines = text.split('\n');
    const line = lines.findIndex((candidate) => candidate.includes(`"id": "${stepId}"`));
    const character = lines[line]!.indexOf('fnv1a64:') + 3;
    const hover = (await server.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line, character } })) as Hover;
    return (hover.contents as { value: string }).value;
  }

  test('a server error reason in the hover renders no link, image or HTML', async () => {
    const value = await hoverOn('broken');
    assert.match(value, /cannot verify/);
    assert.ok(value.includes('attacker.example'), `the reason is shown:\n${value}`);
    assert.deepEqual(activeTokens(value), [], value);
  });

  test('a tool name and description full of markdown render as text', async () => {
    const value = await hoverOn('names');
    assert.ok(value.includes('Looks fine.'), `the live tool is shown:\n${value}`);
    assert.deepEqual(activeTokens(value), [], value);
  });

  test('the hover is laid out: a short heading, then the hashes, then the live tool', async () => {
    const value = await hoverOn('leaky');
    const [heading] = value.split('\n');
    assert.match(heading!, /^\*\*✗ drifted\*\* · schema pin of `echo_upper` on `leaky`$/);
    assert.ok(value.indexOf('| pinned |') < value.indexOf('**Live tool**'));
    assert.match(value, /\n---\n\n\*\*Live tool\*\*/);
  });

  test('a credential echoed into a description and a schema reaches no hover or diagnostic', async () => {
    const value = await hoverOn('leaky');
    assert.ok(value.includes('Authenticated with «redacted»'), value);
    assert.ok(!value.includes(TOKEN), value);
    for (const params of server.published) assert.ok(!JSON.stringify(params).includes(TOKEN), JSON.stringify(params).slice(0, 400));
    assert.ok(!server.stderr().includes(TOKEN));
  });
});
