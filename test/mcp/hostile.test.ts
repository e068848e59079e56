/**
 * Hostile stdio servers (test/fixtures/servers/fixture-server.mjs --hostile …) against the real
 * inventory: each one ends in a precise "cannot verify" state for that server only, within a
 * bounded time and memory, and no credential it was given reaches a message or a log line.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';

import type { ServerDefinition } from '../../server/src/core/verify/registry';
import type { ServerListing } from '../../server/src/core/verify/verify';
import { environmentCredentials, Redactor } from '../../server/src/mcp/credentials';
import { Inventory } from '../../server/src/mcp/inventory';

const root = path.resolve(__dirname, '..', '..', '..');
const FIXTURE = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const OVERSIZED = path.join(root, 'test', 'fixtures', 'servers', 'oversized-http.mjs');
const TIMEOUT = 30_000;

function fixture(name: string, args: readonly string[], env: Record<string, string> = {}): ServerDefinition {
  return { name, origin: { kind: 'user-setting' }, transport: { kind: 'stdio', command: process.execPath, args: [FIXTURE, ...args], env }, auth: undefined, unusable: undefined, cwd: root };
}

const inventories: Inventory[] = [];
const httpServers: ChildProcess[] = [];
after(async () => {
  for (const inventory of inventories) await inventory.dispose();
  for (const child of httpServers) if (child.exitCode === null) child.kill('SIGKILL');
});

/** The fixture over Streamable HTTP on an ephemeral loopback port; resolves with its URL. */
async function httpFixture(args: readonly string[], command: readonly string[] = [FIXTURE, '--http']): Promise<string> {
  const child = spawn(process.execPath, [...command, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  httpServers.push(child);
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /^LISTENING (\d+)$/m.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the fixture exited with ${code}`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

async function listOnce(definition: ServerDefinition, logs: string[] = []): Promise<ServerListing> {
  const inventory = new Inventory({
    credentials: environmentCredentials({}),
    redactor: new Redactor(),
    log: (line) => logs.push(line),
    clientVersion: '0.0.0-test',
    trust: () => ({ trusted: true }),
    keepAlive: false,
    requestTimeoutMs: 15_000,
    overallTimeoutMs: 20_000,
  });
  inventories.push(inventory);
  await inventory.ensure([definition]);
  const listing = inventory.listing(definition);
  assert.ok(listing);
  return listing;
}

function unavailable(listing: ServerListing): Extract<ServerListing, { status: 'unavailable' }> {
  assert.equal(listing.status, 'unavailable', JSON.stringify(listing).slice(0, 500));
  return listing as Extract<ServerListing, { status: 'unavailable' }>;
}

describe('hostile stdio servers', () => {
  test('a 20 MB message line is a protocol error of that server, in bounded memory', { timeout: TIMEOUT }, async () => {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const started = performance.now();
    const listing = unavailable(await listOnce(fixture('huge', ['--stdio', '--hostile', 'huge-line'])));
    clearInterval(sampler);
    console.log(`20 MB line: ${(performance.now() - started).toFixed(0)} ms, peak RSS growth ${((peak - before) / 1048576).toFixed(1)} MiB`);
    assert.equal(listing.reason, 'protocol-error');
    assert.match(listing.message, /longer than 10 MiB/);
  });

  test('endless standard output without a newline ends at the line limit', { timeout: TIMEOUT }, async () => {
    const started = performance.now();
    const listing = unavailable(await listOnce(fixture('endless', ['--stdio', '--hostile', 'endless-stdout'])));
    console.log(`endless stdout: ended after ${(performance.now() - started).toFixed(0)} ms`);
    assert.equal(listing.reason, 'protocol-error');
    assert.match(listing.message, /longer than 10 MiB/);
  });

  for (const [mode, pattern] of [
    ['duplicate-member', /the member "description" appears twice/],
    ['lone-surrogate', /the member "description" holds a lone UTF-16 surrogate/],
  ] as const) {
    test(`--hostile ${mode}: that tool can never be verified; the others still can`, { timeout: TIMEOUT }, async () => {
      const listing = await listOnce(fixture(mode, ['--stdio', '--hostile', mode]));
      assert.equal(listing.status, 'listed');
      if (listing.status !== 'listed') return;
      const byName = new Map(listing.listing.tools.map((tool) => [tool.name, tool]));
      assert.match(byName.get('read_file')?.unpinnable ?? '', pattern);
      assert.equal(byName.get('echo_upper')?.unpinnable, undefined);
    });
  }

  test('over Streamable HTTP too, a tool served with a duplicate member can never be verified', { timeout: TIMEOUT }, async () => {
    const url = await httpFixture(['--hostile', 'duplicate-member']);
    const definition: ServerDefinition = { name: 'http-dup', origin: { kind: 'user-setting' }, transport: { kind: 'http', url, headers: {} }, auth: undefined, unusable: undefined, cwd: root };
    const listing = await listOnce(definition);
    assert.equal(listing.status, 'listed', JSON.stringify(listing));
    if (listing.status !== 'listed') return;
    const byName = new Map(listing.listing.tools.map((tool) => [tool.name, tool]));
    assert.match(byName.get('read_file')?.unpinnable ?? '', /the member "description" appears twice/);
    assert.equal(byName.get('echo_upper')?.unpinnable, undefined);
  });

  test('a JSON-RPC error answering initialize shows the server\'s own message', { timeout: TIMEOUT }, async () => {
    const listing = unavailable(await listOnce(fixture('refuses', ['--stdio', '--hostile', 'initialize-error'])));
    assert.equal(listing.reason, 'protocol-error');
    assert.match(listing.message, /licence key: set ACME_LICENCE/);
    assert.doesNotMatch(listing.message, /connection closed/);
  });

  test('a token passed in env and printed on standard error never reaches a message or a log', { timeout: TIMEOUT }, async () => {
    const token = 'tok-5f3a9c1e7b2d4086';
    const logs: string[] = [];
    const listing = unavailable(await listOnce(fixture('leaky', ['--stdio', '--stderr-env', 'FIXTURE_TOKEN'], { FIXTURE_TOKEN: token }), logs));
    assert.match(listing.message, /auth failed for token «redacted»/);
    assert.ok(logs.length > 0);
    for (const text of [listing.message, ...logs]) assert.ok(!text.includes(token), text);
  });
});

describe('oversized HTTP answers', () => {
  // Each fixture answers initialize with too much (oversized-http.mjs); the request timeout is
  // 15 s, so an answer that is not cut at the bound would show up as a timeout or a crash.
  for (const mode of ['gzip-bomb', 'huge-json', 'endless-event'] as const) {
    test(`${mode}: "answer larger than 10 MiB" for that server only, in bounded time and memory`, { timeout: 60_000 }, async () => {
      const url = await httpFixture(['--mode', mode], [OVERSIZED]);
      const oversized: ServerDefinition = { name: `http-${mode}`, origin: { kind: 'user-setting' }, transport: { kind: 'http', url, headers: {} }, auth: undefined, unusable: undefined, cwd: root };
      const healthy = fixture('healthy', ['--stdio']);
      const inventory = new Inventory({
        credentials: environmentCredentials({}),
        redactor: new Redactor(),
        log: () => undefined,
        clientVersion: '0.0.0-test',
        trust: () => ({ trusted: true }),
        keepAlive: false,
        requestTimeoutMs: 15_000,
        overallTimeoutMs: 20_000,
      });
      inventories.push(inventory);
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
      const started = performance.now();
      await inventory.ensure([oversized, healthy]);
      const elapsed = performance.now() - started;
      clearInterval(sampler);
      const growth = (peak - before) / 1048576;
      console.log(`${mode}: ${elapsed.toFixed(0)} ms, peak RSS growth ${growth.toFixed(1)} MiB`);
      const listing = unavailable(inventory.listing(oversized)!);
      assert.equal(listing.reason, 'protocol-error');
      assert.match(listing.message, /answer larger than 10 MiB/);
      assert.equal(inventory.listing(healthy)?.status, 'listed');
      // Well under the 15 s request timeout even on a loaded machine, and far from the gigabytes
      // an unbounded read takes.
      assert.ok(elapsed < 10_000, `took ${elapsed.toFixed(0)} ms`);
      assert.ok(growth < 256, `peak RSS grew ${growth.toFixed(1)} MiB`);
    });
  }
});
