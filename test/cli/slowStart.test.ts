/**
 * A stdio server's start has its own, longer bound than one request (issue 26): `npx -y pkg`
 * installs the package on first use, which takes longer than the 10 s request timeout. The fixture
 * server here reads nothing for 15 s after it starts, as such an install does; with the default
 * settings its pins verify, and with a start bound below its delay the message names the setting
 * and the option that raise the bound.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');

function slowWorkspace(startDelayMs: number): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'toolpin-slow-'));
  writeFileSync(path.join(folder, '.mcp.json'), JSON.stringify({ mcpServers: { slow: { command: process.execPath, args: [fixtureServer, '--stdio', '--start-delay-ms', String(startDelayMs)] } } }));
  writeFileSync(
    path.join(folder, 'flow.blueprint.json'),
    JSON.stringify({ blueprint: 'slow-flow', formatVersion: 1, steps: [{ id: 'shout', effect: 'mcp.invoke', input: { toolName: 'echo_upper', server: 'slow', expectedSchemaHash: 'fnv1a64:a76fe8d6d023fca0' } }] }),
  );
  return folder;
}

function run(args: string[], cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...process.env, TOOLPIN_TRUST: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('a stdio server that is slow to start', () => {
  test('answering initialize after 15 s verifies with the default settings', { timeout: 90_000 }, async () => {
    const folder = slowWorkspace(15_000);
    folders.push(folder);
    const result = await run(['check', '--format', 'json'], folder);
    assert.equal(result.status, 0, result.stdout + result.stderr);
    const report = JSON.parse(result.stdout);
    const states = report.files.flatMap((file: { pins: Array<{ tool: string; state: string }> }) => file.pins.map((pin) => `${pin.tool}|${pin.state}`));
    assert.deepEqual(states, ['echo_upper|verified']);
  });

  test('a start over the bound names the setting and the option that raise it', { timeout: 60_000 }, async () => {
    const folder = slowWorkspace(5_000);
    folders.push(folder);
    const result = await run(['check', '--start-timeout', '1000'], folder);
    assert.equal(result.status, 2, result.stdout + result.stderr);
    assert.match(result.stdout, /did not start \(answer initialize\) within 1000 ms; raise it with the setting toolpin\.verify\.startTimeoutMs or the CLI option --start-timeout/);
  });
});
