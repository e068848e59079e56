/**
 * Ending a stdio server's process tree (server/src/mcp/processTree.ts) through the real
 * transport and the real fixture server: the server, a grandchild in its group and a grandchild
 * that called setsid() are all gone when `close()` resolves, and ending them reads /proc only
 * asynchronously, so the event loop (the language server's thread) is never held by a scan.
 * Before this held, `close()` left the setsid grandchild running and read /proc synchronously
 * (a full readdirSync + readFileSync of every process, every 25 ms of the grace period).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';

import { ProcessTreeStdioTransport } from '../../server/src/mcp/processTransport';
import { isAlive, waitFor } from '../support/waiting';

const root = path.resolve(__dirname, '..', '..', '..');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-process-tree-'));
const started: number[] = [];
after(() => {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone, as asserted.
    }
  }
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** Counts synchronous reads of /proc while `action` runs. */
async function countSyncProcReads(action: () => Promise<void>): Promise<number> {
  // The module object itself (not an import namespace): the code under test reads its functions
  // from it at each call, so replacing them here is seen there.
  const mutableFs = fs as unknown as Record<'readdirSync' | 'readFileSync', (...args: unknown[]) => unknown>;
  const originals = { readdirSync: mutableFs.readdirSync, readFileSync: mutableFs.readFileSync };
  let count = 0;
  for (const name of ['readdirSync', 'readFileSync'] as const) {
    mutableFs[name] = (...args: unknown[]) => {
      if (String(args[0]).startsWith('/proc')) count++;
      return originals[name].apply(fs, args);
    };
  }
  try {
    await action();
  } finally {
    mutableFs.readdirSync = originals.readdirSync;
    mutableFs.readFileSync = originals.readFileSync;
  }
  return count;
}

describe('ending a stdio server process tree', () => {
  test('close() ends the server, its group and its setsid grandchild, without a synchronous scan of /proc', { timeout: 30_000 }, async () => {
    const files = ['server.pid', 'group-child.pid', 'setsid-child.pid'].map((name) => path.join(scratch, name));
    const transport = new ProcessTreeStdioTransport({
      command: process.execPath,
      args: [fixtureServer, '--stdio', '--ignore-stdin-eof', '--child-lifetime-ms', '60000', '--pid-file', files[0]!, '--spawn-child', files[1]!, '--spawn-detached-child', files[2]!],
      env: { ...process.env } as Record<string, string>,
      cwd: scratch,
    });
    await transport.start();
    await waitFor('the server and both grandchildren to start', () => files.every((file) => fs.existsSync(file) && fs.readFileSync(file, 'utf8').length > 0), 15_000);
    const pids = files.map((file) => Number(fs.readFileSync(file, 'utf8')));
    started.push(...pids);
    assert.ok(pids.every((pid) => isAlive(pid)), 'all three run before close()');

    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const syncReads = await countSyncProcReads(() => transport.close());
    delay.disable();
    // The figure, for the record: the longest the event loop waited while the tree ended.
    process.stdout.write(`# close(): ${syncReads} synchronous read(s) of /proc; longest event-loop delay ${(delay.max / 1e6).toFixed(1)} ms\n`);
    const stillRunning = ['the server', 'its grandchild in its group', 'its setsid grandchild'].filter((_, index) => isAlive(pids[index]!));
    assert.deepEqual(stillRunning, [], 'nothing runs once close() resolved');
    assert.equal(syncReads, 0, 'no synchronous read of /proc while the tree ended');
  });
});
