/**
 * A client that names the disk root (`file:///`) as its workspace folder, through the built server
 * over stdio: the searches of the folder (documents, dispatch logs) stop at their budget with one
 * warning (window/showMessage, no diagnostic), skip the system folders, and yield, so that the
 * server answers requests all along and spends well under 10 s of CPU in its first 20 s. Before,
 * it walked the whole disk for minutes (continuous CPU, up to 2 GiB) without a word.
 * The CPU time is read from /proc (Linux, as CI runs). The client says the folder is not trusted:
 * no server found on the disk is ever started.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ShowMessageNotification, type ShowMessageParams } from 'vscode-languageserver-protocol';
import { ServerInfoRequest } from '../../server/src/protocol';
import { startTestServer } from '../support/lspClient';

const WINDOW_MS = 20_000;
const CPU_BOUND_S = 10;
/** Generous for a loaded 2-core machine: a request waits behind at most a few thousand entries. */
const ANSWER_BOUND_MS = 5_000;

/** User plus system CPU seconds of a process, from /proc/<pid>/stat (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  // After the command name: state is field 3, utime field 14, stime field 15 (1-based).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

test('the disk root as workspace folder: bounded, announced discovery; requests answered meanwhile', { timeout: 120_000 }, async () => {
  const started = Date.now();
  const server = await startTestServer({ rootUri: 'file:///', trusted: false });
  const messages: ShowMessageParams[] = [];
  server.connection.onNotification(ShowMessageNotification.type, (params) => void messages.push(params));
  try {
    const latencies: number[] = [];
    while (Date.now() - started < WINDOW_MS) {
      const asked = Date.now();
      const info = await Promise.race([
        server.connection.sendRequest(ServerInfoRequest),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ANSWER_BOUND_MS * 4)),
      ]);
      assert.ok(info?.version, 'the server answered toolpin/serverInfo');
      latencies.push(Date.now() - asked);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const cpu = cpuSeconds(server.process.pid!);
    assert.ok(Math.max(...latencies) < ANSWER_BOUND_MS, `answers took up to ${Math.max(...latencies)} ms: ${latencies.join(', ')}`);
    assert.ok(cpu < CPU_BOUND_S, `the server used ${cpu} s of CPU in its first ${WINDOW_MS / 1000} s`);
    const warnings = messages.filter((message) => /stopped looking for .* in \/ after/.test(message.message));
    assert.ok(warnings.length >= 1, `a warning says the search stopped: ${JSON.stringify(messages)}`);
    assert.match(warnings[0]!.message, /toolpin\.workspaceScan\.(maxEntries|timeBudgetMs)/);
    assert.ok(!server.published.some((params) => params.diagnostics.some((diagnostic) => /stopped looking/.test(String(diagnostic.message)))), 'the bound is no diagnostic');
  } finally {
    await Promise.race([server.stop(), new Promise((resolve) => setTimeout(resolve, 5000))]);
    server.process.kill('SIGKILL');
  }
});
