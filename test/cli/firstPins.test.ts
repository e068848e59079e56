/**
 * First pins from `toolpin pin` (issue 26), end to end with the fixture MCP server: a blueprint
 * step that names a tool and a server without `expectedSchemaHash` (TP206), a connector whose
 * `include` tools have no `toolsSnapshot` entry, a connector with no `toolsSnapshot` at all, an
 * `mcpInvoke$` call without a hash and a `defineConnector` without a snapshot. A dry run shows each
 * as added, with the tool as served, and writes nothing (exit 1); `--yes` adds the pins (comments,
 * formatting and a source file's quotes kept) and their store entries, and `check` then verifies
 * every one of them. A step whose tool two servers serve gets no first pin, with the reason.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
/** The project's own fixtures are trusted for the run (docs/formats.md §10). */
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');

/** The fixture's live pins (test/cli/sourcePins.test.ts holds the same). */
const ECHO_SCHEMA = 'fnv1a64:a76fe8d6d023fca0';
const ECHO_TOOL = 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';

const BLUEPRINT = `{
  // Written by hand: no step is pinned yet.
  "blueprint": "fresh",
  "formatVersion": 1,
  "steps": [
    {
      "id": "shout",
      "effect": "mcp.invoke",
      "input": {
        "toolName": "echo_upper", // the tool
        "server": "demo",
        "arguments": { "text": "hi" }
      }
    },
    { "id": "sum", "effect": "mcp.invoke", "input": { "toolName": "add_numbers", "server": "demo" } },
    { "id": "flip", "effect": "mcp.invoke", "input": { "toolName": "reverse_text" } }
  ]
}
`;

function transport(): string {
  return `{ "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(fixtureServer)}, "--stdio"] }`;
}

/** Selects two tools and pins none of them. */
function includeConnector(): string {
  return `{
  "name": "picked",
  "provider": "mcp",
  "providerConfig": {
    "transport": ${transport()},
    // two of the three tools
    "include": ["echo_upper", "add_numbers"]
  }
}
`;
}

/** Selects every served tool (no include) and has no toolsSnapshot. */
function wholeConnector(): string {
  return `{
  "name": "whole",
  "provider": "mcp",
  "providerConfig": {
    "transport": ${transport()}
  }
}
`;
}

function sourceConnector(): string {
  return `import { defineConnector } from '@objectstack/spec/integration';

export const coded = defineConnector({
  name: 'coded',
  provider: 'mcp',
  providerConfig: {
    transport: { kind: 'stdio', command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(fixtureServer)}, '--stdio'] },
    include: ['echo_upper'],
  },
});
`;
}

function sourceSteps(): string {
  return `import { mcpInvoke$ as invoke } from '@loom/plugin-mcp';

export const shout = invoke('shout#1', {
  toolName: 'echo_upper',
  server: 'demo',
  arguments: { text: 'hi' },
});
`;
}

function run(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 120_000, input: '', env: TRUSTED_ENV });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function read(workspace: string, file: string): string {
  return readFileSync(path.join(workspace, file), 'utf8');
}

describe('toolpin pin adds first pins', () => {
  let workspace: string;
  before(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-first-pins-'));
    writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio'] } } }));
    writeFileSync(path.join(workspace, 'flow.blueprint.jsonc'), BLUEPRINT);
    writeFileSync(path.join(workspace, 'picked.connector.jsonc'), includeConnector());
    writeFileSync(path.join(workspace, 'whole.connector.json'), wholeConnector());
    mkdirSync(path.join(workspace, 'src'));
    writeFileSync(path.join(workspace, 'src', 'connectors.ts'), sourceConnector());
    writeFileSync(path.join(workspace, 'src', 'steps.ts'), sourceSteps());
  });
  after(() => rmSync(workspace, { recursive: true, force: true }));

  test('a dry run shows every first pin as added, with the tool as served, and writes nothing', () => {
    const result = run(workspace, 'pin');
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /flow\.blueprint\.jsonc:10:21 {2}echo_upper on demo: first pin \(added\)\n {2}\+ "expectedSchemaHash": "fnv1a64:a76fe8d6d023fca0",/);
    assert.match(result.stdout, /picked\.connector\.jsonc:7:17 {2}echo_upper on picked: first pin \(added\)/);
    assert.match(result.stdout, /src\/steps\.ts:\d+:\d+ {2}echo_upper on demo: first pin \(added\)\n {2}\+ expectedSchemaHash: 'fnv1a64:a76fe8d6d023fca0',/);
    assert.match(result.stdout, /live description:\n {6}\| Upper-case the input text/, 'the live tool is shown in full');
    // Every configured server serves reverse_text and the step names none: no guess.
    assert.match(result.stdout, /flow\.blueprint\.jsonc:\d+:\d+ {2}reverse_text: no first pin: served by 4 servers \([a-z, ]+\); add "server"/);
    // 2 steps + 1 source step + 2 included + 3 of the whole server + 1 source connector.
    assert.match(result.stdout, /9 first pin\(s\) shown; nothing written\. Re-run with --yes to write 9 first pin\(s\) and their store entries\./);
    assert.equal(read(workspace, 'flow.blueprint.jsonc'), BLUEPRINT);
    assert.equal(existsSync(path.join(workspace, '.toolpin')), false);
  });

  test('--tool limits the first pins to one tool', () => {
    const result = run(workspace, 'pin', '--tool', 'add_numbers');
    assert.match(result.stdout, /3 first pin\(s\) shown/);
  });

  test('--yes writes the first pins in place and their store entries; check then verifies them', () => {
    const result = run(workspace, 'pin', '--yes');
    assert.match(result.stdout, /Wrote 9 first pin\(s\) in 5 file\(s\) and their entries in \.toolpin\/store\./, result.stdout + result.stderr);
    // The ambiguous step is left for a manual edit.
    assert.equal(result.status, 1);
    assert.match(result.stdout, /1 missing pin\(s\) left that need a manual edit/);

    const blueprint = read(workspace, 'flow.blueprint.jsonc');
    const sum = /"toolName": "add_numbers", "server": "demo", "expectedSchemaHash": "(fnv1a64:[0-9a-f]{16})" \}/.exec(blueprint);
    assert.ok(sum, blueprint);
    assert.equal(
      blueprint,
      BLUEPRINT.replace('"server": "demo",\n', `"server": "demo",\n        "expectedSchemaHash": "${ECHO_SCHEMA}",\n`).replace('"server": "demo" }', `"server": "demo", "expectedSchemaHash": "${sum[1]}" }`),
      'only the pins are added, after "server", comments kept',
    );
    const picked = read(workspace, 'picked.connector.jsonc');
    assert.match(picked, /\/\/ two of the three tools\n {4}"include": \["echo_upper", "add_numbers"\],\n {4}"toolsSnapshot": \{\n {6}"echo_upper": "sha256:e836896e[0-9a-f]{56}",\n {6}"add_numbers": "sha256:[0-9a-f]{64}"\n {4}\}\n {2}\}/);
    const whole = JSON.parse(read(workspace, 'whole.connector.json')) as { providerConfig: { toolsSnapshot: Record<string, string> } };
    assert.deepEqual(Object.keys(whole.providerConfig.toolsSnapshot).sort(), ['add_numbers', 'echo_upper', 'reverse_text']);
    assert.equal(read(workspace, 'src/steps.ts'), sourceSteps().replace("server: 'demo',\n", `server: 'demo',\n  expectedSchemaHash: '${ECHO_SCHEMA}',\n`), 'the source keeps its quotes and bare keys');
    assert.equal(read(workspace, 'src/connectors.ts'), sourceConnector().replace("include: ['echo_upper'],\n", `include: ['echo_upper'],\n    toolsSnapshot: { echo_upper: '${ECHO_TOOL}' },\n`));

    // The store entries are written as for re-pins: the hashed content and the full definition.
    const entry = read(workspace, `.toolpin/store/${ECHO_TOOL.replace(':', '-')}.json`);
    assert.equal(`sha256:${createHash('sha256').update(entry).digest('hex')}`, ECHO_TOOL);
    assert.ok(existsSync(path.join(workspace, '.toolpin', 'store', `${ECHO_SCHEMA.replace(':', '-')}.json`)));

    const check = run(workspace, 'check', '--format', 'json');
    const report = parseCheckReport(check.stdout);
    const pins = (report.files as Array<{ pins: Array<{ state: string }> }>).flatMap((file) => file.pins);
    assert.equal(pins.length, 9);
    assert.ok(pins.every((pin) => pin.state === 'verified'), JSON.stringify(pins));
    assert.equal(report.summary.verified, 9);
  });

  test('a second run has no first pin left to add but the ambiguous step', () => {
    const result = run(workspace, 'pin');
    assert.match(result.stdout, /reverse_text: no first pin: served by 4 servers/);
    assert.match(result.stdout, /Nothing to re-pin: no drifted or missing pin, and no first pin to add\./);
    assert.equal(result.status, 1, 'the step left for a manual edit keeps the run from passing');
  });
});
