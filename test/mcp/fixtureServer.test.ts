/**
 * The fixture MCP server (test/fixtures/servers/fixture-server.mjs) does what each option says.
 * These tests talk to it with the MCP SDK's own Client, directly, so that the product's tests can
 * trust the fixture when they point Toolpin's verification at it. Every process started here is
 * killed afterwards, and the last hook proves that none is left.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, afterEach, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
// The fixture serves the contract's reference tool exactly (docs/formats.md §2).
import { ECHO_UPPER, FIXTURE_DEFAULT_TOOLS } from '../support/referenceVectors';
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
const EVERYTHING = path.join(root, 'test', 'fixtures', 'tool-lists', 'everything.json');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-fixture-test-'));
const TEST_TIMEOUT = 15_000;

/** A result schema that accepts anything, to see exactly what the server sent. */
const Raw = z.object({}).passthrough();
type RawTools = { tools?: unknown; nextCursor?: unknown };

/** Every process id this file caused to exist; the final hook proves all are gone. */
const pids = new Set<number>();
/** Undo steps of the running test, run in reverse order after it. */
let cleanups: Array<() => unknown> = [];

let fileCounter = 0;
function scratchFile(name: string): string {
  fileCounter++;
  return path.join(scratch, `${fileCounter}-${name}`);
}


function newClient(): Client {
  return new Client({ name: 'fixture-test', version: '1.0.0' });
}

interface StdioFixture {
  client: Client;
  transport: StdioClientTransport;
  errors: Error[];
  stderr: () => string;
}

/** Starts the fixture over stdio through the SDK client (which spawns it). */
async function stdioFixture(args: string[], options: { connectTimeout?: number; beforeConnect?: (client: Client) => void } = {}): Promise<StdioFixture> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [FIXTURE, ...args], cwd: root, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = newClient();
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  options.beforeConnect?.(client);
  cleanups.push(() => client.close());
  const connecting = client.connect(transport, { timeout: options.connectTimeout ?? 5000 });
  if (transport.pid) pids.add(transport.pid); // spawned synchronously by connect()
  await connecting;
  if (transport.pid) pids.add(transport.pid);
  return { client, transport, errors, stderr: () => stderr };
}

interface HttpFixture {
  port: number;
  url: URL;
  base: string;
  proc: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/** Starts the fixture in HTTP mode and waits for its `LISTENING <port>` line. */
async function httpFixture(args: string[]): Promise<HttpFixture> {
  const proc = spawn(process.execPath, [FIXTURE, '--http', '--port', '0', '--host', '127.0.0.1', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  assert.ok(proc.pid);
  pids.add(proc.pid);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => resolve({ code, signal }));
  });
  cleanups.push(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      await within(exited, 5000, 'the HTTP fixture to exit');
    }
  });
  let stderr = '';
  proc.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  let stdout = '';
  const port = await within(
    new Promise<number>((resolve, reject) => {
      proc.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        const match = /^LISTENING (\d+)\n/m.exec(stdout);
        if (match) resolve(Number(match[1]));
      });
      proc.once('exit', (code) => reject(new Error(`fixture exited with ${code} before listening: ${stderr}`)));
    }),
    5000,
    'LISTENING',
  );
  const base = `http://127.0.0.1:${port}`;
  return { port, url: new URL(`${base}/mcp`), base, proc, exited, stderr: () => stderr };
}

async function connectHttp(
  url: URL,
  options: { headers?: Record<string, string>; legacy?: boolean; beforeConnect?: (client: Client) => void } = {},
): Promise<{ client: Client; errors: Error[]; transport: StreamableHTTPClientTransport | SSEClientTransport }> {
  const requestInit = options.headers ? { headers: options.headers } : undefined;
  const transport = options.legacy ? new SSEClientTransport(url, { requestInit }) : new StreamableHTTPClientTransport(url, { requestInit });
  const client = newClient();
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  options.beforeConnect?.(client);
  cleanups.push(() => client.close());
  await client.connect(transport, { timeout: 5000 });
  return { client, errors, transport };
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fetch', version: '1' } },
};

/** A plain POST of an initialize request; the body is read so the connection is released. */
async function postInitialize(url: URL, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(INITIALIZE),
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** Follows nextCursor until it is absent (an empty string is a cursor), at most maxPages pages. */
async function listAllPages(client: Client, maxPages = 50): Promise<{ names: string[]; cursors: Array<string | undefined> }> {
  const names: string[] = [];
  const cursors: Array<string | undefined> = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor });
    names.push(...result.tools.map((tool) => tool.name));
    cursors.push(result.nextCursor);
    if (result.nextCursor === undefined) return { names, cursors };
    cursor = result.nextCursor;
  }
  throw new Error(`still paging after ${maxPages} pages`);
}

function readLog(file: string): Array<Record<string, unknown>> {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

function writeControl(file: string, doc: unknown): void {
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(doc));
  fs.renameSync(temporary, file);
}

function nextListChanged(client: Client): Promise<void> {
  return new Promise((resolve) => {
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve());
  });
}

describe('fixture MCP server', () => {
  afterEach(async () => {
    const steps = cleanups.reverse();
    cleanups = [];
    for (const step of steps) {
      try {
        await step();
      } catch {
        // a failed undo step must not hide the others
      }
    }
  });

  after(async () => {
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
    await waitFor('killed leftovers to disappear', () => [...pids].every((pid) => !isAlive(pid)), 3000);
  });

  describe('transports and tool lists', () => {
    test('stdio: three default tools, echo_upper exactly as in the contract', { timeout: TEST_TIMEOUT }, async () => {
      const { client } = await stdioFixture([]);
      assert.deepEqual(client.getServerCapabilities()?.tools, { listChanged: true });
      const raw = (await client.request({ method: 'tools/list', params: {} }, Raw)) as RawTools;
      assert.ok(Array.isArray(raw.tools));
      assert.equal(raw.tools.length, 3);
      assert.deepEqual(raw.tools[0], ECHO_UPPER);
      // The in-process LSP tests' fake listing source serves these: it must match the fixture.
      assert.deepEqual(raw.tools, FIXTURE_DEFAULT_TOOLS);
      assert.equal(raw.nextCursor, undefined);
      const listed = await client.listTools();
      assert.deepEqual(listed.tools.map((tool) => tool.name), ['echo_upper', 'add_numbers', 'reverse_text']);
    });

    test('stdio: --tools-file serves the file\'s tools exactly as written', { timeout: TEST_TIMEOUT }, async () => {
      const expected = (JSON.parse(fs.readFileSync(EVERYTHING, 'utf8')) as { tools: unknown[] }).tools;
      const { client } = await stdioFixture(['--tools-file', EVERYTHING]);
      const raw = (await client.request({ method: 'tools/list', params: {} }, Raw)) as RawTools;
      assert.deepEqual(raw.tools, expected);
    });

    test('http: Streamable HTTP with a session lists the tools', { timeout: TEST_TIMEOUT }, async () => {
      const server = await httpFixture(['--tools', '5']);
      const { client, transport } = await connectHttp(server.url);
      assert.ok((transport as StreamableHTTPClientTransport).sessionId, 'stateful: the server hands out a session id');
      const listed = await client.listTools();
      assert.deepEqual(listed.tools.map((tool) => tool.name), ['tool_00000', 'tool_00001', 'tool_00002', 'tool_00003', 'tool_00004']);
      assert.notDeepEqual(listed.tools[0]?.inputSchema, listed.tools[1]?.inputSchema, 'generated schemas are distinct');
    });

    test('http: --json-response answers POSTs with application/json', { timeout: TEST_TIMEOUT }, async () => {
      const server = await httpFixture(['--json-response']);
      const answer = await postInitialize(server.url);
      assert.equal(answer.status, 200);
      assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
      const { client } = await connectHttp(server.url);
      assert.equal((await client.listTools()).tools.length, 3);
    });

    test('--legacy-sse: reachable with SSEClientTransport; a Streamable HTTP POST gets 405', { timeout: TEST_TIMEOUT }, async () => {
      const server = await httpFixture(['--legacy-sse']);
      const { client } = await connectHttp(server.url, { legacy: true });
      assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['echo_upper', 'add_numbers', 'reverse_text']);

      assert.equal((await postInitialize(server.url)).status, 405);
      const streamable = newClient();
      cleanups.push(() => streamable.close());
      await assert.rejects(streamable.connect(new StreamableHTTPClientTransport(server.url), { timeout: 5000 }), (error: unknown) => {
        assert.ok(error instanceof StreamableHTTPError, String(error));
        assert.equal(error.code, 405);
        return true;
      });
    });
  });

  describe('pagination', () => {
    test('--page-size: every page is reached, the count is right, one logged request per page', { timeout: TEST_TIMEOUT }, async () => {
      const log = scratchFile('requests.jsonl');
      const { client } = await stdioFixture(['--tools', '25', '--page-size', '7', '--log-requests', log]);
      const { names, cursors } = await listAllPages(client);
      assert.equal(names.length, 25);
      assert.equal(new Set(names).size, 25);
      assert.equal(names[24], 'tool_00024');
      assert.equal(cursors.length, 4);
      const lists = readLog(log).filter((entry) => entry.method === 'tools/list');
      assert.equal(lists.length, 4);
      assert.deepEqual(lists.map((entry) => entry.cursor), [undefined, ...cursors.slice(0, 3)]);
      assert.ok(readLog(log).some((entry) => entry.method === 'initialize' && entry.transport === 'stdio'));
    });

    test('--page-size over HTTP pages the same way', { timeout: TEST_TIMEOUT }, async () => {
      const server = await httpFixture(['--tools', '10', '--page-size', '4']);
      const { client } = await connectHttp(server.url);
      const { names, cursors } = await listAllPages(client);
      assert.equal(names.length, 10);
      assert.equal(cursors.length, 3);
    });

    test('--empty-cursor: the first nextCursor is "" and still leads to the next page', { timeout: TEST_TIMEOUT }, async () => {
      const { client } = await stdioFixture(['--page-size', '2', '--empty-cursor']);
      const first = await client.listTools();
      assert.equal(first.nextCursor, '');
      assert.deepEqual(first.tools.map((tool) => tool.name), ['echo_upper', 'add_numbers']);
      const second = await client.listTools({ cursor: '' });
      assert.deepEqual(second.tools.map((tool) => tool.name), ['reverse_text']);
      assert.equal(second.nextCursor, undefined);
      const { names } = await listAllPages(client);
      assert.equal(names.length, 3);
    });

    test('--repeat-cursor: the same nextCursor every time, so a naive client never finishes', { timeout: TEST_TIMEOUT }, async () => {
      const { client } = await stdioFixture(['--tools', '5', '--page-size', '2', '--repeat-cursor']);
      const seen: Array<string | undefined> = [];
      let cursor: string | undefined;
      for (let page = 0; page < 6; page++) {
        const result = await client.listTools(cursor === undefined ? {} : { cursor });
        seen.push(result.nextCursor);
        cursor = result.nextCursor;
      }
      assert.ok(seen[0] !== undefined);
      assert.ok(seen.every((value) => value === seen[0]), `one cursor repeated: ${JSON.stringify(seen)}`);
      await assert.rejects(listAllPages(client, 10), /still paging after 10 pages/);
    });

    test('an unknown cursor is an invalid-params error', { timeout: TEST_TIMEOUT }, async () => {
      const { client } = await stdioFixture(['--page-size', '2']);
      await assert.rejects(client.listTools({ cursor: 'not-a-cursor' }), (error: unknown) => {
        assert.ok(error instanceof McpError);
        assert.equal(error.code, ErrorCode.InvalidParams);
        return true;
      });
    });
  });

  describe('timing', () => {
    test('--delay-ms delays every tools/list answer', { timeout: TEST_TIMEOUT }, async () => {
      const { client } = await stdioFixture(['--delay-ms', '300']);
      const started = Date.now();
      await client.listTools();
      assert.ok(Date.now() - started >= 280, `took ${Date.now() - started} ms`);
    });

    test('--hang: tools/list is never answered (the request times out)', { timeout: TEST_TIMEOUT }, async () => {
      const { client } = await stdioFixture(['--hang']);
      await assert.rejects(client.listTools({}, { timeout: 300 }), (error: unknown) => {
        assert.ok(error instanceof McpError);
        assert.equal(error.code, ErrorCode.RequestTimeout);
        return true;
      });
    });

    test('--hang-after-pages: the first pages are answered, the next one never is', { timeout: TEST_TIMEOUT }, async () => {
      const { client } = await stdioFixture(['--page-size', '1', '--hang-after-pages', '2']);
      const first = await client.listTools();
      const second = await client.listTools({ cursor: first.nextCursor });
      assert.equal(second.tools[0]?.name, 'add_numbers');
      await assert.rejects(client.listTools({ cursor: second.nextCursor }, { timeout: 300 }), (error: unknown) => error instanceof McpError && error.code === ErrorCode.RequestTimeout);
    });

    test('--hang-initialize: initialize is never answered', { timeout: TEST_TIMEOUT }, async () => {
      await assert.rejects(stdioFixture(['--hang-initialize'], { connectTimeout: 300 }), (error: unknown) => {
        assert.ok(error instanceof McpError);
        assert.equal(error.code, ErrorCode.RequestTimeout);
        return true;
      });
    });
  });

  describe('failures', () => {
    test('--crash-after-pages over stdio: the next page closes the connection', { timeout: TEST_TIMEOUT }, async () => {
      let closed = false;
      const { client, transport } = await stdioFixture(['--page-size', '1', '--crash-after-pages', '1'], {
        beforeConnect: (c) => {
          c.onclose = () => {
            closed = true;
          };
        },
      });
      const serverPid = transport.pid;
      assert.ok(serverPid);
      const first = await client.listTools();
      assert.equal(first.tools.length, 1);
      await assert.rejects(client.listTools({ cursor: first.nextCursor }), (error: unknown) => {
        assert.ok(error instanceof McpError);
        assert.equal(error.code, ErrorCode.ConnectionClosed);
        return true;
      });
      await waitFor('onclose', () => closed, 3000);
      await waitFor('the crashed server to be gone', () => !isAlive(serverPid), 3000);
    });

    test('--crash-after-pages over HTTP: the socket dies and the process exits with 3', { timeout: TEST_TIMEOUT }, async () => {
      const server = await httpFixture(['--page-size', '1', '--crash-after-pages', '1']);
      const { client } = await connectHttp(server.url);
      const first = await client.listTools();
      await assert.rejects(client.listTools({ cursor: first.nextCursor }), (error: unknown) => {
        assert.ok(error instanceof Error);
        assert.match(error.message, /fetch failed/);
        return true;
      });
      assert.deepEqual(await within(server.exited, 3000, 'exit'), { code: 3, signal: null });
    });

    test('--malformed tools-not-array: the result is {tools: {}}; listTools() rejects it', { timeout: TEST_TIMEOUT }, async () => {
      const { client } = await stdioFixture(['--malformed', 'tools-not-array']);
      const raw = (await client.request({ method: 'tools/list', params: {} }, Raw)) as RawTools;
      assert.deepEqual(raw.tools, {});
      await assert.rejects(client.listTools(), (error: unknown) => error instanceof Error && /expected array/.test(error.message));
    });

    test('--malformed tool-without-name: one tool lacks name; listTools() rejects it', { timeout: TEST_TIMEOUT }, async () => {
      const { client } = await stdioFixture(['--malformed', 'tool-without-name']);
      const raw = (await client.request({ method: 'tools/list', params: {} }, Raw)) as { tools: Array<Record<string, unknown>> };
      assert.equal(raw.tools.length, 3);
      assert.deepEqual(raw.tools.map((tool) => 'name' in tool), [true, true, false]);
      await assert.rejects(client.listTools(), (error: unknown) => error instanceof Error && /"name"/.test(error.message));
    });

    test('--malformed old-shape: input_schema instead of inputSchema; listTools() rejects it', { timeout: TEST_TIMEOUT }, async () => {
      const { client } = await stdioFixture(['--malformed', 'old-shape']);
      const raw = (await client.request({ method: 'tools/list', params: {} }, Raw)) as { tools: Array<Record<string, unknown>> };
      assert.deepEqual(raw.tools[0], { name: ECHO_UPPER.name, description: ECHO_UPPER.description, input_schema: ECHO_UPPER.inputSchema });
      assert.ok(raw.tools.every((tool) => !('inputSchema' in tool)));
      await assert.rejects(client.listTools(), (error: unknown) => error instanceof Error && /inputSchema/.test(error.message));
    });

    test('--malformed duplicate-names: two tools share a name; listTools() accepts it', { timeout: TEST_TIMEOUT }, async () => {
      const { client } = await stdioFixture(['--malformed', 'duplicate-names']);
      const listed = await client.listTools();
      assert.deepEqual(listed.tools.map((tool) => tool.name), ['echo_upper', 'echo_upper', 'reverse_text']);
      assert.notEqual(listed.tools[0]?.description, listed.tools[1]?.description, 'same name, different tools');
    });

    test('--malformed invalid-json over HTTP: 200 application/json with a body that is not JSON', { timeout: TEST_TIMEOUT }, async () => {
      const server = await httpFixture(['--malformed', 'invalid-json']);
      const raw = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
      });
      assert.equal(raw.status, 200);
      assert.equal(raw.headers.get('content-type'), 'application/json');
      const text = await raw.text();
      assert.throws(() => JSON.parse(text), SyntaxError);

      const { client } = await connectHttp(server.url);
      await assert.rejects(client.listTools({}, { timeout: 3000 }), SyntaxError);
    });

    test('--malformed invalid-json over stdio: a line that is not JSON and no answer', { timeout: TEST_TIMEOUT }, async () => {
      const { client, errors } = await stdioFixture(['--malformed', 'invalid-json']);
      await assert.rejects(client.listTools({}, { timeout: 500 }), (error: unknown) => error instanceof McpError && error.code === ErrorCode.RequestTimeout);
      assert.ok(errors.some((error) => error instanceof SyntaxError), `the client saw the broken line: ${errors.map(String).join('; ')}`);
    });
  });

  describe('HTTP auth', () => {
    test('--require-bearer: 401 with WWW-Authenticate: Bearer unless the token is sent; the log never holds it', { timeout: TEST_TIMEOUT }, async () => {
      const log = scratchFile('bearer.jsonl');
      const server = await httpFixture(['--require-bearer', 'sekrit-token', '--log-requests', log]);
      const refused = await postInitialize(server.url);
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
      assert.equal((await postInitialize(server.url, { authorization: 'Bearer wrong' })).status, 401);
      assert.equal((await postInitialize(server.url, { authorization: 'Bearer sekrit-token' })).status, 200);

      const anonymous = newClient();
      cleanups.push(() => anonymous.close());
      await assert.rejects(anonymous.connect(new StreamableHTTPClientTransport(server.url), { timeout: 5000 }), (error: unknown) => {
        assert.ok(error instanceof StreamableHTTPError);
        assert.equal(error.code, 401);
        return true;
      });
      const { client } = await connectHttp(server.url, { headers: { Authorization: 'Bearer sekrit-token' } });
      assert.equal((await client.listTools()).tools.length, 3);

      const entries = readLog(log);
      assert.ok(!fs.readFileSync(log, 'utf8').includes('sekrit-token'), 'credential values are never logged');
      const first = entries[0] as { status?: number; headers: Record<string, string> };
      assert.equal(first.status, 401);
      assert.equal(first.headers.authorization, undefined, 'no Authorization header was sent');
      const listed = entries.find((entry) => entry.method === 'tools/list') as { headers: Record<string, string>; status?: number };
      assert.equal(listed.headers.authorization, '<redacted>');
      assert.equal(listed.status, undefined);
    });

    test('--require-api-key with --api-key-header: 401 unless that header matches', { timeout: TEST_TIMEOUT }, async () => {
      const server = await httpFixture(['--require-api-key', 'k-123', '--api-key-header', 'X-Team-Key']);
      assert.equal((await postInitialize(server.url)).status, 401);
      assert.equal((await postInitialize(server.url, { 'X-API-Key': 'k-123' })).status, 401, 'the configured header, not the default');
      assert.equal((await postInitialize(server.url, { 'X-Team-Key': 'k-123' })).status, 200);
      const { client } = await connectHttp(server.url, { headers: { 'X-Team-Key': 'k-123' } });
      assert.equal((await client.listTools()).tools.length, 3);
    });

    test('--forbid: 403 on every request', { timeout: TEST_TIMEOUT }, async () => {
      const server = await httpFixture(['--forbid']);
      assert.equal((await postInitialize(server.url)).status, 403);
      assert.equal((await postInitialize(server.url, { authorization: 'Bearer anything' })).status, 403);
      assert.equal((await fetch(server.url)).status, 403);
      const client = newClient();
      cleanups.push(() => client.close());
      await assert.rejects(client.connect(new StreamableHTTPClientTransport(server.url), { timeout: 5000 }), (error: unknown) => {
        assert.ok(error instanceof StreamableHTTPError);
        assert.equal(error.code, 403);
        return true;
      });
    });

    test('--oauth: 401 pointing at protected-resource metadata whose authorization server does not exist', { timeout: TEST_TIMEOUT }, async () => {
      const server = await httpFixture(['--oauth']);
      const refused = await postInitialize(server.url, { authorization: 'Bearer guessed' });
      assert.equal(refused.status, 401);
      const metadataUrl = `${server.base}/.well-known/oauth-protected-resource`;
      assert.equal(refused.headers.get('www-authenticate'), `Bearer resource_metadata="${metadataUrl}"`);
      const metadata = (await (await fetch(metadataUrl)).json()) as { resource: string; authorization_servers: string[] };
      assert.equal(metadata.resource, server.url.href);
      const [issuerHref, ...others] = metadata.authorization_servers;
      assert.ok(issuerHref !== undefined && others.length === 0, `one authorization server expected: ${JSON.stringify(metadata.authorization_servers)}`);
      const issuer = new URL(issuerHref);
      assert.equal(issuer.hostname, '127.0.0.1');
      const asMetadata = await fetch(new URL(`/.well-known/oauth-authorization-server${issuer.pathname}`, issuer));
      assert.equal(asMetadata.status, 404);
      await asMetadata.body?.cancel();
      assert.equal((await fetch(`${server.base}/.well-known/oauth-protected-resource/mcp`)).status, 200);
    });
  });

  describe('drift control', () => {
    test('--control-file over Streamable HTTP: list_changed reaches the client and a re-list shows the change', { timeout: TEST_TIMEOUT }, async () => {
      const control = scratchFile('control.json');
      const server = await httpFixture(['--control-file', control]);
      const { client } = await connectHttp(server.url);
      assert.equal((await client.listTools()).tools[0]?.description, ECHO_UPPER.description);

      const rewritten = { type: 'object', properties: { text: { type: 'string' }, shout: { type: 'boolean' } }, required: ['text'] };
      let changed = nextListChanged(client);
      writeControl(control, { version: 2, rewrite: { echo_upper: { description: 'Rewritten description.', inputSchema: rewritten } } });
      await within(changed, 5000, 'notifications/tools/list_changed');
      const second = await client.listTools();
      assert.equal(second.tools[0]?.description, 'Rewritten description.');
      assert.deepEqual(second.tools[0]?.inputSchema, rewritten);

      // Each version applies to the start-up list, not to the previous version.
      changed = nextListChanged(client);
      writeControl(control, { version: 3, remove: ['add_numbers'], add: [{ name: 'brand_new', inputSchema: { type: 'object' } }] });
      await within(changed, 5000, 'the second list_changed');
      const third = await client.listTools();
      assert.deepEqual(third.tools.map((tool) => tool.name), ['echo_upper', 'reverse_text', 'brand_new']);
      assert.equal(third.tools[0]?.description, ECHO_UPPER.description);
    });

    test('--control-file over stdio, and an unchanged version sends nothing', { timeout: TEST_TIMEOUT }, async () => {
      const control = scratchFile('control.json');
      writeControl(control, { version: 1, remove: ['reverse_text'] });
      const { client } = await stdioFixture(['--control-file', control]);
      assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['echo_upper', 'add_numbers'], 'the start-up state applies');
      let notified = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        notified++;
      });
      writeControl(control, { version: 1, remove: [] });
      await sleep(250);
      assert.equal(notified, 0, 'same version: no change');
      writeControl(control, { version: 2, remove: [] });
      await waitFor('list_changed', () => notified === 1, 5000);
      assert.equal((await client.listTools()).tools.length, 3);
    });

    test('--list-changed-on-start sends list_changed right after initialization (stdio and HTTP)', { timeout: TEST_TIMEOUT }, async () => {
      let stdioChanged: Promise<void> | undefined;
      await stdioFixture(['--list-changed-on-start'], { beforeConnect: (c) => (stdioChanged = nextListChanged(c)) });
      await within(stdioChanged!, 5000, 'list_changed over stdio');

      const server = await httpFixture(['--list-changed-on-start']);
      let httpChanged: Promise<void> | undefined;
      await connectHttp(server.url, { beforeConnect: (c) => (httpChanged = nextListChanged(c)) });
      await within(httpChanged!, 5000, 'list_changed over Streamable HTTP');
    });
  });

  describe('processes', () => {
    test('--pid-file and --spawn-child: both alive while running; the grandchild outlives the SDK\'s close()', { timeout: TEST_TIMEOUT }, async () => {
      const pidFile = scratchFile('server.pid');
      const childFile = scratchFile('child.pid');
      const { client, transport } = await stdioFixture(['--pid-file', pidFile, '--spawn-child', childFile, '--child-lifetime-ms', '60000']);
      const serverPid = Number(fs.readFileSync(pidFile, 'utf8'));
      const childPid = Number(fs.readFileSync(childFile, 'utf8'));
      pids.add(childPid);
      cleanups.push(() => {
        if (isAlive(childPid)) process.kill(childPid, 'SIGKILL');
      });
      assert.equal(serverPid, transport.pid);
      assert.notEqual(childPid, serverPid);
      assert.ok(isAlive(serverPid) && isAlive(childPid));
      assert.equal((await client.listTools()).tools.length, 3);

      await client.close();
      await waitFor('the server to exit', () => !isAlive(serverPid), 5000);
      assert.ok(isAlive(childPid), 'the SDK kills only its direct child: cleaning up the tree is the caller\'s job');
      process.kill(childPid, 'SIGTERM');
      await waitFor('the grandchild to exit', () => !isAlive(childPid), 5000);
    });

    test('exits 0 on SIGTERM and when stdin closes; unknown options exit 2', { timeout: TEST_TIMEOUT }, async () => {
      const server = await httpFixture([]);
      server.proc.kill('SIGTERM');
      assert.deepEqual(await within(server.exited, 5000, 'exit on SIGTERM'), { code: 0, signal: null });

      const stdio = spawn(process.execPath, [FIXTURE], { cwd: root, stdio: ['pipe', 'pipe', 'ignore'] });
      assert.ok(stdio.pid);
      pids.add(stdio.pid);
      const stdioExit = new Promise<number | null>((resolve) => stdio.once('exit', (code) => resolve(code)));
      cleanups.push(() => stdio.kill('SIGKILL'));
      let stdout = '';
      stdio.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
      });
      await sleep(300);
      stdio.stdin?.end();
      assert.equal(await within(stdioExit, 5000, 'exit when stdin closes'), 0);
      assert.equal(stdout, '', 'nothing but MCP messages on stdout');

      const bad = spawnSync(process.execPath, [FIXTURE, '--no-such-option'], { encoding: 'utf8', timeout: 10_000 });
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /no-such-option/);
    });
  });
});
