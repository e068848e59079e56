/**
 * A reader that goes away (`toolpin hash tools.json | head -1`) does not crash the CLI with an
 * unhandled EPIPE: the rest of the output is dropped, the command ends normally and exits with its
 * own status, and nothing is written to standard error.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');

test('hash into a pipe closed after the first chunk exits 0 without an EPIPE crash', async () => {
  // 3,000 tools: far more output than a pipe buffers, so writes continue after the reader left.
  const tools = Array.from({ length: 3000 }, (_, index) => ({ name: `tool_${index}`, description: `Tool number ${index}`, inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }));
  const child = spawn(process.execPath, [cli, 'hash', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  let chunks = 0;
  child.stdout.on('data', () => {
    if (chunks++ === 0) child.stdout.destroy();
  });
  child.stdin.end(JSON.stringify({ tools }));
  const code = await new Promise<number | null>((resolve) => child.on('close', (exitCode) => resolve(exitCode)));
  assert.ok(chunks >= 1, 'some output arrived before the reader left');
  assert.equal(stderr, '', 'nothing on standard error');
  assert.equal(code, 0);
});
