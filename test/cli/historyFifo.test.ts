/**
 * `toolpin history` reads only regular files. A named pipe given as a log (or found by the log
 * set the language server uses) is skipped with a message saying what it is; before this held,
 * `toolpin history <FIFO>` waited forever for a writer and printed nothing.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { HistoryModel } from '../../server/src/core/history/history';
import { LogSet } from '../../server/src/history/logReader';
import { within } from '../support/waiting';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-history-fifo-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const fifo = path.join(scratch, 'piped.events.jsonl');
const regular = path.join(scratch, 'runtime.events.jsonl');
assert.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo works here');
copyFileSync(path.join(root, 'test', 'fixtures', 'history', 'logs', 'runtime.events.jsonl'), regular);

function history(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'history', '--offline', ...args], { cwd: scratch, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
    // A run that hangs is ended so the assertion below can name it (and no process is left).
    setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
  });
}

describe('toolpin history and a named pipe', () => {
  test('history <FIFO> ends at once, says the pipe was skipped and exits 2', { timeout: 30_000 }, async () => {
    const result = await history('piped.events.jsonl');
    assert.notEqual(result.status, null, 'the run ended by itself');
    assert.equal(result.status, 2, result.stdout + result.stderr);
    assert.match(result.stderr, /toolpin history: cannot read piped\.events\.jsonl: not a regular file \(a named pipe \(FIFO\)\); skipped/);
  });

  test('a FIFO next to a regular log: the log is read, the pipe is skipped and named', { timeout: 30_000 }, async () => {
    const result = await history('piped.events.jsonl', 'runtime.events.jsonl', '--format', 'json');
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /cannot read piped\.events\.jsonl: not a regular file \(a named pipe \(FIFO\)\); skipped/);
    const report = JSON.parse(result.stdout) as { logs: unknown[]; summary: { executions: number } };
    assert.equal(report.logs.length, 1);
    assert.ok(report.summary.executions > 0, 'the regular log was read');
  });

  test("the language server's log set skips a FIFO it is handed, with the reason, and reads the rest", { timeout: 30_000 }, async () => {
    const model = new HistoryModel({ recentLimit: 5 });
    const logs = new LogSet(model, async () => [fifo, regular], (file) => path.basename(file));
    const result = await within(logs.update(), 10_000, 'the log set to read a FIFO and a regular log');
    assert.deepEqual(result.unreadable, [{ file: fifo, reason: 'not a regular file (a named pipe (FIFO)); skipped' }]);
    assert.ok(model.keys().length > 0, 'the regular log was read');
  });
});
