/**
 * Neovim (Debian's `neovim` package, 0.7.x) as an independent LSP client of `toolpin lsp --stdio`.
 * This suite fails, never skips, when nvim is missing: .ci/run installs it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * The environment of one Neovim run: Toolpin's trust record (XDG_CONFIG_HOME) lives in `scratch`,
 * so a test never reads or writes the real user's record.
 */
function isolatedEnv(scratch: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, XDG_CONFIG_HOME: path.join(scratch, 'config'), ...extra };
}

test('Neovim receives the diagnostics of a broken blueprint from toolpin lsp --stdio', () => {
  const version = spawnSync('nvim', ['--version'], { encoding: 'utf8' });
  assert.equal(version.status, 0, 'nvim must be installed (apt-get install neovim); .ci/run does this');
  const scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-nvim-'));
  const outFile = path.join(scratch, 'result.json');
  const run = spawnSync('nvim', ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${path.join(root, 'test', 'nvim', 'check_diagnostics.lua')}`], {
    encoding: 'utf8',
    timeout: 30_000,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Structure checks need no trust: the folder is left untrusted.
    env: isolatedEnv(scratch, {
      TOOLPIN_NVIM_OUT: outFile,
      TOOLPIN_CLI: path.join(root, 'dist', 'cli.js'),
      TOOLPIN_FILE: path.join(root, 'test', 'nvim', 'workspace', 'broken.blueprint.jsonc'),
    }),
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
  rmSync(scratch, { recursive: true, force: true });
});

test('Neovim shows the drift diagnostic naming the tool, the hover with both hashes, and the re-pin action', () => {
  const workspace = realpathSync(mkdtempSync(path.join(tmpdir(), 'toolpin-nvim-drift-')));
  const scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-nvim-home-'));
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
    const cli = path.join(root, 'dist', 'cli.js');
    const env = isolatedEnv(scratch, { TOOLPIN_NVIM_OUT: outFile, TOOLPIN_CLI: cli, TOOLPIN_FILE: file, TOOLPIN_ROOT: workspace });
    // What the README tells a Neovim user to do once per project: record the folder as trusted.
    const trusted = spawnSync(process.execPath, [cli, 'trust', workspace], { encoding: 'utf8', timeout: 30_000, env });
    assert.equal(trusted.status, 0, `toolpin trust failed: ${trusted.stdout}${trusted.stderr}`);
    assert.match(trusted.stdout, /^ {2}demo: .*fixture-server\.mjs --stdio --control-file /m);
    const run = spawnSync('nvim', ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${path.join(root, 'test', 'nvim', 'check_drift.lua')}`], {
      encoding: 'utf8',
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
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
    rmSync(scratch, { recursive: true, force: true });
  }
});
