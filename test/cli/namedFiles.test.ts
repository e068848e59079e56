/**
 * `toolpin check some.connector.json` reads what the named files need, not the whole folder
 * (issue 26): a named connector declares its own servers, so the folder's other connector files
 * are not read and their servers are neither listed nor reported. A named blueprint whose server
 * is declared in another connector file of the folder still finds it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');

function connector(name: string): string {
  return JSON.stringify({
    name,
    type: 'api',
    provider: 'mcp',
    providerConfig: { transport: { kind: 'stdio', command: 'node', args: ['server.mjs'] }, include: ['echo_upper'], toolsSnapshot: { echo_upper: `sha256:${'0'.repeat(64)}` } },
  });
}

const folder = mkdtempSync(path.join(tmpdir(), 'toolpin-named-'));
after(() => rmSync(folder, { recursive: true, force: true }));
writeFileSync(path.join(folder, 'mine.connector.json'), connector('mine'));
mkdirSync(path.join(folder, 'others'));
writeFileSync(path.join(folder, 'others', 'theirs.connector.json'), connector('theirs'));
writeFileSync(
  path.join(folder, 'flow.blueprint.json'),
  JSON.stringify({ blueprint: 'flow', formatVersion: 1, steps: [{ id: 's', effect: 'mcp.invoke', input: { toolName: 'echo_upper', server: 'theirs', expectedSchemaHash: 'fnv1a64:0000000000000000' } }] }),
);

function serversOf(...args: string[]): string[] {
  const result = spawnSync(process.execPath, [cli, 'check', '--offline', '--format', 'json', ...args], { cwd: folder, encoding: 'utf8', timeout: 60_000 });
  assert.ok(result.status === 1 || result.status === 2, result.stderr);
  return (JSON.parse(result.stdout) as { servers: Array<{ name: string }> }).servers.map((server) => server.name).sort();
}

test('a named connector file: only its own servers, the folder is not scanned', () => {
  assert.deepEqual(serversOf('mine.connector.json'), ['mine']);
});

test('a named blueprint still finds its server in another connector file of the folder', () => {
  assert.deepEqual(serversOf('flow.blueprint.json'), ['mine', 'theirs']);
});
