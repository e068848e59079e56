/**
 * `toolpin pin` end to end: a temporary workspace whose blueprint and connector pins have drifted
 * against the fixture MCP server. A dry run shows each re-pin and writes nothing (exit 1); `--yes`
 * writes the pins (keeping comments, formatting and the bare style) and the store entries; then
 * `toolpin check` exits 0.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
/** The project's own fixtures are trusted for the run, as CI trusts its own branches (docs/formats.md §10). */
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');

const BLUEPRINT = `{
  // Pinned long ago; both steps drifted since.
  "blueprint": "drifted",
  "formatVersion": 1,
  "steps": [
    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "fnv1a64:1111111111111111" } },
    { "id": "flip",  "effect": "mcp.invoke", "input": { "toolName": "reverse_text", "server": "demo", "expectedSchemaHash": "fnv1a64:2222222222222222" } }
  ]
}
`;

function connector(): string {
  return `{
  "name": "demo_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(fixtureServer)}, "--stdio"] },
    "toolsSnapshot": {
      "echo_upper": "${'3'.repeat(64)}", // bare on purpose
      "add_numbers": "sha256:${'4'.repeat(64)}",
      "reverse_text": "sha256:${'5'.repeat(64)}"
    }
  }
}
`;
}

function run(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000, input: '', env: TRUSTED_ENV });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('toolpin pin', () => {
  let workspace: string;
  before(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-pin-'));
    writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio'] } } }));
    writeFileSync(path.join(workspace, 'flow.blueprint.jsonc'), BLUEPRINT);
    mkdirSync(path.join(workspace, 'connectors'));
    writeFileSync(path.join(workspace, 'connectors', 'demo.connector.jsonc'), connector());
  });
  after(() => rmSync(workspace, { recursive: true, force: true }));

  test('a dry run shows every re-pin, writes nothing and exits 1', () => {
    const result = run(workspace, 'pin');
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stdout, /flow\.blueprint\.jsonc:6:\d+ {2}echo_upper on demo\n {2}- .*"fnv1a64:1111111111111111".*\n {2}\+ .*"fnv1a64:a76fe8d6d023fca0"/);
    assert.match(result.stdout, /connectors\/demo\.connector\.jsonc:7:\d+ {2}echo_upper on demo_tools/);
    assert.match(result.stdout, /5 drifted pin\(s\) shown; nothing written/);
    assert.equal(readFileSync(path.join(workspace, 'flow.blueprint.jsonc'), 'utf8'), BLUEPRINT);
    assert.equal(run(workspace, 'check').status, 1);
  });

  test('--tool limits the re-pins to one tool', () => {
    const result = run(workspace, 'pin', '--tool', 'reverse_text');
    assert.match(result.stdout, /2 drifted pin\(s\) shown/);
  });

  test('--yes writes the pins and the store entries; check then exits 0', () => {
    const result = run(workspace, 'pin', '--yes');
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /Wrote 5 re-pin\(s\) in 2 file\(s\)/);

    const blueprint = readFileSync(path.join(workspace, 'flow.blueprint.jsonc'), 'utf8');
    assert.equal(blueprint, BLUEPRINT.replace('fnv1a64:1111111111111111', 'fnv1a64:a76fe8d6d023fca0').replace('fnv1a64:2222222222222222', /"reverse_text".*"(fnv1a64:[0-9a-f]{16})"/.exec(blueprint)![1]!));
    const connectorText = readFileSync(path.join(workspace, 'connectors', 'demo.connector.jsonc'), 'utf8');
    assert.match(connectorText, /"echo_upper": "e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454", \/\/ bare on purpose/, 'the bare style and the comment are kept');

    const store = path.join(workspace, '.toolpin', 'store');
    // Each re-pin writes its pinned content and, beside it, the tool's full definition (issue 12).
    const all = readdirSync(store).sort();
    const entries = all.filter((entry) => !entry.startsWith('full-'));
    assert.equal(entries.length, 5);
    assert.equal(all.length - entries.length, 5, 'one full-definition entry per re-pin');
    for (const entry of entries) {
      const content = readFileSync(path.join(store, entry), 'utf8');
      const [algorithm, hex] = entry.replace(/\.json$/, '').split('-');
      if (algorithm === 'sha256') assert.equal(createHash('sha256').update(content).digest('hex'), hex, `${entry} holds exactly the hashed bytes`);
    }
    assert.ok(entries.includes('sha256-e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454.json'));
    assert.ok(entries.includes('fnv1a64-a76fe8d6d023fca0.json'));

    const check = run(workspace, 'check');
    assert.equal(check.status, 0, check.stdout);
    assert.match(check.stdout, /5 pin\(s\): 5 verified/);
  });

  test('nothing left to re-pin: exit 0', () => {
    const result = run(workspace, 'pin');
    assert.equal(result.status, 0);
    assert.match(result.stdout, /Nothing to re-pin/);
  });
});
