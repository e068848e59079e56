/**
 * Neovim (Debian's `neovim` package, 0.7.x) as an independent LSP client of `toolpin lsp --stdio`.
 * This suite fails, never skips, when nvim is missing: .ci/run installs it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
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
