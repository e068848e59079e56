/**
 * Many documents opened and closed in the editor (issue 25): the built language server over
 * stdio, a workspace of N connector documents (test/support/manyDocuments.ts), every one opened,
 * then every one closed. Reported: the time until the server answers after the opens and after the
 * closes, and the server's peak memory (VmHWM, Linux).
 *
 *   npm run build && node out/bench/manyDocuments.bench.js [--counts=400,1600]
 *
 * Linear means 1,600 documents cost about four times what 400 cost; results in bench/README.md.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from '../test/support/lspClient';
import { openAndCloseAll, writeConnectors } from '../test/support/manyDocuments';

async function measure(count: number): Promise<void> {
  const workspace = mkdtempSync(join(tmpdir(), 'toolpin-many-bench-'));
  const server = await startTestServer({ rootUri: `file://${workspace}` });
  try {
    const timing = await openAndCloseAll(server, writeConnectors(workspace, count), 600_000);
    const status = readFileSync(`/proc/${server.process.pid!}/status`, 'utf8');
    const peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
    process.stdout.write(`${count} documents: opened ${timing.openMs} ms, answered ${timing.settledMs} ms after the first close, peak ${(peakKb / 1024).toFixed(0)} MiB\n`);
  } finally {
    await Promise.race([server.stop(), new Promise((resolve) => setTimeout(resolve, 5000))]);
    server.process.kill('SIGKILL');
    rmSync(workspace, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const counts = (process.argv.find((arg) => arg.startsWith('--counts='))?.slice('--counts='.length) ?? '400,1600').split(',').map(Number);
  for (const count of counts) await measure(count);
}

void main();
