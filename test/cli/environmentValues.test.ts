/**
 * Values read from the environment never reach output: a URL built from `${env:…}` that is not a
 * valid URL is named as declared, never by the value it resolved to.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');

test('an invalid URL from ${env:…} is reported as declared, without the value', () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'toolpin-env-url-'));
  try {
    const secret = 'not a url, token-9d41c7';
    writeFileSync(path.join(folder, '.mcp.json'), JSON.stringify({ mcpServers: { crm: { type: 'http', url: '${env:CRM_URL}' } } }));
    writeFileSync(
      path.join(folder, 'flow.blueprint.jsonc'),
      JSON.stringify({ blueprint: 'flow', formatVersion: 1, steps: [{ id: 'a', effect: 'mcp.invoke', input: { toolName: 't', server: 'crm', expectedSchemaHash: 'fnv1a64:a76fe8d6d023fca0' } }] }),
    );
    for (const format of ['text', 'json', 'sarif']) {
      const result = spawnSync(process.execPath, [cli, 'check', '--trust', '--format', format], { cwd: folder, encoding: 'utf8', timeout: 60_000, env: { ...process.env, CRM_URL: secret } });
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stdout, /\$\{env:CRM_URL\}\\?" is not a valid URL/, format);
      assert.doesNotMatch(result.stdout + result.stderr, /token-9d41c7/, `${format}: the value never appears`);
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
