/**
 * Issue 22 §1: no writer of the CLI follows a link the repository planted out of the workspace.
 * Each test plants one link (a store entry at the name the live hash decides, the store folder, a
 * connector document, a document's lock, the SARIF report) pointing at a "victim" outside the
 * workspace, runs the real CLI against the fixture MCP server, and checks that the victim is
 * untouched, the refusal names the link and where it points, and the exit status is not a pass.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };
/** echo_upper's live tool pin as the fixture server serves it (test/cli/pin.test.ts holds it too). */
const ECHO_UPPER_LIVE = 'e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';
const VICTIM_TEXT = '# the user\'s own file\nexport PATH="$HOME/bin:$PATH"\n';

function connector(): string {
  return `{
  "name": "demo_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(fixtureServer)}, "--stdio"] },
    "include": ["echo_upper"],
    "toolsSnapshot": { "echo_upper": "sha256:${'4'.repeat(64)}" }
  }
}
`;
}

function run(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000, input: '', env: TRUSTED_ENV });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('writes never follow a link out of the workspace', () => {
  let base: string;
  let workspace: string;
  let outside: string;
  let victim: string;
  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'toolpin-links-'));
    workspace = path.join(base, 'repo');
    outside = path.join(base, 'home');
    mkdirSync(path.join(workspace, 'connectors'), { recursive: true });
    mkdirSync(outside);
    victim = path.join(outside, '.bashrc');
    writeFileSync(victim, VICTIM_TEXT);
    writeFileSync(path.join(workspace, 'connectors', 'demo.connector.jsonc'), connector());
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const connectorFile = (): string => path.join(workspace, 'connectors', 'demo.connector.jsonc');

  test('a store entry planted as a link at the live hash\'s name is refused; the pin is not written', () => {
    mkdirSync(path.join(workspace, '.toolpin', 'store'), { recursive: true });
    const planted = path.join(workspace, '.toolpin', 'store', `sha256-${ECHO_UPPER_LIVE}.json`);
    symlinkSync(victim, planted);
    const result = run(workspace, 'pin', '--yes');
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.equal(readFileSync(victim, 'utf8'), VICTIM_TEXT, 'the file the link points to is untouched');
    assert.ok(lstatSync(planted).isSymbolicLink());
    assert.equal(readFileSync(connectorFile(), 'utf8'), connector(), 'no pin names content the store lacks');
    assert.match(result.stderr, new RegExp(`sha256-${ECHO_UPPER_LIVE}\\.json is a link to ${victim.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
  });

  test('a dangling link at the entry\'s name is not followed to create a file outside', () => {
    mkdirSync(path.join(workspace, '.toolpin', 'store'), { recursive: true });
    const target = path.join(outside, 'created-by-toolpin');
    symlinkSync(target, path.join(workspace, '.toolpin', 'store', `sha256-${ECHO_UPPER_LIVE}.json`));
    const result = run(workspace, 'pin', '--yes');
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.throws(() => statSync(target), /ENOENT/, 'nothing was created outside the workspace');
    assert.match(result.stderr, /is a link to .*created-by-toolpin.*outside/);
  });

  test('a symlinked .toolpin/store folder is refused', () => {
    mkdirSync(path.join(workspace, '.toolpin'));
    symlinkSync(outside, path.join(workspace, '.toolpin', 'store'));
    const result = run(workspace, 'pin', '--yes');
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.deepEqual(readdirSync(outside), ['.bashrc'], 'no entry was written into the folder the link leads to');
    assert.match(result.stderr, /\.toolpin\/store is a link to /);
  });

  test('a symlinked .toolpin folder is refused even when .toolpin/store does not exist yet', () => {
    symlinkSync(outside, path.join(workspace, '.toolpin'));
    const result = run(workspace, 'pin', '--yes');
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.deepEqual(readdirSync(outside), ['.bashrc'], 'no folder or entry was made outside');
  });

  test('a connector document that is a link out of the workspace is not re-pinned through', () => {
    const outsideConnector = path.join(outside, 'demo.connector.jsonc');
    writeFileSync(outsideConnector, connector());
    rmSync(connectorFile());
    symlinkSync(outsideConnector, connectorFile());
    const result = run(workspace, 'pin', '--yes');
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.equal(readFileSync(outsideConnector, 'utf8'), connector());
    assert.match(result.stderr, /demo\.connector\.jsonc is a link to .*outside/);
  });

  test('a link inside the workspace is still written through (the link stays)', () => {
    const real = path.join(workspace, 'connectors', 'real.jsonc.txt');
    writeFileSync(real, connector());
    rmSync(connectorFile());
    symlinkSync(real, connectorFile());
    const result = run(workspace, 'pin', '--yes');
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.ok(lstatSync(connectorFile()).isSymbolicLink());
    assert.match(readFileSync(real, 'utf8'), new RegExp(`sha256:${ECHO_UPPER_LIVE}`));
  });

  test('a planted link at the document\'s lock name is taken over, never written through', () => {
    symlinkSync(victim, `${connectorFile()}.toolpin-lock`);
    const result = run(workspace, 'pin', '--yes');
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.equal(readFileSync(victim, 'utf8'), VICTIM_TEXT);
    assert.match(result.stderr, /took over the stale lock .*not a lock Toolpin makes: a link/);
  });

  test('the SARIF report (the Action\'s toolpin.sarif) committed as a link out is refused; exit 2, not 0', () => {
    // The pin verifies: check alone would exit 0.
    writeFileSync(connectorFile(), connector().replace('4'.repeat(64), ECHO_UPPER_LIVE));
    symlinkSync(victim, path.join(workspace, 'toolpin.sarif'));
    const result = run(workspace, 'check', '--sarif-file', 'toolpin.sarif');
    assert.equal(result.status, 2, result.stdout + result.stderr);
    assert.equal(readFileSync(victim, 'utf8'), VICTIM_TEXT);
    assert.match(result.stderr, /cannot write toolpin\.sarif: .*toolpin\.sarif is a link to /);
  });

  test('a SARIF file named outside the workspace is written at exactly its name, not through a link there', () => {
    writeFileSync(connectorFile(), connector().replace('4'.repeat(64), ECHO_UPPER_LIVE));
    const named = path.join(outside, 'report.sarif');
    symlinkSync(victim, named);
    const refused = run(workspace, 'check', '--sarif-file', named);
    assert.equal(refused.status, 2, refused.stderr);
    assert.equal(readFileSync(victim, 'utf8'), VICTIM_TEXT);
    rmSync(named);
    const written = run(workspace, 'check', '--sarif-file', named);
    assert.equal(written.status, 0, written.stderr);
    assert.equal((JSON.parse(readFileSync(named, 'utf8')) as { version: string }).version, '2.1.0');
  });
});
