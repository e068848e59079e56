/**
 * The MCP adapter (sessions, the process-tree stdio transport) and the inventory, against REAL
 * servers: two published MCP servers from npm (server-everything over stdio and over its own
 * Streamable HTTP mode, server-memory over stdio) and the hostile fixture server
 * (test/fixtures/servers/fixture-server.mjs) in every mode that must end in a precise state.
 *
 * Nothing here is mocked: pins computed from one live listing are verified against a second,
 * separate connection, and every failure mode is checked for the exact `ServerListing` state it
 * ends in, within its timeout. Every process this file causes to exist is tracked by pid; the last
 * hook proves that none is left.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import { after, describe, test } from 'node:test';

import { analyzeBlueprint } from '../../server/src/core/documents/blueprint';
import { analyzeConnector, type AuthModel } from '../../server/src/core/documents/connector';
import type { CollectedListing } from '../../server/src/core/verify/listing';
import { schemaPin, toolPin } from '../../server/src/core/pins/pins';
import { connectorServers, type ServerDefinition, ServerRegistry } from '../../server/src/core/verify/registry';
import { type ServerListing, type UnavailableReason, type VerificationResult, verifyBlueprint, verifyConnector } from '../../server/src/core/verify/verify';
import { environmentCredentials, Redactor } from '../../server/src/mcp/credentials';
import { Inventory, type InventoryOptions } from '../../server/src/mcp/inventory';
import { McpSession } from '../../server/src/mcp/session';
// The contract's reference tool (docs/formats.md §2) and its two pins.
import { ECHO_SCHEMA_PIN as ECHO_UPPER_SCHEMA_PIN, ECHO_TOOL_PIN as ECHO_UPPER_TOOL_PIN, ECHO_UPPER } from '../support/referenceVectors';
import { isAlive, sleep, waitFor, within } from '../support/waiting';

function findRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${__dirname}`);
    dir = up;
  }
  return dir;
}

const root = findRoot();
const FIXTURE = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const EVERYTHING = path.join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const MEMORY = path.join(root, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-inventory-test-'));

/**
 * The small timeouts of the tests that END in a timeout (they wait for them). Every other test
 * uses {@link PATIENT}: it never waits for its timeout, and on a shared, loaded 2-core machine a
 * fixture's start-up alone (counted against the initialize request) can exceed 1.5 s, which would
 * turn "listed" or "crashed" into a flaky "timeout".
 */
const REQUEST_TIMEOUT_MS = 1500;
const OVERALL_TIMEOUT_MS = 4000;
const FAST: Partial<InventoryOptions> = { requestTimeoutMs: REQUEST_TIMEOUT_MS, overallTimeoutMs: OVERALL_TIMEOUT_MS };
const PATIENT: Partial<InventoryOptions> = { requestTimeoutMs: 8000, overallTimeoutMs: 12_000 };
/** Slack for process start-up on a loaded machine, on top of an overall timeout. */
const SLACK_MS = 1500;
const TEST_TIMEOUT = 20_000;

// ---------------------------------------------------------------------------------------------
// Processes, files and clean-up
// ---------------------------------------------------------------------------------------------

/** Every process id this file caused to exist; the final hook proves all are gone. */
const pids = new Set<number>();
/**
 * What belongs to the running test: its undo steps (run in reverse order after it) and the log
 * lines of its inventories. Kept per test, not global, so the tests of a suite can run
 * concurrently: most of them only wait (for a timeout or a process), which is where the time goes.
 */
interface TestScope {
  readonly cleanups: Array<() => unknown>;
  readonly logs: string[];
}
const scope = new AsyncLocalStorage<TestScope>();

function currentScope(): TestScope {
  const current = scope.getStore();
  if (!current) throw new Error('called outside a liveTest');
  return current;
}

function onCleanup(step: () => unknown): void {
  currentScope().cleanups.push(step);
}

/** A node:test test with its own {@link TestScope}, cleaned up when it ends however it ends. */
function liveTest(name: string, options: { timeout: number }, fn: () => Promise<void>): void {
  test(name, options, async () => {
    const own: TestScope = { cleanups: [], logs: [] };
    try {
      await scope.run(own, fn);
    } finally {
      for (const step of own.cleanups.reverse()) {
        try {
          await step();
        } catch {
          // a failed undo step must not hide the others
        }
      }
    }
  });
}

let fileCounter = 0;
function scratchFile(name: string): string {
  fileCounter++;
  return path.join(scratch, `${fileCounter}-${name}`);
}


/** Reads a pid file written by the fixture and tracks the pid (and kills it after the test). */
function trackedPid(file: string): number {
  const pid = Number(fs.readFileSync(file, 'utf8'));
  assert.ok(Number.isInteger(pid) && pid > 0, `a pid in ${path.basename(file)}`);
  pids.add(pid);
  onCleanup(() => {
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  return pid;
}

function readLog(file: string): Array<Record<string, unknown>> {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

function toolsListRequests(file: string): number {
  return readLog(file).filter((entry) => entry.method === 'tools/list').length;
}

function writeControl(file: string, doc: unknown): void {
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(doc));
  fs.renameSync(temporary, file);
}

interface HttpServer {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a process that listens on loopback, waits for the line that names its port. */
async function startListening(command: string, args: string[], env: Record<string, string>, portLine: RegExp, stream: 'stdout' | 'stderr'): Promise<HttpServer> {
  const proc = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  assert.ok(proc.pid);
  pids.add(proc.pid);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      await within(exited, 5000, 'the HTTP server to exit');
    }
  };
  onCleanup(stop);
  let output = '';
  let stderr = '';
  proc.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const port = await within(
    new Promise<number>((resolve, reject) => {
      proc[stream]?.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const match = portLine.exec(output);
        if (match) resolve(Number(match[1]));
      });
      proc.once('exit', (code) => reject(new Error(`exited with ${code} before listening: ${stderr}`)));
    }),
    8000,
    'the server to listen',
  );
  return { url: `http://127.0.0.1:${port}/mcp`, proc, stop };
}

/** The fixture in HTTP mode on an ephemeral loopback port. */
function startHttpFixture(args: string[]): Promise<HttpServer> {
  return startListening(process.execPath, [FIXTURE, '--http', '--port', '0', '--host', '127.0.0.1', ...args], {}, /^LISTENING (\d+)\n/m, 'stdout');
}

// ---------------------------------------------------------------------------------------------
// Definitions, inventories and listings
// ---------------------------------------------------------------------------------------------

function stdioDefinition(name: string, args: readonly string[], env: Record<string, string> = {}, command = process.execPath): ServerDefinition {
  return { name, origin: { kind: 'user-setting' }, transport: { kind: 'stdio', command, args: [...args], env }, auth: undefined, unusable: undefined, cwd: root };
}

function fixture(name: string, args: readonly string[] = []): ServerDefinition {
  return stdioDefinition(name, [FIXTURE, ...args]);
}

function httpDefinition(name: string, url: string, auth?: AuthModel): ServerDefinition {
  return { name, origin: { kind: 'user-setting' }, transport: { kind: 'http', url, headers: {} }, auth, unusable: undefined, cwd: root };
}

interface TestInventory {
  inventory: Inventory;
  logs: string[];
}

/** Adds the running test's inventory log to an assertion message. */
function withLogs(message: string): string {
  const logs = scope.getStore()?.logs ?? [];
  return logs.length > 0 ? `${message}\n  inventory log:\n    ${logs.slice(-12).join('\n    ')}` : message;
}

function newInventory(options: Partial<InventoryOptions> = {}, env: Record<string, string> = {}): TestInventory {
  const logs: string[] = [];
  const own = currentScope();
  const inventory = new Inventory({
    credentials: environmentCredentials(env),
    redactor: new Redactor(),
    log: (line) => {
      logs.push(line);
      own.logs.push(line);
    },
    clientVersion: '0.0.0-test',
    trust: () => ({ trusted: true }),
    keepAlive: false,
    ...PATIENT,
    // These tests bound a stdio server's start by their request timeout, as before issue 26 gave
    // the start its own default (60 s, tested in test/cli/slowStart.test.ts).
    startTimeoutMs: options.requestTimeoutMs ?? PATIENT.requestTimeoutMs,
    ...options,
  });
  onCleanup(() => inventory.dispose());
  return { inventory, logs };
}

interface Outcome {
  listing: ServerListing;
  elapsed: number;
  inventory: Inventory;
  logs: string[];
}

/** Lists one definition through a fresh inventory and reports the outcome and how long it took. */
async function listOnce(definition: ServerDefinition, options: Partial<InventoryOptions> = {}, env: Record<string, string> = {}): Promise<Outcome> {
  const { inventory, logs } = newInventory(options, env);
  const started = Date.now();
  await inventory.ensure([definition]);
  const elapsed = Date.now() - started;
  const listing = inventory.listing(definition);
  assert.ok(listing, 'ensure leaves a listing behind');
  return { listing, elapsed, inventory, logs };
}

function expectListed(listing: ServerListing | undefined): CollectedListing {
  assert.ok(listing, 'a listing');
  assert.equal(listing.status, 'listed', withLogs(listing.status === 'unavailable' ? `unavailable (${listing.reason}): ${listing.message}` : ''));
  return (listing as Extract<ServerListing, { status: 'listed' }>).listing;
}

function expectUnavailable(listing: ServerListing | undefined, reason: UnavailableReason): Extract<ServerListing, { status: 'unavailable' }> {
  assert.ok(listing, 'a listing');
  assert.equal(listing.status, 'unavailable', withLogs(listing.status === 'listed' ? `listed ${listing.listing.tools.length} tool(s)` : ''));
  const unavailable = listing as Extract<ServerListing, { status: 'unavailable' }>;
  assert.equal(unavailable.reason, reason, withLogs(unavailable.message));
  return unavailable;
}

function assertWithinOverallTimeout(elapsed: number, overallMs = OVERALL_TIMEOUT_MS): void {
  assert.ok(elapsed < overallMs + SLACK_MS, `ended within the overall timeout of ${overallMs} ms (took ${elapsed} ms)`);
}

// ---------------------------------------------------------------------------------------------
// Documents generated from live listings
// ---------------------------------------------------------------------------------------------

function connectorText(name: string, transport: unknown, snapshot: Record<string, string>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ name, label: name, type: 'api', provider: 'mcp', providerConfig: { transport, toolsSnapshot: snapshot, ...extra } }, null, 2);
}

interface StepSpec {
  id: string;
  tool: string;
  pin: string;
  server?: string;
}

function blueprintText(steps: readonly StepSpec[]): string {
  return JSON.stringify(
    {
      blueprint: 'live-verification',
      formatVersion: 1,
      steps: steps.map((step) => ({ id: step.id, effect: 'mcp.invoke', input: { toolName: step.tool, expectedSchemaHash: step.pin, ...(step.server ? { server: step.server } : {}) } })),
    },
    null,
    2,
  );
}

interface Workspace {
  registry: ServerRegistry;
  definition: ServerDefinition;
  verifyConnectorText(): VerificationResult;
  verifyBlueprintText(text: string, now?: number): VerificationResult;
}

/** A workspace of one connector file (analyzed from text), its registry and verifiers over an inventory. */
function workspace(file: string, text: string, inventory: Inventory): Workspace {
  const analysis = analyzeConnector(text);
  assert.deepEqual(analysis.problems.map((found) => `${found.code} ${found.message}`), [], 'the generated connector is clean');
  const definitions = connectorServers(file, analysis.model, root);
  assert.equal(definitions.length, 1);
  const registry = new ServerRegistry(definitions);
  const listingFor = (definition: ServerDefinition): ServerListing => inventory.listing(definition) ?? { status: 'unavailable', reason: 'unreachable', message: 'not listed yet' };
  return {
    registry,
    definition: definitions[0]!,
    verifyConnectorText: () => verifyConnector(file, analysis.model, definitions, { registry, listingFor, now: Date.now() }),
    // The generated steps carry no arguments: checking them against the live schemas (TP410) is
    // test/unit/arguments.test.ts's subject, not this file's.
    verifyBlueprintText: (blueprint, now = Date.now()) => {
      const parsed = analyzeBlueprint(blueprint);
      assert.deepEqual(parsed.problems.map((found) => `${found.code} ${found.message}`), [], 'the generated blueprint is clean');
      return verifyBlueprint(parsed.model, { registry, listingFor, now, checkArguments: false });
    },
  };
}

function states(result: VerificationResult): string[] {
  return result.verdicts.map((verdict) => `${verdict.tool}: ${verdict.state}`);
}

/** The everything server's Streamable HTTP mode listens on all interfaces; this preload pins it to loopback. */
function loopbackPreload(): string {
  const file = path.join(scratch, 'loopback-preload.cjs');
  if (!fs.existsSync(file)) {
    fs.writeFileSync(
      file,
      `const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    const callbacks = args.filter((arg) => typeof arg === 'function');
    this.once('listening', () => {
      const address = this.address();
      process.stderr.write('LOOPBACK_LISTENING ' + address.address + ' ' + address.port + '\\n');
    });
    return listen.call(this, Number(args[0]), '127.0.0.1', ...callbacks);
  }
  return listen.apply(this, args);
};
`,
    );
  }
  return file;
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

describe('MCP adapter and inventory against live servers', () => {
  after(async () => {
    // Give processes ended by the last clean-up a moment to be reaped before judging.
    await waitFor('every tracked process to end', () => [...pids].every((pid) => !isAlive(pid)), 3000).catch(() => undefined);
    const leftovers = [...pids].filter(isAlive);
    for (const pid of leftovers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    fs.rmSync(scratch, { recursive: true, force: true });
    assert.deepEqual(leftovers, [], 'every process this file started is gone');
  });

  describe('real servers from npm: pins from a first listing verify against a second connection', { concurrency: 2 }, () => {
    /**
     * Lists a server once, writes a connector (a tool pin per tool) and a blueprint (a schema pin
     * per tool) from that listing, then verifies both through a second, separate inventory; then
     * verifies variants with one deliberately wrong pin of each kind.
     */
    async function pinThenVerify(name: string, transport: unknown, definition: ServerDefinition): Promise<void> {
      const first = await listOnce(definition, { requestTimeoutMs: 8000, overallTimeoutMs: 15_000 });
      const tools = expectListed(first.listing).tools;
      assert.ok(tools.length >= 5, `${name} serves its tools (got ${tools.length})`);
      assert.equal(first.inventory.sessionsOpened, 1);
      await first.inventory.dispose();

      const snapshot = Object.fromEntries(tools.map((tool) => [tool.name, toolPin(tool)]));
      const steps = tools.filter((tool) => tool.inputSchema !== undefined).map((tool, index) => ({ id: `call-${index}`, tool: tool.name, pin: schemaPin(tool.inputSchema), server: name }));
      assert.ok(steps.length > 0);

      const second = newInventory({ requestTimeoutMs: 8000, overallTimeoutMs: 15_000 });
      const good = workspace(`${name}.connector.json`, connectorText(name, transport, snapshot), second.inventory);
      await second.inventory.ensure([good.definition]);
      expectListed(second.inventory.listing(good.definition));

      const connectorResult = good.verifyConnectorText();
      assert.equal(connectorResult.verdicts.length, tools.length);
      assert.deepEqual(connectorResult.verdicts.filter((verdict) => verdict.state !== 'verified').map((verdict) => `${verdict.tool}: ${verdict.state} ${verdict.reason}`), []);
      assert.deepEqual(connectorResult.problems, []);
      const blueprintResult = good.verifyBlueprintText(blueprintText(steps));
      assert.equal(blueprintResult.verdicts.length, steps.length);
      assert.deepEqual(states(blueprintResult), steps.map((step) => `${step.tool}: verified`));
      assert.deepEqual(blueprintResult.problems, []);

      // One wrong pin of each kind: drifted, named by tool and server; the others still verify.
      const victim = steps[0]!.tool;
      const wrongToolPin = toolPin({ ...tools.find((tool) => tool.name === victim)!, description: 'Not what the server says.' });
      const wrong = workspace(`${name}-wrong.connector.json`, connectorText(name, transport, { ...snapshot, [victim]: wrongToolPin }), second.inventory);
      await second.inventory.ensure([wrong.definition]);
      const drifted = wrong.verifyConnectorText();
      assert.deepEqual(
        drifted.verdicts.filter((verdict) => verdict.state !== 'verified').map((verdict) => `${verdict.tool}: ${verdict.state}`),
        [`${victim}: drifted`],
      );
      assert.equal(drifted.problems.length, 1);
      assert.equal(drifted.problems[0]!.code, 'TP400');
      assert.ok(drifted.problems[0]!.message.includes(`tool "${victim}" on server "${name}"`), drifted.problems[0]!.message);
      assert.equal(drifted.problems[0]!.data?.live, snapshot[victim]);

      const wrongSchema = wrong.verifyBlueprintText(blueprintText(steps.map((step, index) => (index === 0 ? { ...step, pin: 'fnv1a64:0000000000000000' } : step))));
      assert.deepEqual(
        wrongSchema.verdicts.filter((verdict) => verdict.state !== 'verified').map((verdict) => `${verdict.tool}: ${verdict.state}`),
        [`${victim}: drifted`],
      );
      assert.equal(wrongSchema.problems.length, 1);
      assert.equal(wrongSchema.problems[0]!.code, 'TP400');
      assert.ok(wrongSchema.problems[0]!.message.includes(`tool "${victim}" on server "${name}"`), wrongSchema.problems[0]!.message);
      // Both workspaces name the same transport: still one connection for the second inventory.
      assert.equal(second.inventory.sessionsOpened, 1);
    }

    liveTest('server-everything over stdio', { timeout: 40_000 }, async () => {
      const transport = { kind: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] };
      await pinThenVerify('everything_stdio', transport, stdioDefinition('everything_stdio', [EVERYTHING, 'stdio']));
    });

    liveTest('server-everything over its own Streamable HTTP mode', { timeout: 40_000 }, async () => {
      const server = await startListening(process.execPath, ['--require', loopbackPreload(), EVERYTHING, 'streamableHttp'], { PORT: '0' }, /^LOOPBACK_LISTENING 127\.0\.0\.1 (\d+)$/m, 'stderr');
      const transport = { kind: 'http', url: server.url };
      await pinThenVerify('everything_http', transport, httpDefinition('everything_http', server.url));
      // And the adapter really used Streamable HTTP, not the SSE fallback.
      const session = await McpSession.open(httpDefinition('everything_http', server.url), {
        credentials: environmentCredentials({}),
        redactor: new Redactor(),
        requestTimeoutMs: 8000,
        maxPages: 10,
        clientVersion: '0.0.0-test',
        log: () => undefined,
      });
      assert.equal(session.transportName, 'streamable-http');
      await session.close();
    });

    liveTest('server-memory over stdio (MEMORY_FILE_PATH in a temporary folder)', { timeout: 40_000 }, async () => {
      const memoryFile = scratchFile('memory.jsonl');
      const transport = { kind: 'stdio', command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: memoryFile } };
      await pinThenVerify('memory', transport, stdioDefinition('memory', [MEMORY], { MEMORY_FILE_PATH: memoryFile }));
    });
  });

  describe('fixture server: pagination and sizes', { concurrency: 2 }, () => {
    liveTest('2,500 tools in pages of 100: every tool, complete', { timeout: TEST_TIMEOUT }, async () => {
      const log = scratchFile('requests.jsonl');
      const { listing, elapsed } = await listOnce(fixture('many_pages', ['--tools', '2500', '--page-size', '100', '--log-requests', log]));
      const collected = expectListed(listing);
      assert.equal(collected.tools.length, 2500);
      assert.equal(new Set(collected.tools.map((tool) => tool.name)).size, 2500);
      assert.equal(collected.tools[2499]!.name, 'tool_02499');
      assert.equal(collected.pages, 25);
      assert.equal(collected.incomplete, undefined);
      assert.deepEqual(collected.malformedEntries, []);
      assert.equal(toolsListRequests(log), 25);
      assertWithinOverallTimeout(elapsed, PATIENT.overallTimeoutMs);
    });

    liveTest('10,000 tools: complete, the count exact', { timeout: TEST_TIMEOUT }, async () => {
      const { listing } = await listOnce(fixture('ten_thousand', ['--tools', '10000', '--page-size', '1000']));
      const collected = expectListed(listing);
      assert.equal(collected.tools.length, 10_000);
      assert.equal(new Set(collected.tools.map((tool) => tool.name)).size, 10_000);
      assert.equal(collected.pages, 10);
      assert.equal(collected.incomplete, undefined);
      assert.deepEqual(collected.duplicateNames, []);
    });

    liveTest('an empty-string cursor is followed', { timeout: TEST_TIMEOUT }, async () => {
      const log = scratchFile('requests.jsonl');
      const { listing } = await listOnce(fixture('empty_cursor', ['--page-size', '2', '--empty-cursor', '--log-requests', log]));
      const collected = expectListed(listing);
      assert.deepEqual(collected.tools.map((tool) => tool.name), ['echo_upper', 'add_numbers', 'reverse_text']);
      assert.equal(collected.incomplete, undefined);
      const cursors = readLog(log).filter((entry) => entry.method === 'tools/list').map((entry) => ('cursor' in entry ? entry.cursor : '(none)'));
      assert.deepEqual(cursors, ['(none)', '']);
    });

    liveTest('a repeated cursor: listed, but incomplete with code repeated-cursor', { timeout: TEST_TIMEOUT }, async () => {
      const { listing, elapsed } = await listOnce(fixture('repeat_cursor', ['--tools', '5', '--page-size', '2', '--repeat-cursor']));
      const collected = expectListed(listing);
      assert.equal(collected.incomplete?.code, 'repeated-cursor');
      assert.equal(collected.pages, 2);
      assert.deepEqual(collected.tools.map((tool) => tool.name), ['tool_00000', 'tool_00001', 'tool_00002', 'tool_00003']);
      assertWithinOverallTimeout(elapsed, PATIENT.overallTimeoutMs);
    });

    liveTest('the page cap ends an endless listing as incomplete with code page-cap', { timeout: TEST_TIMEOUT }, async () => {
      const log = scratchFile('requests.jsonl');
      const { listing } = await listOnce(fixture('page_cap', ['--tools', '50', '--page-size', '1', '--log-requests', log]), { maxPages: 5 });
      const collected = expectListed(listing);
      assert.equal(collected.incomplete?.code, 'page-cap');
      assert.equal(collected.pages, 5);
      assert.equal(collected.tools.length, 5);
      assert.equal(toolsListRequests(log), 5, 'no request beyond the cap');
    });

    liveTest('slow answers, each within the request timeout, are listed even when together they take longer', { timeout: TEST_TIMEOUT }, async () => {
      const requestTimeoutMs = 3000;
      const { listing, elapsed } = await listOnce(fixture('slow', ['--tools', '6', '--page-size', '2', '--delay-ms', '1100']), { requestTimeoutMs });
      const collected = expectListed(listing);
      assert.equal(collected.tools.length, 6);
      assert.equal(collected.incomplete, undefined);
      assert.ok(elapsed > requestTimeoutMs, `three pages of 1100 ms each: longer than one request timeout (took ${elapsed} ms)`);
    });

    liveTest('a steady but slow listing is cut at the overall timeout → timeout', { timeout: TEST_TIMEOUT }, async () => {
      const { listing, elapsed } = await listOnce(fixture('too_slow', ['--tools', '20', '--page-size', '1', '--delay-ms', '400']), { requestTimeoutMs: 8000, overallTimeoutMs: 2000 });
      const unavailable = expectUnavailable(listing, 'timeout');
      assert.match(unavailable.message, /2000 ms/);
      assert.ok(elapsed < 2000 + SLACK_MS, `cut at the overall timeout (took ${elapsed} ms)`);
    });
  });

  describe('fixture server: failures end in the right state within the timeout', { concurrency: 3 }, () => {
    liveTest('--hang → timeout', { timeout: TEST_TIMEOUT }, async () => {
      const { listing, elapsed } = await listOnce(fixture('hang', ['--hang']), FAST);
      const unavailable = expectUnavailable(listing, 'timeout');
      assert.equal(unavailable.lastGood, undefined);
      assert.ok(elapsed >= REQUEST_TIMEOUT_MS, `waited for the request timeout (took ${elapsed} ms)`);
      assertWithinOverallTimeout(elapsed);
    });

    liveTest('--hang-initialize → timeout', { timeout: TEST_TIMEOUT }, async () => {
      const { listing, elapsed } = await listOnce(fixture('hang_initialize', ['--hang-initialize']), FAST);
      expectUnavailable(listing, 'timeout');
      assertWithinOverallTimeout(elapsed);
    });

    liveTest('a timeout message states the configured timeout, not the MCP error code', { timeout: TEST_TIMEOUT }, async () => {
      // BUG (session.ts classify): the number is taken with /\d+/ from "MCP error -32001: Request
      // timed out", so users read "did not answer within 32001 ms" instead of 1500 ms.
      const { listing } = await listOnce(fixture('hang_message', ['--hang']), { requestTimeoutMs: 300, overallTimeoutMs: OVERALL_TIMEOUT_MS });
      const unavailable = expectUnavailable(listing, 'timeout');
      assert.doesNotMatch(unavailable.message, /32001/);
      assert.match(unavailable.message, /\b300 ms\b/);
    });

    liveTest('--crash-after-pages over stdio → crashed (at the first page and in mid-listing)', { timeout: TEST_TIMEOUT }, async () => {
      const atOnce = await listOnce(fixture('crash_at_once', ['--crash-after-pages', '0']));
      expectUnavailable(atOnce.listing, 'crashed');
      assertWithinOverallTimeout(atOnce.elapsed, PATIENT.overallTimeoutMs);
      const midway = await listOnce(fixture('crash_midway', ['--page-size', '1', '--crash-after-pages', '1']));
      expectUnavailable(midway.listing, 'crashed');
    });

    liveTest('--malformed tools-not-array → listed, incomplete with code malformed-page', { timeout: TEST_TIMEOUT }, async () => {
      const collected = expectListed((await listOnce(fixture('not_array', ['--malformed', 'tools-not-array']))).listing);
      assert.equal(collected.incomplete?.code, 'malformed-page');
      assert.deepEqual(collected.tools, []);
    });

    liveTest('--malformed tool-without-name → listed, with one malformed entry', { timeout: TEST_TIMEOUT }, async () => {
      const collected = expectListed((await listOnce(fixture('no_name', ['--malformed', 'tool-without-name']))).listing);
      assert.deepEqual(collected.tools.map((tool) => tool.name), ['echo_upper', 'add_numbers']);
      assert.equal(collected.malformedEntries.length, 1);
      assert.match(collected.malformedEntries[0]!, /page 1, entry 2/);
      assert.equal(collected.incomplete, undefined);
    });

    liveTest('--malformed old-shape → every tool marked unpinnable', { timeout: TEST_TIMEOUT }, async () => {
      const collected = expectListed((await listOnce(fixture('old_shape', ['--malformed', 'old-shape']))).listing);
      assert.equal(collected.tools.length, 3);
      for (const tool of collected.tools) assert.match(tool.unpinnable ?? '', /input_schema/, tool.name);
    });

    liveTest('--malformed duplicate-names → duplicateNames', { timeout: TEST_TIMEOUT }, async () => {
      const collected = expectListed((await listOnce(fixture('duplicates', ['--malformed', 'duplicate-names']))).listing);
      assert.deepEqual(collected.duplicateNames, ['echo_upper']);
      assert.equal(collected.tools.length, 3);
    });

    liveTest('--malformed invalid-json over HTTP → protocol-error', { timeout: TEST_TIMEOUT }, async () => {
      const server = await startHttpFixture(['--malformed', 'invalid-json']);
      const { listing, elapsed } = await listOnce(httpDefinition('invalid_json', server.url));
      expectUnavailable(listing, 'protocol-error');
      assertWithinOverallTimeout(elapsed, PATIENT.overallTimeoutMs);
    });
  });

  describe('fixture server: credentials and trust', { concurrency: 3 }, () => {
    const RIGHT = 'right-token-4711';
    const WRONG = 'wrong-token-0815';

    liveTest('HTTP 401 with a wrong bearer credential → unauthorized; the value never reaches a message or log', { timeout: TEST_TIMEOUT }, async () => {
      const log = scratchFile('requests.jsonl');
      const server = await startHttpFixture(['--require-bearer', RIGHT, '--log-requests', log]);
      const { listing, logs } = await listOnce(httpDefinition('wrong_bearer', server.url, { type: 'bearer', credentialRef: 'TOOLPIN_TEST_TOKEN' }), {}, { TOOLPIN_TEST_TOKEN: WRONG });
      const unavailable = expectUnavailable(listing, 'unauthorized');
      assert.ok(!unavailable.message.includes(WRONG));
      assert.ok(logs.every((line) => !line.includes(WRONG)), 'no log line carries the credential');
      const refused = readLog(log).filter((entry) => entry.status === 401);
      assert.ok(refused.length >= 1, 'the server saw (and refused) the request');
      assert.equal((refused[0]!.headers as Record<string, string>).authorization, '<redacted>', 'the credential was sent as a header');

      // The right value is listed.
      expectListed((await listOnce(httpDefinition('right_bearer', server.url, { type: 'bearer', credentialRef: 'TOOLPIN_TEST_TOKEN' }), {}, { TOOLPIN_TEST_TOKEN: RIGHT })).listing);
    });

    liveTest('HTTP 401 on an --oauth server with no credential configured → authorization-required', { timeout: TEST_TIMEOUT }, async () => {
      const server = await startHttpFixture(['--oauth']);
      const unavailable = expectUnavailable((await listOnce(httpDefinition('oauth', server.url))).listing, 'authorization-required');
      assert.match(unavailable.message, /401/);
    });

    liveTest('--forbid → forbidden', { timeout: TEST_TIMEOUT }, async () => {
      const server = await startHttpFixture(['--forbid']);
      expectUnavailable((await listOnce(httpDefinition('forbid', server.url, { type: 'bearer', credentialRef: 'TOOLPIN_TEST_TOKEN' }), {}, { TOOLPIN_TEST_TOKEN: RIGHT })).listing, 'forbidden');
    });

    liveTest('a credentialRef that is not set → credential-missing, and no request is made', { timeout: TEST_TIMEOUT }, async () => {
      const log = scratchFile('requests.jsonl');
      const server = await startHttpFixture(['--require-bearer', RIGHT, '--log-requests', log]);
      const { listing, inventory } = await listOnce(httpDefinition('no_credential', server.url, { type: 'bearer', credentialRef: 'TOOLPIN_TEST_UNSET_TOKEN' }));
      const unavailable = expectUnavailable(listing, 'credential-missing');
      assert.match(unavailable.message, /TOOLPIN_TEST_UNSET_TOKEN/);
      assert.equal(inventory.sessionsOpened, 0);
      await sleep(100);
      assert.deepEqual(readLog(log), [], 'the server received no request at all');
    });

    liveTest('api-key auth with the right key in a custom header → listed', { timeout: TEST_TIMEOUT }, async () => {
      const log = scratchFile('requests.jsonl');
      const server = await startHttpFixture(['--require-api-key', 'key-value-1234', '--api-key-header', 'X-Team-Key', '--log-requests', log]);
      const { listing } = await listOnce(httpDefinition('api_key', server.url, { type: 'api-key', credentialRef: 'TOOLPIN_TEST_KEY', headerName: 'X-Team-Key' }), {}, { TOOLPIN_TEST_KEY: 'key-value-1234' });
      assert.equal(expectListed(listing).tools.length, 3);
      const list = readLog(log).find((entry) => entry.method === 'tools/list');
      assert.equal((list?.headers as Record<string, string> | undefined)?.['x-team-key'], '<redacted>');
    });

    liveTest('a legacy-SSE-only server is listed through the fallback (transport "sse")', { timeout: TEST_TIMEOUT }, async () => {
      const server = await startHttpFixture(['--legacy-sse']);
      const definition = httpDefinition('legacy', server.url);
      const { listing, logs } = await listOnce(definition);
      assert.equal(expectListed(listing).tools.length, 3);
      assert.ok(logs.some((line) => /legacy SSE/.test(line)), 'the fallback is logged');

      const session = await McpSession.open(definition, {
        credentials: environmentCredentials({}),
        redactor: new Redactor(),
        requestTimeoutMs: 8000,
        maxPages: 10,
        clientVersion: '0.0.0-test',
        log: () => undefined,
      });
      onCleanup(() => session.close());
      assert.equal(session.transportName, 'sse');
      assert.deepEqual((await session.listTools(definition)).tools.map((tool) => tool.name), ['echo_upper', 'add_numbers', 'reverse_text']);
    });

    liveTest('untrusted workspace → untrusted-workspace: no process spawned, no request sent', { timeout: TEST_TIMEOUT }, async () => {
      const stdioLog = scratchFile('stdio-requests.jsonl');
      const pidFile = scratchFile('server.pid');
      const httpLog = scratchFile('http-requests.jsonl');
      const server = await startHttpFixture(['--log-requests', httpLog]);
      const stdio = fixture('untrusted_stdio', ['--pid-file', pidFile, '--log-requests', stdioLog]);
      const http = httpDefinition('untrusted_http', server.url, { type: 'bearer', credentialRef: 'TOOLPIN_TEST_TOKEN' });
      const { inventory } = newInventory({ trust: () => ({ trusted: false, reason: 'the folder is not trusted' }) }, { TOOLPIN_TEST_TOKEN: RIGHT });
      await inventory.ensure([stdio, http]);
      for (const definition of [stdio, http]) {
        const unavailable = expectUnavailable(inventory.listing(definition), 'untrusted-workspace');
        assert.equal(unavailable.lastGood, undefined);
      }
      assert.equal(inventory.sessionsOpened, 0);
      assert.deepEqual(inventory.pids(), []);
      await sleep(300);
      assert.ok(!fs.existsSync(pidFile), 'no stdio server was started');
      assert.deepEqual(readLog(stdioLog), []);
      assert.deepEqual(readLog(httpLog), [], 'the HTTP server received nothing, so no credential was sent');
    });
  });

  describe('inventory behaviour', { concurrency: 3 }, () => {
    liveTest('the others keep being served: a hanging, a crashing and a 401 server do not delay a good one', { timeout: TEST_TIMEOUT }, async () => {
      const server = await startHttpFixture(['--require-bearer', 'right-token-4711']);
      const hang = fixture('hangs', ['--hang']);
      const crash = fixture('crashes', ['--crash-after-pages', '0']);
      const refused = httpDefinition('refused', server.url, { type: 'bearer', credentialRef: 'TOOLPIN_TEST_TOKEN' });
      const good = fixture('good');
      // The hanging server's timeouts are long enough that the good one's start-up, even on a
      // loaded machine, cannot reach them; the point is that the good one does not wait for them.
      const requestTimeoutMs = 4000;
      const overallTimeoutMs = 5000;
      const { inventory } = newInventory({ requestTimeoutMs, overallTimeoutMs }, { TOOLPIN_TEST_TOKEN: 'wrong-token-0815' });
      const started = Date.now();
      let goodDone = 0;
      let allDone = 0;
      await Promise.all([
        inventory.ensure([hang, crash, refused, good]).then(() => (allDone = Date.now() - started)),
        inventory.ensure([good]).then(() => (goodDone = Date.now() - started)),
      ]);
      expectListed(inventory.listing(good));
      expectUnavailable(inventory.listing(hang), 'timeout');
      expectUnavailable(inventory.listing(crash), 'crashed');
      expectUnavailable(inventory.listing(refused), 'unauthorized');
      assert.ok(allDone >= requestTimeoutMs, `the hanging server took its timeout (${allDone} ms)`);
      assert.ok(goodDone < allDone - 1500, `the good server was listed (${goodDone} ms) well before the hanging one timed out (${allDone} ms)`);
      assertWithinOverallTimeout(allDone, overallTimeoutMs);
    });

    liveTest('exactly one connection per distinct server: 3 names, one transport → one session', { timeout: TEST_TIMEOUT }, async () => {
      const log = scratchFile('requests.jsonl');
      const args = ['--log-requests', log];
      const definitions = ['alpha', 'beta', 'gamma'].map((name) => fixture(name, args));
      const { inventory } = newInventory();
      await inventory.ensure(definitions);
      assert.equal(inventory.sessionsOpened, 1);
      assert.equal(readLog(log).filter((entry) => entry.method === 'initialize').length, 1);
      assert.equal(toolsListRequests(log), 1);
      const listings = definitions.map((definition) => inventory.listing(definition));
      for (const listing of listings) assert.equal(expectListed(listing).tools.length, 3);
      assert.equal(listings[0], listings[2], 'the names share one listing');
    });

    liveTest('list_changed with keepAlive: re-listed on the same session; the tool pin drifts, the schema pin still verifies', { timeout: TEST_TIMEOUT }, async () => {
      const control = scratchFile('control.json');
      const transport = { kind: 'stdio', command: process.execPath, args: [FIXTURE, '--control-file', control] };
      let changed: (definitions: ServerDefinition[]) => void = () => undefined;
      const changes = new Promise<ServerDefinition[]>((resolve) => (changed = resolve));
      const { inventory } = newInventory({ keepAlive: true, onListingChanged: (definitions) => changed(definitions) });
      const space = workspace('drifting.connector.json', connectorText('drifting', transport, { echo_upper: ECHO_UPPER_TOOL_PIN }, { include: ['echo_upper'] }), inventory);
      const blueprint = blueprintText([{ id: 'shout', tool: 'echo_upper', pin: ECHO_UPPER_SCHEMA_PIN, server: 'drifting' }]);
      await inventory.ensure([space.definition]);
      assert.deepEqual(states(space.verifyConnectorText()), ['echo_upper: verified']);
      assert.deepEqual(states(space.verifyBlueprintText(blueprint)), ['echo_upper: verified']);
      assert.equal(inventory.pids().length, 1, 'the session stays open to hear list_changed');

      writeControl(control, { version: 2, rewrite: { echo_upper: { description: 'Rewritten description.' } } });
      const reported = await within(changes, 5000, 'onListingChanged');
      assert.deepEqual(reported, [space.definition]);
      const tool = expectListed(inventory.listing(space.definition)).tools.find((candidate) => candidate.name === 'echo_upper');
      assert.equal(tool?.description, 'Rewritten description.');
      assert.equal(inventory.sessionsOpened, 1, 're-listed on the same session');

      const connector = space.verifyConnectorText();
      assert.deepEqual(states(connector), ['echo_upper: drifted']);
      assert.equal(connector.problems[0]?.code, 'TP400');
      assert.equal(connector.verdicts[0]!.live, toolPin({ ...ECHO_UPPER, description: 'Rewritten description.' }));
      // A description-only rewrite is not schema drift: the two pin kinds disagree on purpose.
      const steps = space.verifyBlueprintText(blueprint);
      assert.deepEqual(states(steps), ['echo_upper: verified']);
      assert.deepEqual(steps.problems, []);
    });

    liveTest('TTL: with an injected clock, ensure re-lists only after expiry', { timeout: TEST_TIMEOUT }, async () => {
      const log = scratchFile('requests.jsonl');
      const definition = fixture('ttl', ['--log-requests', log]);
      let clock = 1_000_000;
      const { inventory } = newInventory({ now: () => clock, minTtlMs: 1000, defaultTtlMs: 1000 });
      await inventory.ensure([definition]);
      assert.equal(toolsListRequests(log), 1);
      const first = expectListed(inventory.listing(definition));
      clock += 500;
      await inventory.ensure([definition]);
      assert.equal(toolsListRequests(log), 1, 'fresh: not listed again');
      assert.deepEqual(inventory.stale(), []);
      clock += 600;
      assert.deepEqual(inventory.stale(), [definition]);
      await inventory.ensure([definition]);
      assert.equal(toolsListRequests(log), 2, 'expired: listed again');
      const listing = inventory.listing(definition);
      assert.ok(listing?.status === 'listed' && listing.listedAt === clock);
      assert.notEqual(expectListed(listing), first);
      await inventory.ensure([definition], { force: true });
      assert.equal(toolsListRequests(log), 3, 'force re-lists a fresh listing');
    });

    liveTest('TTL: the server\'s ttlMs hint is honoured, and raised to the minimum', { timeout: TEST_TIMEOUT }, async () => {
      // The fixture cannot send ttlMs (its pages carry tools and nextCursor only), so this is a
      // minimal line-delimited JSON-RPC stdio server written here: a real process and protocol,
      // answering initialize and tools/list with a ttlMs hint. collectListing's reading of ttlMs
      // (smallest over the pages) is covered in test/unit/verification.test.ts.
      const server = [
        "const fs = require('node:fs');",
        "require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {",
        '  const message = JSON.parse(line);',
        '  if (message.id === undefined) return;',
        "  fs.appendFileSync(process.env.TTL_LOG, message.method + '\\n');",
        "  const result = message.method === 'initialize'",
        "    ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'ttl', version: '1' } }",
        "    : { tools: [{ name: 'only', inputSchema: { type: 'object' } }], ttlMs: Number(process.env.TTL_MS) };",
        "  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }) + '\\n');",
        '});',
      ].join('\n');
      const count = (file: string): number => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((line) => line === 'tools/list').length : 0);

      const longLog = scratchFile('long.log');
      const long = stdioDefinition('long_ttl', ['-e', server], { TTL_LOG: longLog, TTL_MS: '60000' });
      const shortLog = scratchFile('short.log');
      const short = stdioDefinition('short_ttl', ['-e', server], { TTL_LOG: shortLog, TTL_MS: '10' });
      let clock = 5_000_000;
      const { inventory } = newInventory({ now: () => clock, minTtlMs: 1000, defaultTtlMs: 2000 });
      await inventory.ensure([long, short]);
      assert.equal(expectListed(inventory.listing(long)).ttlMs, 60_000);
      assert.equal(expectListed(inventory.listing(short)).ttlMs, 10);
      assert.deepEqual([count(longLog), count(shortLog)], [1, 1]);

      clock += 500; // past the short hint (10 ms), within the minimum (1000 ms)
      await inventory.ensure([long, short]);
      assert.deepEqual([count(longLog), count(shortLog)], [1, 1], 'a hint below the minimum is raised to it');
      clock += 2500; // past the default (2000 ms) and the minimum, within the long hint (60 s)
      assert.deepEqual(inventory.stale(), [short]);
      await inventory.ensure([long, short]);
      assert.deepEqual([count(longLog), count(shortLog)], [1, 2], 'the long hint keeps its listing fresh beyond the default');
      clock += 60_000;
      await inventory.ensure([long, short]);
      assert.deepEqual([count(longLog), count(shortLog)], [2, 3]);
    });

    liveTest('last good listing: the server goes away → unavailable with lastGood; never verified, "last listed 12 min ago"', { timeout: TEST_TIMEOUT }, async () => {
      const server = await startHttpFixture([]);
      let clock = Date.now();
      const { inventory } = newInventory({ now: () => clock });
      const space = workspace('vanishing.connector.json', connectorText('vanishing', { kind: 'http', url: server.url }, { echo_upper: ECHO_UPPER_TOOL_PIN }), inventory);
      const blueprint = blueprintText([{ id: 'shout', tool: 'echo_upper', pin: ECHO_UPPER_SCHEMA_PIN, server: 'vanishing' }]);
      await inventory.ensure([space.definition]);
      const first = inventory.listing(space.definition);
      assert.ok(first?.status === 'listed');
      assert.deepEqual(states(space.verifyBlueprintText(blueprint, clock)), ['echo_upper: verified']);

      await server.stop();
      clock += 12 * 60_000;
      await inventory.ensure([space.definition], { force: true });
      const gone = expectUnavailable(inventory.listing(space.definition), 'unreachable');
      assert.ok(gone.lastGood, 'the last good listing is kept');
      assert.equal(gone.lastGood.listedAt, first.listedAt);
      assert.equal(gone.lastGood.listing, first.listing);

      const steps = space.verifyBlueprintText(blueprint, clock);
      assert.deepEqual(states(steps), ['echo_upper: cannot-verify']);
      assert.match(steps.verdicts[0]!.reason ?? '', /last listed 12 min ago/);
      assert.deepEqual(steps.problems.map((found) => found.code), ['TP403']);
      const connector = verifyConnector('vanishing.connector.json', analyzeConnector(connectorText('vanishing', { kind: 'http', url: server.url }, { echo_upper: ECHO_UPPER_TOOL_PIN })).model, space.registry.definitions, {
        registry: space.registry,
        listingFor: (definition) => inventory.listing(definition)!,
        now: clock,
      });
      assert.deepEqual(states(connector), ['echo_upper: cannot-verify']);
      assert.match(connector.verdicts[0]!.reason ?? '', /last listed 12 min ago/);
    });
  });

  describe('no orphan processes (asserted by pid: the server and its grandchild)', { concurrency: 4 }, () => {
    /** A stdio fixture that writes its pid and spawns a grandchild in its process group. */
    function treeFixture(name: string, args: string[]): { definition: ServerDefinition; pidFile: string; childFile: string } {
      const pidFile = scratchFile(`${name}.pid`);
      const childFile = scratchFile(`${name}-child.pid`);
      return { definition: fixture(name, ['--pid-file', pidFile, '--spawn-child', childFile, '--child-lifetime-ms', '60000', ...args]), pidFile, childFile };
    }

    async function assertGone(what: string, serverPid: number, childPid: number): Promise<void> {
      // isAlive is process.kill(pid, 0) → ESRCH, with a zombie (exited, not yet reaped) counted as gone.
      await waitFor(`${what}: the server (${serverPid}) and its grandchild (${childPid}) to be gone`, () => !isAlive(serverPid) && !isAlive(childPid), 3000);
    }

    liveTest('dispose() ends a kept-alive server and its grandchild', { timeout: TEST_TIMEOUT }, async () => {
      const tree = treeFixture('disposed', []);
      const { inventory } = newInventory({ keepAlive: true });
      await inventory.ensure([tree.definition]);
      expectListed(inventory.listing(tree.definition));
      const serverPid = trackedPid(tree.pidFile);
      const childPid = trackedPid(tree.childFile);
      assert.deepEqual(inventory.pids(), [serverPid]);
      assert.ok(isAlive(serverPid) && isAlive(childPid), 'both run while the session is kept');
      await inventory.dispose();
      await assertGone('after dispose()', serverPid, childPid);
      assert.deepEqual(inventory.pids(), []);
    });

    liveTest('dispose() while a server is still starting ends it at once, not at its request timeout', { timeout: TEST_TIMEOUT }, async () => {
      // BUG: dispose() closes only sessions that finished opening. A server whose initialize is
      // still pending (a slow start, an npx download) lives on until its request timeout, after
      // dispose() has resolved ("closes every session and ends every server process").
      const tree = treeFixture('disposed_while_starting', ['--hang-initialize']);
      const { inventory } = newInventory({ requestTimeoutMs: 6000, overallTimeoutMs: 8000, keepAlive: true });
      const ensured = inventory.ensure([tree.definition]);
      await waitFor('the server to start its grandchild', () => fs.existsSync(tree.childFile) && fs.readFileSync(tree.childFile, 'utf8').length > 0, 6000);
      const serverPid = trackedPid(tree.pidFile);
      const childPid = trackedPid(tree.childFile);
      await inventory.dispose();
      const gone = await assertGone('after dispose() during initialize', serverPid, childPid).then(
        () => undefined,
        (error: unknown) => error,
      );
      await ensured; // with the bug, this waits for the 6 s request timeout
      if (gone) throw gone;
      assert.equal(inventory.listing(tree.definition)?.status, 'unavailable');
    });

    liveTest('a one-shot listing (keepAlive false) ends the server and its grandchild', { timeout: TEST_TIMEOUT }, async () => {
      const tree = treeFixture('one_shot', []);
      const { listing } = await listOnce(tree.definition);
      expectListed(listing);
      await assertGone('after a one-shot listing', trackedPid(tree.pidFile), trackedPid(tree.childFile));
    });

    liveTest('after a timeout (--hang and --hang-initialize) nothing is left', { timeout: TEST_TIMEOUT }, async () => {
      const hang = treeFixture('hang_tree', ['--hang']);
      const hangInit = treeFixture('hang_init_tree', ['--hang-initialize']);
      // Long enough that a loaded machine still starts the fixture (and it writes its pid files)
      // before the initialize request times out.
      const { inventory } = newInventory({ requestTimeoutMs: 4000, overallTimeoutMs: 6000, keepAlive: true });
      await inventory.ensure([hang.definition, hangInit.definition]);
      expectUnavailable(inventory.listing(hang.definition), 'timeout');
      expectUnavailable(inventory.listing(hangInit.definition), 'timeout');
      await assertGone('after --hang timed out', trackedPid(hang.pidFile), trackedPid(hang.childFile));
      await assertGone('after --hang-initialize timed out', trackedPid(hangInit.pidFile), trackedPid(hangInit.childFile));
    });

    liveTest('after a crash nothing is left: the grandchild of a crashed server is ended too', { timeout: TEST_TIMEOUT }, async () => {
      // BUG: when the server exits on its own, the session's onClosed clears entry.session, so
      // neither the inventory's failure path nor dispose() ever calls close() on it, and the
      // transport never ends the process group: the grandchild lives on (until the whole process
      // exits and the exit hook SIGKILLs the groups).
      const tree = treeFixture('crash_tree', ['--crash-after-pages', '0']);
      const { inventory } = newInventory({ keepAlive: true });
      await inventory.ensure([tree.definition]);
      expectUnavailable(inventory.listing(tree.definition), 'crashed');
      const serverPid = trackedPid(tree.pidFile);
      const childPid = trackedPid(tree.childFile);
      await inventory.dispose();
      await assertGone('after a crash and dispose()', serverPid, childPid);
    });
  });
});
