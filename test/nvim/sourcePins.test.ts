/**
 * Neovim (Debian's 0.7.x) as an LSP client of `toolpin lsp --stdio` for a TypeScript buffer
 * (filetype `typescript`): the pins of `mcpInvoke$` calls get their diagnostics, on the literals.
 * The language server reads a file by its name, whatever language id the client sends.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');

test('Neovim receives the diagnostics of the pins in a TypeScript module', () => {
  const workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-nvim-ts-'));
  try {
    const file = path.join(workspace, 'steps.ts');
    writeFileSync(
      file,
      "import { mcpInvoke$ as invoke } from '@loom/plugin-mcp';\n\nexport const a = invoke('a#1', { toolName: 'echo', expectedSchemaHash: 'fnv1a64:XYZ' });\nexport const b = invoke('b#2', { toolName: 'echo' });\n",
    );
    const outFile = path.join(workspace, 'result.json');
    const run = spawnSync('nvim', ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', 'filetype on', '-c', `luafile ${path.join(root, 'test', 'nvim', 'check_diagnostics.lua')}`], {
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TOOLPIN_NVIM_OUT: outFile, TOOLPIN_CLI: path.join(root, 'dist', 'cli.js'), TOOLPIN_FILE: file },
    });
    assert.equal(run.error, undefined, `nvim failed to run: ${String(run.error)}`);
    const result = JSON.parse(readFileSync(outFile, 'utf8')) as { ok: boolean; diagnostics: Array<{ code: string; severity: number; lnum: number; col: number; end_col: number }> };
    assert.equal(result.ok, true, `no diagnostics arrived in Neovim; stderr: ${run.stderr}`);
    const seen = result.diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.severity, diagnostic.lnum, diagnostic.col, diagnostic.end_col]).sort((a, b) => Number(a[2]) - Number(b[2]));
    // Neovim severities: 1 = ERROR, 2 = WARN. Lines and columns are 0-based.
    assert.deepEqual(seen, [
      ['TP204', 1, 2, 71, 84],
      ['TP206', 2, 3, 43, 49],
    ]);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
});
