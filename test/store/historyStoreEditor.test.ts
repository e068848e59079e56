/**
 * The dispatch-history tree read from a team store (`toolpin.history.store`, issue 27) through the
 * real language server over stdio and a real PostgreSQL cluster (test/support/postgres.ts):
 *
 * - the tree's report comes from the store, not from the workspace's logs;
 * - an ingest that commits NOTIFYs, and the server tells the client (no refresh, no timer);
 * - a URL with a password in the settings is refused, and the store is not contacted;
 * - an untrusted workspace's store is not contacted until the workspace is trusted;
 * - a store that is down says so.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from 'pg';
import { historyCommand } from '../../server/src/cli/historyCommand';
import type { CliIo } from '../../server/src/cli/io';
import { DidChangeTrustNotification, HistoryExecutionsRequest, HistoryRequest, type HistoryViewReport } from '../../server/src/protocol';
import { startTestServer, type TestServer } from '../support/lspClient';
import { startTestCluster, type TestCluster } from '../support/postgres';
import { waitFor } from '../support/waiting';

const HASH = 'fnv1a64:a76fe8d6d023fca0';
let cluster: TestCluster;
let databases = 0;
const folders: string[] = [];

function freshStore(): string {
  const name = `editor_${++databases}`;
  cluster.createDatabase(name);
  return cluster.url(name);
}

function dispatched(seq: number, execution: string): string {
  return `${JSON.stringify({ type: 'MCP_DISPATCHED', seq, at: `2026-11-20T10:${String(seq % 60).padStart(2, '0')}:00.000Z`, executionId: execution, blueprint: 'flow', stepId: 'call', data: { toolName: 'echo', server: 'demo', schemaHash: HASH } })}\n`;
}

/** A workspace folder holding one log that only the file reader would see. */
function workspaceWithLocalLog(): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-store-editor-'));
  folders.push(folder);
  fs.writeFileSync(path.join(folder, 'local.events.jsonl'), dispatched(1, 'exec_local_file'));
  return folder;
}

/** Ingests `text` as the log `name` of `folder` into `store` (the CLI's own ingest). */
async function ingest(folder: string, store: string, name: string, text: string): Promise<void> {
  fs.writeFileSync(path.join(folder, name), text);
  let stderr = '';
  const io: CliIo = { readFile: (file) => fs.promises.readFile(file, 'utf8'), readStdin: async () => '', stdout: () => undefined, stderr: (line) => void (stderr += line), stderrIsTerminal: false, cwd: folder };
  const status = await historyCommand(io, { logs: ['ingest', name], store, format: 'json', workspace: folder, trust: true });
  assert.equal(status, 0, stderr);
}

function executionIds(report: HistoryViewReport | null): string[] {
  return (report?.servers ?? []).flatMap((server) => server.tools.flatMap((tool) => tool.hashes.flatMap((hash) => hash.executions.map((execution) => execution.executionId)))).sort();
}

/** The language server's connections to the cluster (by the application name the store sets). */
async function toolpinConnections(url: string): Promise<number> {
  const client = new Client({ connectionString: url, application_name: 'test-observer' });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'toolpin'`);
    return Number(result.rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

async function startServer(folder: string, store: string, trusted: boolean | null): Promise<{ server: TestServer; changes: () => number }> {
  const server = await startTestServer({ rootUri: `file://${folder}`, settings: { history: { store } }, trusted, env: { ...process.env, XDG_CONFIG_HOME: path.join(folder, 'config') } });
  let changes = 0;
  server.connection.onNotification('toolpin/historyChanged', () => void changes++);
  return { server, changes: () => changes };
}

before(async () => {
  cluster = await startTestCluster();
});

after(() => {
  cluster?.stop();
  for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
});

describe('the dispatch-history tree from a team store', () => {
  test('answers from the store, and an ingest elsewhere reaches the tree by NOTIFY', async () => {
    const store = freshStore();
    const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-store-runtime-'));
    folders.push(runtime);
    await ingest(runtime, store, 'a.events.jsonl', dispatched(1, 'exec_a1') + dispatched(2, 'exec_a2'));
    const folder = workspaceWithLocalLog();
    const { server, changes } = await startServer(folder, store, true);
    try {
      const first = await server.connection.sendRequest(HistoryRequest, {});
      assert.equal(first?.store?.problem, null, JSON.stringify(first?.store));
      assert.deepEqual(executionIds(first), ['exec_a1', 'exec_a2'], 'the store answers, not the workspace log');
      assert.deepEqual(first?.logs.map((log) => log.log), ['a.events.jsonl']);

      // Another runtime ingests: the server hears the NOTIFY and tells the client.
      const before = changes();
      await ingest(runtime, store, 'b.events.jsonl', dispatched(7, 'exec_b1'));
      await waitFor('toolpin/historyChanged after the ingest', () => changes() > before, 30_000);
      const second = await server.connection.sendRequest(HistoryRequest, {});
      assert.deepEqual(executionIds(second), ['exec_a1', 'exec_a2', 'exec_b1']);
      const all = await server.connection.sendRequest(HistoryExecutionsRequest, { server: 'demo', tool: 'echo', schemaHash: HASH });
      assert.deepEqual(all.map((execution) => execution.executionId).sort(), ['exec_a1', 'exec_a2', 'exec_b1']);
    } finally {
      await server.stop();
    }
  });

  test('a store URL with a password in the settings is refused, and the store is not contacted', async () => {
    const store = freshStore();
    await ingest(workspaceWithLocalLog(), store, 'a.events.jsonl', dispatched(1, 'exec_a1'));
    const withPassword = store.replace('postgres@', 'postgres:hunter2-secret@');
    const folder = workspaceWithLocalLog();
    const { server } = await startServer(folder, withPassword, true);
    try {
      const report = await server.connection.sendRequest(HistoryRequest, {});
      const problem = report?.store?.problem ?? '';
      assert.match(problem, /holds a password/);
      assert.match(problem, /PGPASSWORD, ~\/\.pgpass or the command "Toolpin: Set History Store Password"/);
      assert.doesNotMatch(JSON.stringify(report), /hunter2-secret/, 'the password is never shown');
      assert.deepEqual(executionIds(report), [], 'nothing is read, from the store or the logs');
      assert.equal(await toolpinConnections(store), 0, 'no connection was made');
    } finally {
      await server.stop();
    }
  });

  test('an untrusted workspace does not contact its store until it is trusted', async () => {
    const store = freshStore();
    await ingest(workspaceWithLocalLog(), store, 'a.events.jsonl', dispatched(1, 'exec_a1'));
    const folder = workspaceWithLocalLog();
    const { server, changes } = await startServer(folder, store, false);
    try {
      const refused = await server.connection.sendRequest(HistoryRequest, {});
      assert.match(refused?.store?.problem ?? '', /the workspace is not trusted, so Toolpin did not contact the history store postgres:\/\/postgres@127\.0\.0\.1/);
      assert.deepEqual(executionIds(refused), []);
      assert.equal(await toolpinConnections(store), 0, 'no connection was made');

      const before = changes();
      await server.connection.sendNotification(DidChangeTrustNotification, { trusted: true });
      await waitFor('toolpin/historyChanged after trust', () => changes() > before, 10_000);
      const trusted = await server.connection.sendRequest(HistoryRequest, {});
      assert.equal(trusted?.store?.problem, null);
      assert.deepEqual(executionIds(trusted), ['exec_a1']);
    } finally {
      await server.stop();
    }
  });

  test('a client that says nothing about trust needs a toolpin trust record', async () => {
    const store = freshStore();
    const folder = workspaceWithLocalLog();
    const { server } = await startServer(folder, store, null);
    try {
      const report = await server.connection.sendRequest(HistoryRequest, {});
      assert.match(report?.store?.problem ?? '', /run `toolpin trust .*` to trust it/);
      assert.equal(await toolpinConnections(store), 0);
    } finally {
      await server.stop();
    }
  });

  test('a store that is down says so, and the tree has nothing else to show', async () => {
    const folder = workspaceWithLocalLog();
    const { server } = await startServer(folder, 'postgres://postgres@127.0.0.1:1/nowhere', true);
    try {
      const report = await server.connection.sendRequest(HistoryRequest, {});
      assert.match(report?.store?.problem ?? '', /is down or not listening/);
      assert.deepEqual(executionIds(report), []);
    } finally {
      await server.stop();
    }
  });
});
