/**
 * The dispatch-history requests through the real server over stdio: the report for a fixture log
 * (live hash from the fixture MCP server, the pinned hash from a blueprint, a stale one), the change
 * notification when the log grows, the executions of one hash, and locating a step.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { HistoryExecutionsRequest, type HistoryReport, HistoryRequest, LocateStepRequest } from '../../server/src/protocol';
import { repoRoot, startTestServer, type TestServer } from '../support/lspClient';

const fixtureServer = path.join(repoRoot(), 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const LIVE = 'fnv1a64:a76fe8d6d023fca0';
const OLD = 'fnv1a64:0123456789abcdef';
let server: TestServer;
let workspace: string;
let log: string;
let changes = 0;

function dispatched(seq: number, execution: string, hash: string): string {
  return `${JSON.stringify({ type: 'MCP_DISPATCHED', seq, at: `2026-11-20T10:${String(seq % 60).padStart(2, '0')}:00.000Z`, executionId: execution, blueprint: 'shout', stepId: 'shout', data: { toolName: 'echo_upper', server: 'demo', schemaHash: hash } })}\n`;
}

before(async () => {
  workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-history-'));
  writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio'] } } }));
  writeFileSync(path.join(workspace, 'shout.blueprint.jsonc'), `{
  "blueprint": "shout", "formatVersion": 1,
  "steps": [ { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "${LIVE}" } } ]
}
`);
  log = path.join(workspace, 'runs.events.jsonl');
  writeFileSync(log, dispatched(1, 'exec_old_1', OLD) + '{"type":"STEP_COMPLETED","seq":2}\n' + dispatched(3, 'exec_old_2', OLD) + 'not json\n' + dispatched(5, 'exec_live_1', LIVE));
  server = await startTestServer({ rootUri: `file://${workspace}` });
  server.connection.onNotification('toolpin/historyChanged', () => void changes++);
});

after(async () => {
  await server.stop();
  rmSync(workspace, { recursive: true, force: true });
});

async function report(staleOnly = false): Promise<HistoryReport> {
  // The live listing arrives asynchronously: ask until the live hash is known (bounded).
  for (let attempt = 0; attempt < 100; attempt++) {
    const result = await server.connection.sendRequest(HistoryRequest, { staleOnly });
    const tool = result?.servers[0]?.tools[0];
    if (result && tool && tool.liveState !== 'unknown') return result;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the live hash never became known');
}

test('the report groups executions by server, tool and hash, with their status', async () => {
  const result = await report();
  assert.equal(result.version, 1);
  assert.deepEqual(result.servers.map((entry) => entry.server), ['demo']);
  const tool = result.servers[0]!.tools[0]!;
  assert.equal(tool.tool, 'echo_upper');
  assert.equal(tool.liveHash, LIVE);
  const statuses = Object.fromEntries(tool.hashes.map((hash) => [hash.schemaHash, [hash.status, hash.count]]));
  assert.deepEqual(statuses, { [LIVE]: ['pinned+live', 1], [OLD]: ['stale', 2] });
  assert.equal(result.summary.malformed, 1);
  assert.equal(result.summary.skipped, 1);
});

test('the stale filter lists exactly the executions at a hash that is not live', async () => {
  const result = await report(true);
  const ids = result.servers.flatMap((entry) => entry.tools.flatMap((tool) => tool.hashes.flatMap((hash) => hash.executions.map((execution) => execution.executionId)))).sort();
  assert.deepEqual(ids, ['exec_old_1', 'exec_old_2']);
});

test('appending to the log notifies the client and the model reads only the tail', async () => {
  const before = changes;
  appendFileSync(log, dispatched(6, 'exec_old_3', OLD));
  for (let attempt = 0; attempt < 60 && changes === before; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(changes > before, 'toolpin/historyChanged arrived');
  const result = await report();
  const old = result.servers[0]!.tools[0]!.hashes.find((hash) => hash.schemaHash === OLD)!;
  assert.equal(old.count, 3);
  const all = await server.connection.sendRequest(HistoryExecutionsRequest, { server: 'demo', tool: 'echo_upper', schemaHash: OLD });
  assert.deepEqual(all.map((execution) => execution.executionId).sort(), ['exec_old_1', 'exec_old_2', 'exec_old_3']);
});

test('an execution leads to its blueprint step', async () => {
  const location = await server.connection.sendRequest(LocateStepRequest, { blueprint: 'shout', stepId: 'shout' });
  assert.ok(location, 'the step is found');
  assert.ok(location.uri.endsWith('/shout.blueprint.jsonc'));
  assert.equal(location.range.start.line, 2);
});
