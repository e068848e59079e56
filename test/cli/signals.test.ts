/**
 * No orphans: a Toolpin process that is stopped by a signal ends every process it started first.
 *
 * The server in each case is the fixture server at its most stubborn: it never answers
 * `tools/list` (so the signal arrives mid-listing), it ignores the end of its standard input (so
 * the pipe closing when Toolpin dies does not end it), it has a grandchild in its process group,
 * and a grandchild that called setsid() (in another group and session). Before this held, every
 * one of these processes outlived `toolpin check` after SIGINT, SIGTERM and SIGHUP, and
 * `toolpin lsp --stdio` after SIGTERM; when the language server's
 * client went away (its input closed), the setsid grandchild outlived it.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { startTestServer } from '../support/lspClient';
import { isAlive, waitFor } from '../support/waiting';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-signals-'));
const everyPid: number[] = [];
after(() => {
  // A failed case must not leave its processes running for the next test file.
  for (const pid of everyPid) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone: what the tests assert.
    }
  }
  rmSync(scratch, { recursive: true, force: true });
});

interface Workspace {
  readonly folder: string;
  readonly blueprint: string;
  readonly pidFiles: readonly string[];
  readonly requests: string;
}

function workspace(name: string): Workspace {
  const folder = path.join(scratch, name);
  const pidFiles = ['server.pid', 'group-child.pid', 'setsid-child.pid'].map((file) => path.join(folder, file));
  const requests = path.join(folder, 'requests.jsonl');
  const args = [fixtureServer, '--stdio', '--hang', '--log-requests', requests, '--ignore-stdin-eof', '--child-lifetime-ms', '60000', '--pid-file', pidFiles[0]!, '--spawn-child', pidFiles[1]!, '--spawn-detached-child', pidFiles[2]!];
  mkdirSync(folder);
  writeFileSync(path.join(folder, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args } } }));
  const blueprint = path.join(folder, 'flow.blueprint.jsonc');
  writeFileSync(blueprint, `{ "blueprint": "flow", "formatVersion": 1, "steps": [ { "id": "a", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "fnv1a64:0000000000000000" } } ] }\n`);
  return { folder, blueprint, pidFiles, requests };
}

/**
 * The pids of the server and its two grandchildren, once all three have written them and the
 * server has received `tools/list` (which it never answers): the listing is under way.
 */
async function fixturePids(place: Workspace): Promise<number[]> {
  await waitFor('the fixture server and its grandchildren to start', () => place.pidFiles.every((file) => existsSync(file) && readFileSync(file, 'utf8').length > 0), 15_000);
  await waitFor('the server to receive tools/list', () => existsSync(place.requests) && readFileSync(place.requests, 'utf8').includes('"method":"tools/list"'), 15_000);
  const pids = place.pidFiles.map((file) => Number(readFileSync(file, 'utf8')));
  everyPid.push(...pids);
  return pids;
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

async function assertAllEnded(pids: readonly number[], what: string): Promise<void> {
  const names = ['the server', 'its grandchild in its group', 'its setsid grandchild'];
  await waitFor(`${what}: ${pids.map((pid, index) => `${names[index]} (${pid})`).join(', ')} to end`, () => pids.every((pid) => !isAlive(pid)), 5000).catch((error: Error) => {
    const alive = pids.flatMap((pid, index) => (isAlive(pid) ? [names[index]] : []));
    throw new Error(`${error.message}; still running: ${alive.join(', ')}`);
  });
}

describe('a signal to a Toolpin process ends every process it started', () => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    test(`toolpin check, ${signal} mid-listing: exit ${128 + constants.signals[signal]} and no server, grandchild or setsid grandchild left`, { timeout: 30_000 }, async () => {
      const place = workspace(`check-${signal}`);
      const child = spawn(process.execPath, [cli, 'check'], { cwd: place.folder, env: { ...process.env, TOOLPIN_TRUST: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const pids = await fixturePids(place);
      assert.equal(child.exitCode, null, `check is still listing: ${output}`);
      child.kill(signal);
      const exit = await exited(child);
      assert.deepEqual(exit, { code: 128 + constants.signals[signal], signal: null }, output);
      await assertAllEnded(pids, `check after ${signal}`);
    });
  }

  // The editor starts the same entry (`toolpin lsp --node-ipc`): dist/cli.js is the only server bundle.
  const servers = { 'toolpin lsp --stdio': [cli, 'lsp', '--stdio'] };
  for (const [name, command] of Object.entries(servers)) {
    test(`${name}, SIGTERM while a listing hangs: exit 143 and no server, grandchild or setsid grandchild left`, { timeout: 30_000 }, async () => {
      const place = workspace(`lsp-SIGTERM-${command.length}`);
      const server = await startTestServer({ command, rootUri: `file://${place.folder}` });
      try {
        server.open(`file://${place.blueprint}`, readFileSync(place.blueprint, 'utf8'));
        const pids = await fixturePids(place);
        server.process.kill('SIGTERM');
        const exit = await exited(server.process);
        assert.deepEqual(exit, { code: 128 + constants.signals.SIGTERM, signal: null }, server.stderr());
        await assertAllEnded(pids, `${name} after SIGTERM`);
      } finally {
        server.connection.dispose();
      }
    });
  }

  test('toolpin lsp --stdio whose client goes away (standard input closes, no exit notification): no process left', { timeout: 30_000 }, async () => {
    const place = workspace('lsp-stdin-closed');
    const server = await startTestServer({ command: [cli, 'lsp', '--stdio'], rootUri: `file://${place.folder}` });
    try {
      server.open(`file://${place.blueprint}`, readFileSync(place.blueprint, 'utf8'));
      const pids = await fixturePids(place);
      server.process.stdin!.end();
      await exited(server.process);
      await assertAllEnded(pids, 'the language server after its input closed');
    } finally {
      server.connection.dispose();
    }
  });
});
