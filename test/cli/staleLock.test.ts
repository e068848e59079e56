/**
 * Issue 25: a committed `*.toolpin-lock` with `{pid: 1, time: 9e15}` blocked `pin --yes` for
 * 15.7 s and exit 1, every time. A lock whose time is in the future, from another host, from a
 * pid that is not running here, or older than a bound is stale: it is taken over at once and the
 * run says whose lock it was.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const ECHO_UPPER_LIVE = 'e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';

const CONNECTOR = `{
  "name": "demo_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(fixtureServer)}, "--stdio"] },
    "include": ["echo_upper"],
    "toolsSnapshot": { "echo_upper": "sha256:${'4'.repeat(64)}" }
  }
}
`;

describe('stale locks are taken over and named', () => {
  let workspace: string;
  let file: string;
  beforeEach(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-lock-'));
    mkdirSync(path.join(workspace, 'connectors'));
    file = path.join(workspace, 'connectors', 'demo.connector.jsonc');
    writeFileSync(file, CONNECTOR);
  });
  afterEach(() => rmSync(workspace, { recursive: true, force: true }));

  function pinWithLock(lock: object): { status: number | null; stdout: string; stderr: string; seconds: number } {
    writeFileSync(`${file}.toolpin-lock`, JSON.stringify(lock));
    const started = process.hrtime.bigint();
    const result = spawnSync(process.execPath, [cli, 'pin', '--yes'], { cwd: workspace, encoding: 'utf8', timeout: 60_000, input: '', env: { ...process.env, TOOLPIN_TRUST: '1' } });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
  }

  test('a committed {pid: 1, time: 9e15} lock: its time is in the future', () => {
    const result = pinWithLock({ pid: 1, time: 9e15 });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.ok(result.seconds < 10, `took ${result.seconds} s (the lock wait alone was 15 s)`);
    assert.match(result.stderr, /took over the stale lock connectors\/demo\.connector\.jsonc\.toolpin-lock \(pid 1, taken at time 9000000000000000: its time is in the future\)/);
    assert.match(readFileSync(file, 'utf8'), new RegExp(ECHO_UPPER_LIVE));
    assert.equal(existsSync(`${file}.toolpin-lock`), false, 'the lock is released');
  });

  test("another host's lock", () => {
    const result = pinWithLock({ pid: process.pid, host: `not-${hostname()}`, time: Date.now() });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stderr, new RegExp(`pid ${process.pid} on not-${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, taken .*: another host's`));
  });

  test('a lock of this host whose pid is not running', () => {
    const result = pinWithLock({ pid: 2 ** 22 + 7, host: hostname(), time: Date.now() });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stderr, /that process is not running/);
  });

  test('an old lock of a live pid (reused) is stale', () => {
    const result = pinWithLock({ pid: process.pid, host: hostname(), time: Date.now() - 10 * 60_000 });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stderr, /older than 60 s/);
  });
});
