/**
 * Hostile servers through the built CLI (`dist/cli.js`): a credential a server was given never
 * reaches text, JSON or SARIF output nor a pin-store entry; control and bidirectional characters
 * from server text are shown visibly in text output; one server's 20 MB line or duplicate members
 * cost only that server its verification, and the report is still written.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { toolPin } from '../../server/src/core/pins/pins';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const TOKEN = 'tok-61c0e5a7d2f94b38';
const workspaces: string[] = [];
after(() => {
  for (const workspace of workspaces) rmSync(workspace, { recursive: true, force: true });
});

function workspaceWith(files: Record<string, string>): string {
  const workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-hostile-cli-'));
  workspaces.push(workspace);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(workspace, name), text);
  return workspace;
}

/** The project's own fixtures are trusted for the run (TOOLPIN_TRUST=1), as in test/cli/pin.test.ts. */
function run(cwd: string, args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 90_000, input: '', env: { ...process.env, TOOLPIN_TRUST: '1', ...env }, maxBuffer: 64 * 1024 * 1024 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function step(id: string, server: string, tool: string): string {
  return `{ "id": ${JSON.stringify(id)}, "effect": "mcp.invoke", "input": { "toolName": ${JSON.stringify(tool)}, "server": ${JSON.stringify(server)}, "expectedSchemaHash": "fnv1a64:0000000000000001" } }`;
}

function blueprint(...steps: string[]): string {
  return `{ "blueprint": "hostile", "formatVersion": 1, "steps": [\n  ${steps.join(',\n  ')}\n] }\n`;
}

function fixture(...args: string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: [fixtureServer, '--stdio', ...args] };
}

describe('toolpin check and pin against hostile servers', () => {
  test('a credential from ${env:…} that a server echoes or prints reaches no output and no store entry', () => {
    const workspace = workspaceWith({
      '.mcp.json': JSON.stringify({
        mcpServers: {
          leaky: { ...fixture('--echo-env', 'SERVICE_TOKEN'), env: { SERVICE_TOKEN: '${env:HOSTILE_TOKEN}' } },
          loud: { ...fixture('--stderr-env', 'SERVICE_TOKEN'), env: { SERVICE_TOKEN: '${env:HOSTILE_TOKEN}' } },
        },
      }),
      'flow.blueprint.jsonc': blueprint(step('leaky', 'leaky', 'echo_upper'), step('loud', 'loud', 'echo_upper')),
    });
    const env = { HOSTILE_TOKEN: TOKEN };
    for (const format of ['text', 'json', 'sarif']) {
      const result = run(workspace, ['check', '--format', format], env);
      assert.equal(result.status, 1, result.stderr);
      assert.ok(!result.stdout.includes(TOKEN) && !result.stderr.includes(TOKEN), `${format}:\n${result.stdout}`);
      assert.ok(result.stdout.includes('«redacted»'), `${format}: the redaction is visible`);
    }
    const pinned = run(workspace, ['pin', '--yes'], env);
    assert.ok(!pinned.stdout.includes(TOKEN) && !pinned.stderr.includes(TOKEN), pinned.stdout);
    assert.match(pinned.stderr, /not writing \.toolpin\/store\/fnv1a64-[0-9a-f]{16}\.json: the live tool "echo_upper" on leaky contains a credential value/);
    assert.equal(pinned.status, 1);
    const store = path.join(workspace, '.toolpin', 'store');
    for (const file of existsSync(store) ? readdirSync(store) : []) assert.ok(!readFileSync(path.join(store, file), 'utf8').includes(TOKEN), file);
  });

  test('control and bidi characters from tool names and server errors are shown visibly in text output', () => {
    const evilName = 'evil\u001b]0;pwned\u0007\u202etxt.exe\r';
    const workspace = workspaceWith({
      'tools.json': JSON.stringify([{ name: evilName, description: 'Innocent.', inputSchema: { type: 'object' } }]),
      '.mcp.json': JSON.stringify({
        mcpServers: {
          names: fixture('--tools-file', 'tools.json'),
          failing: fixture('--fail-stderr', 'boom \u001b[2J\u001b[31mred\u0007 \u202eoverride\rcarriage'),
        },
      }),
      'flow.blueprint.jsonc': blueprint(step('names', 'names', evilName), step('failing', 'failing', 'echo_upper')),
    });
    const result = run(workspace, ['check']);
    assert.equal(result.status, 1, result.stderr);
    for (const raw of ['\u0007', '\u001b', '\r', '\u202e']) assert.ok(!result.stdout.includes(raw), JSON.stringify(result.stdout));
    assert.ok(result.stdout.includes('evil\\u{001b}]0;pwned\\u{0007}\\u{202e}txt.exe\\u{000d}'), result.stdout);
    assert.ok(result.stdout.includes('boom \\u{001b}[2J\\u{001b}[31mred\\u{0007} \\u{202e}override\\u{000d}carriage'), result.stdout);
    // JSON stays exact: it is for machines, and JSON escapes control characters itself.
    const json = run(workspace, ['check', '--format', 'json']);
    assert.ok(json.stdout.includes(JSON.stringify(evilName).slice(1, -1)), 'the JSON report names the tool exactly');
  });

  test('a 20 MB line from one server is that server\'s protocol error; the other still verifies', () => {
    const workspace = workspaceWith({
      '.mcp.json': JSON.stringify({ mcpServers: { huge: fixture('--hostile', 'huge-line'), good: fixture() } }),
      'flow.blueprint.jsonc': blueprint(step('huge', 'huge', 'echo_upper')).replace('fnv1a64:0000000000000001', 'fnv1a64:a76fe8d6d023fca0'),
      'good.blueprint.jsonc': blueprint(step('good', 'good', 'echo_upper')).replace('fnv1a64:0000000000000001', 'fnv1a64:a76fe8d6d023fca0'),
    });
    const started = performance.now();
    const result = run(workspace, ['check', '--format', 'json']);
    console.log(`check with a 20 MB line: ${(performance.now() - started).toFixed(0)} ms, report ${result.stdout.length} bytes`);
    assert.equal(result.status, 2, result.stderr);
    const report = parseCheckReport(result.stdout) as { summary: { verified: number; cannotVerify: number }; servers: Array<{ name: string; state: string; message?: string }> };
    assert.deepEqual([report.summary.verified, report.summary.cannotVerify], [1, 1]);
    assert.match(report.servers.find((server) => server.name === 'huge')?.message ?? '', /longer than 10 MiB/);
  });

  test('a tool served with its description twice is never verified, and the message names the tool and the member', () => {
    const lastWins = toolPin({ name: 'read_file', description: 'Reads a file.', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } });
    const transport = { kind: 'stdio', command: process.execPath, args: [fixtureServer, '--stdio', '--hostile', 'duplicate-member'] };
    const workspace = workspaceWith({
      'files.connector.jsonc': JSON.stringify({ name: 'files', provider: 'mcp', providerConfig: { transport, toolsSnapshot: { read_file: lastWins } } }),
    });
    const result = run(workspace, ['check']);
    assert.equal(result.status, 2, result.stdout + result.stderr);
    assert.match(result.stdout, /cannot verify.*read_file.*the member "description" appears twice/);
  });
});
