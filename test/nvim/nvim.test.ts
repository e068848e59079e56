/**
 * Neovim (Debian's `neovim` package, 0.7.x) as an independent LSP client of `toolpin lsp --stdio`.
 * This suite fails, never skips, when nvim is missing: .ci/run installs it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');

interface NvimDiagnostic {
  code: string;
  source: string;
  severity: number;
  lnum: number;
  col: number;
  end_lnum: number;
  end_col: number;
  message: string;
}

test('Neovim receives the diagnostics of a broken blueprint from toolpin lsp --stdio', () => {
  const version = spawnSync('nvim', ['--version'], { encoding: 'utf8' });
  assert.equal(version.status, 0, 'nvim must be installed (apt-get install neovim); .ci/run does this');
  const outFile = path.join(mkdtempSync(path.join(tmpdir(), 'toolpin-nvim-')), 'result.json');
  const run = spawnSync('nvim', ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${path.join(root, 'test', 'nvim', 'check_diagnostics.lua')}`], {
    encoding: 'utf8',
    timeout: 30_000,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      TOOLPIN_NVIM_OUT: outFile,
      TOOLPIN_CLI: path.join(root, 'dist', 'cli.js'),
      TOOLPIN_FILE: path.join(root, 'test', 'nvim', 'workspace', 'broken.blueprint.jsonc'),
    },
  });
  assert.equal(run.error, undefined, `nvim failed to run: ${String(run.error)}`);
  const result = JSON.parse(readFileSync(outFile, 'utf8')) as { ok: boolean; diagnostics: NvimDiagnostic[]; server_name?: string };
  assert.equal(result.ok, true, `no diagnostics arrived in Neovim; stderr: ${run.stderr}`);
  const seen = result.diagnostics
    .map((diagnostic) => [diagnostic.code, diagnostic.source, diagnostic.severity, diagnostic.lnum, diagnostic.col, diagnostic.end_col])
    .sort((a, b) => Number(a[3]) - Number(b[3]));
  // Neovim severities: 1 = ERROR. Lines and columns are 0-based.
  assert.deepEqual(seen, [
    ['TP204', 'toolpin', 1, 8, 67, 85],
    ['TP200', 'toolpin', 1, 10, 12, 24],
  ]);
  assert.match(result.diagnostics.find((diagnostic) => diagnostic.code === 'TP200')!.message, /duplicate step id "open-issue"/);
});

test('Neovim shows the drift diagnostic naming the tool, the hover with both hashes, and the re-pin action', () => {
  const workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-nvim-drift-'));
  try {
    const control = path.join(workspace, 'control.json');
    const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
    // The server moved after the pin was taken: echo_upper's description and schema were rewritten.
    writeFileSync(control, JSON.stringify({ version: 1, rewrite: { echo_upper: { inputSchema: { type: 'object', properties: { text: { type: 'string' }, loud: { type: 'boolean' } }, required: ['text', 'loud'] } } } }));
    writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--control-file', control] } } }));
    mkdirSync(path.join(workspace, 'flows'));
    const file = path.join(workspace, 'flows', 'shout.blueprint.jsonc');
    writeFileSync(file, '{\n  "blueprint": "shout",\n  "formatVersion": 1,\n  "steps": [\n    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "fnv1a64:a76fe8d6d023fca0" } }\n  ]\n}\n');
    const outFile = path.join(workspace, 'result.json');
    const run = spawnSync('nvim', ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${path.join(root, 'test', 'nvim', 'check_drift.lua')}`], {
      encoding: 'utf8',
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TOOLPIN_NVIM_OUT: outFile, TOOLPIN_CLI: path.join(root, 'dist', 'cli.js'), TOOLPIN_FILE: file, TOOLPIN_ROOT: workspace },
    });
    assert.equal(run.error, undefined, `nvim failed to run: ${String(run.error)}`);
    const result = JSON.parse(readFileSync(outFile, 'utf8')) as { ok: boolean; message: string; lnum: number; hover?: string; actions: string[] };
    assert.equal(result.ok, true, `no drift diagnostic arrived in Neovim; stderr: ${run.stderr}`);
    assert.match(result.message, /tool "echo_upper" on server "demo" changed since it was pinned: pinned fnv1a64:a76fe8d6d023fca0, live fnv1a64:[0-9a-f]{16}/);
    assert.equal(result.lnum, 4);
    assert.match(result.hover ?? '', /drifted/);
    assert.match(result.hover ?? '', /fnv1a64:a76fe8d6d023fca0/);
    assert.ok(result.actions.some((title) => /^Re-pin "echo_upper" to fnv1a64:[0-9a-f]{16}$/.test(title)), `actions: ${result.actions.join(', ')}`);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
});
