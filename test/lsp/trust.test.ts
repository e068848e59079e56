/**
 * Trust in the language server, through the real built server over stdio. A client that says
 * nothing about trust (Neovim, most clients) gets structure checks only, unless the user recorded
 * the folder with `toolpin trust`; the record covers exactly the commands it was made for; a lone
 * file outside every workspace folder is never trusted, whatever the client says. Each case uses
 * a stdio command that would create a marker file, so "nothing ran" is checked on the disk.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { readMcpJsonServers } from '../../server/src/core/verify/registry';
import { serverAction } from '../../server/src/core/trust';
import { TrustStore, trustFilePath } from '../../server/src/io/trustStore';
import { repoRoot, startTestServer } from '../support/lspClient';

const root = repoRoot();
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
// Not echo_upper's pin: a listed server shows drift, so every case ends in one diagnostic.
const STALE_SCHEMA_PIN = 'fnv1a64:0000000000000000';

function messageOf(diagnostic: Diagnostic): string {
  return typeof diagnostic.message === 'string' ? diagnostic.message : diagnostic.message.value;
}

/** A folder whose `.mcp.json` starts the fixture server, which first writes a marker file. */
function writeFolder(lone = false): { folder: string; config: string; marker: string; blueprint: string; mcpJson: string } {
  const folder = mkdtempSync(path.join(tmpdir(), 'toolpin-lsp-trust-'));
  const config = path.join(folder, 'config');
  const marker = path.join(folder, 'server-ran.pid');
  const mcpJson = JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--pid-file', marker] } } });
  writeFileSync(path.join(folder, '.mcp.json'), mcpJson);
  mkdirSync(path.join(folder, 'flows'));
  // A lone file lies next to the .mcp.json, where a folder-less editor looks for servers.
  const blueprint = lone ? path.join(folder, 'shout.blueprint.jsonc') : path.join(folder, 'flows', 'shout.blueprint.jsonc');
  writeFileSync(blueprint, `{ "blueprint": "shout", "formatVersion": 1, "steps": [ { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "${STALE_SCHEMA_PIN}" } } ] }\n`);
  return { folder, config, marker, blueprint, mcpJson };
}

async function record(folder: string, config: string, mcpJson: string): Promise<void> {
  const definitions = readMcpJsonServers(mcpJson, 'mcpServers', { kind: 'mcp-json', file: path.join(folder, '.mcp.json') }, { workspaceFolder: folder, env: {} });
  const servers = definitions.map((definition) => ({ name: definition.name, ...serverAction(definition)! }));
  await new TrustStore(trustFilePath({ XDG_CONFIG_HOME: config })).trust(folder, servers);
}

async function firstVerdict(options: { folder: string; config: string; blueprint: string; rootUri: string | undefined; trusted: boolean | null }): Promise<string[]> {
  const server = await startTestServer({ ...(options.rootUri ? { rootUri: options.rootUri } : {}), trusted: options.trusted, env: { ...process.env, XDG_CONFIG_HOME: options.config } });
  try {
    const uri = `file://${options.blueprint}`;
    server.open(uri, (await import('node:fs')).readFileSync(options.blueprint, 'utf8'));
    // Either the trust refusal or the live verdict (drift: the pin is not the tool's).
    const published = await server.diagnostics(uri, (params) => params.diagnostics.length > 0, 15_000);
    return published.diagnostics.map(messageOf);
  } finally {
    await server.stop();
  }
}

describe('trust in the language server', () => {
  test('a client that says nothing gets no server started, and a message naming the command and how to trust', async () => {
    const { folder, config, marker, blueprint } = writeFolder();
    try {
      const messages = await firstVerdict({ folder, config, blueprint, rootUri: `file://${folder}`, trusted: null });
      assert.equal(messages.length, 1, messages.join('\n'));
      assert.match(messages[0]!, /cannot verify/);
      assert.match(messages[0]!, /the folder is not trusted, so Toolpin did not run `.*fixture-server\.mjs --stdio --pid-file /);
      assert.match(messages[0]!, /run `toolpin trust /);
      assert.equal(existsSync(marker), false, 'the stdio command did not run');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test('a folder recorded with toolpin trust is verified, and a changed command is untrusted again', async () => {
    const { folder, config, marker, blueprint, mcpJson } = writeFolder();
    try {
      await record(folder, config, mcpJson);
      const listed = await firstVerdict({ folder, config, blueprint, rootUri: `file://${folder}`, trusted: null });
      assert.equal(listed.length, 1, listed.join('\n'));
      assert.match(listed[0]!, /the input schema of tool "echo_upper" on server "demo" changed since it was pinned/, 'the recorded server was listed');
      assert.equal(existsSync(marker), true, 'the recorded command ran');
      rmSync(marker);
      // A pull changes the command: the record no longer covers it.
      const changed = JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--pid-file', marker, '--log-requests', path.join(folder, 'requests.jsonl')] } } });
      writeFileSync(path.join(folder, '.mcp.json'), changed);
      const refused = await firstVerdict({ folder, config, blueprint, rootUri: `file://${folder}`, trusted: null });
      assert.equal(refused.length, 1, refused.join('\n'));
      assert.match(refused[0]!, /server "demo" is new or changed since this folder was trusted, so Toolpin did not run `.*--log-requests .*requests\.jsonl`/);
      assert.equal(existsSync(marker), false, 'the changed command did not run');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test('a lone file outside every workspace folder is never trusted, even when the client says trusted', async () => {
    const { folder, config, marker, blueprint } = writeFolder(true);
    try {
      const messages = await firstVerdict({ folder, config, blueprint, rootUri: undefined, trusted: true });
      assert.equal(messages.length, 1, messages.join('\n'));
      assert.match(messages[0]!, /a file outside every workspace folder is never trusted/);
      assert.equal(existsSync(marker), false, 'the .mcp.json next to the file started nothing');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
