/**
 * Dispatch history follows file events, not polling (issue 9, item 6). Where the client watches
 * files for the server, a log that grows is read when the client says it changed, and no timer
 * reads it otherwise: an append without an event sends no history-changed notification. A client
 * that cannot watch gets the fallback: the known logs are read every 2 s. A created log, reported
 * as created, is found without any walk of the folders on a timer. Time is the harness's virtual
 * clock: "nothing polls" is "no timer fires while 3 s pass", and the poll runs when 2 s have.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { DidChangeWatchedFilesNotification, FileChangeType } from 'vscode-languageserver-protocol';
import { HistoryChangedNotification, HistoryRequest } from '../../../server/src/protocol';
import { pathToUri } from '../../../server/src/util/uris';
import { startInProcessServer, type InProcessServer } from '../../support/inProcessServer';

const HASH = 'fnv1a64:0123456789abcdef';

function dispatched(seq: number, execution: string): string {
  return `${JSON.stringify({ type: 'MCP_DISPATCHED', seq, at: `2026-11-20T10:00:${String(seq % 60).padStart(2, '0')}.000Z`, executionId: execution, blueprint: 'b', stepId: 's', data: { toolName: 'echo', server: 'demo', schemaHash: HASH } })}\n`;
}

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function workspace(): { folder: string; log: string } {
  const folder = mkdtempSync(path.join(tmpdir(), 'toolpin-history-events-'));
  folders.push(folder);
  const log = path.join(folder, 'runs.events.jsonl');
  writeFileSync(log, dispatched(1, 'exec_1'));
  return { folder, log };
}

/** The executions once the start-up scan has found the first log (it runs after initialized, and says so). */
async function executionsAfterStart(server: InProcessServer): Promise<number> {
  await server.notification(HistoryChangedNotification.method);
  return executions(server);
}

async function executions(server: InProcessServer): Promise<number> {
  const report = await server.connection.sendRequest(HistoryRequest, {});
  return (report?.servers ?? []).flatMap((entry) => entry.tools).flatMap((tool) => tool.hashes).reduce((sum, hash) => sum + hash.count, 0);
}

/** Waits for the next history-changed notification after the `seen` first ones. */
function changedAfter(server: InProcessServer, seen: number): Promise<unknown> {
  return server.notification(HistoryChangedNotification.method, (_params, index) => index >= seen);
}

describe('dispatch history by file events', () => {
  test('a watching client: an append is read on its event, and nothing polls in between', async () => {
    const { folder, log } = workspace();
    const server = await startInProcessServer({
      rootUri: pathToUri(folder),
      acceptRegistrations: true,
      capabilities: { workspace: { didChangeWatchedFiles: { dynamicRegistration: true } } },
    });
    try {
      assert.equal(await executionsAfterStart(server), 1);
      const seen = server.notificationCount(HistoryChangedNotification.method);
      appendFileSync(log, dispatched(2, 'exec_2'));
      // Longer than the fallback poll's period: no timer fires at all, so none reads the log.
      const fired = server.clock.fired();
      await server.clock.advance(3000);
      assert.equal(server.clock.fired(), fired, 'a timer fired within 3 s: something polls');
      assert.equal(server.notificationCount(HistoryChangedNotification.method), seen, 'no poll read the appended event');
      await server.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: pathToUri(log), type: FileChangeType.Changed }] });
      await changedAfter(server, seen);
      assert.equal(await executions(server), 2);

      const second = path.join(folder, 'more.events.jsonl');
      writeFileSync(second, dispatched(3, 'exec_3'));
      await server.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: pathToUri(second), type: FileChangeType.Created }] });
      await changedAfter(server, seen + 1);
      assert.equal(await executions(server), 3);
    } finally {
      await server.stop();
    }
  });

  test('a client that cannot watch: the known logs are read every 2 s', async () => {
    const { folder, log } = workspace();
    const server = await startInProcessServer({ rootUri: pathToUri(folder) });
    try {
      assert.equal(await executionsAfterStart(server), 1);
      const seen = server.notificationCount(HistoryChangedNotification.method);
      appendFileSync(log, dispatched(2, 'exec_2'));
      // No event comes: once the poll's 2 s have passed, the poll reads the append.
      assert.equal(server.notificationCount(HistoryChangedNotification.method), seen);
      await server.clock.advance(2000);
      await changedAfter(server, seen);
      assert.equal(await executions(server), 2);
    } finally {
      await server.stop();
    }
  });
});
