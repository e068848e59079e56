/**
 * Live verification's pure core, data-driven: how pages become a listing (`collectListing`, with
 * its own `fetchPage` injection point fed by a scripted page table), how mcp.json files become
 * server definitions (variables, inferred types, unusable entries), which definition a name
 * refers to (registry precedence, `serverKey`), and every state and problem code of
 * `verifyBlueprint` / `verifyConnector` against listings built directly as `ServerListing` data.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { analyzeBlueprint, type BlueprintModel } from '../../server/src/core/documents/blueprint';
import { analyzeConnector } from '../../server/src/core/documents/connector';
import { type CollectedListing, collectListing, type ListedTool, readListedTool } from '../../server/src/core/verify/listing';
import { schemaPin, schemaPinContent, toolPin, toolPinContent } from '../../server/src/core/pins/pins';
import type { Problem } from '../../server/src/core/problems';
import {
  connectorServers,
  readMcpJsonServers,
  resolveVariables,
  type ServerDefinition,
  serverKey,
  ServerRegistry,
  type TransportSpec,
  type VariableContext,
} from '../../server/src/core/verify/registry';
import { describeAge, type PinVerdict, type ServerListing, summarize, type VerificationContext, verifyBlueprint, verifyConnector } from '../../server/src/core/verify/verify';
import { buildWorkspaceRegistry } from '../../server/src/engine/workspaceRegistry';
/** The contract's reference tool (docs/formats.md §2) and its pins. */
import { ECHO_SCHEMA_PIN, ECHO_TOOL_HEX, ECHO_TOOL_PIN, ECHO_UPPER } from '../support/referenceVectors';

// ---------------------------------------------------------------------------------------------
// Tools, pins and listings
// ---------------------------------------------------------------------------------------------

const ADD_NUMBERS = {
  name: 'add_numbers',
  description: 'Add two numbers.',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
};
const REVERSE_TEXT = { name: 'reverse_text', description: 'Reverse the text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };
const WRONG_SCHEMA_PIN = 'fnv1a64:0000000000000000';
const WRONG_TOOL_PIN = `sha256:${'0'.repeat(64)}`;

const MINUTE = 60_000;
const NOW = Date.UTC(2026, 7, 20, 10, 15, 0);

/** A listing as the adapter would hand it over, each tool read like core/verify/listing reads it. */
function collected(tools: readonly unknown[], extra: Partial<CollectedListing> = {}): CollectedListing {
  const read = tools.map((tool) => readListedTool(tool));
  return {
    tools: read.filter((tool): tool is ListedTool => typeof tool !== 'string'),
    malformedEntries: read.flatMap((tool, index) => (typeof tool === 'string' ? [`page 1, entry ${index}: ${tool}`] : [])),
    duplicateNames: [],
    pages: 1,
    incomplete: undefined,
    ttlMs: undefined,
    ...extra,
  };
}

function listed(tools: readonly unknown[], extra: Partial<CollectedListing> = {}, listedAt = NOW - MINUTE): ServerListing {
  return { status: 'listed', listing: collected(tools, extra), listedAt };
}

const INCOMPLETE: Partial<CollectedListing> = { incomplete: { code: 'page-cap', message: 'the server kept paginating past 100 pages' }, pages: 100 };
const MALFORMED: Partial<CollectedListing> = { malformedEntries: ['page 1, entry 3: an entry without a string "name"'] };

function unavailable(lastGoodAgeMs?: number, lastGoodTools: readonly unknown[] = [ECHO_UPPER]): ServerListing {
  return {
    status: 'unavailable',
    reason: 'unauthorized',
    message: 'HTTP 401: the server rejected the credential',
    ...(lastGoodAgeMs === undefined ? {} : { lastGood: { listing: collected(lastGoodTools), listedAt: NOW - lastGoodAgeMs } }),
  };
}

// ---------------------------------------------------------------------------------------------
// Definitions, registries and documents
// ---------------------------------------------------------------------------------------------

const WORKSPACE = path.join(path.sep, 'workspace');
const STDIO: TransportSpec = { kind: 'stdio', command: 'node', args: ['server.mjs'], env: {} };

function definition(name: string, overrides: Partial<ServerDefinition> = {}): ServerDefinition {
  return { name, origin: { kind: 'mcp-json', file: path.join(WORKSPACE, '.mcp.json') }, transport: STDIO, auth: undefined, unusable: undefined, cwd: WORKSPACE, ...overrides };
}

/**
 * A verification context over named definitions; listings are looked up by definition identity.
 * Argument checking (TP410, test/unit/arguments.test.ts) is off: these steps carry no arguments,
 * and this file is about pins.
 */
function contextOf(entries: ReadonlyArray<[ServerDefinition, ServerListing]>, now = NOW): VerificationContext {
  const listings = new Map(entries);
  const registry = new ServerRegistry(entries.map(([defined]) => defined));
  return {
    registry,
    now,
    checkArguments: false,
    listingFor: (defined) => listings.get(defined) ?? { status: 'unavailable', reason: 'unreachable', message: 'not listed in this test' },
  };
}

/** The named members of a problem's data (it carries more, e.g. the live content for fixes). */
function dataOf(found: Problem | undefined, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => found?.data && key in found.data).map((key) => [key, found!.data![key]]));
}
const DRIFT_KEYS = ['kind', 'tool', 'server', 'pinned', 'live', 'style', 'liveContent', 'change'];

interface StepSpec {
  tool: string;
  pin: string;
  server?: string;
  id?: string;
}

function blueprintText(steps: readonly StepSpec[]): string {
  const body = steps
    .map((step, index) => {
      const server = step.server === undefined ? '' : `, "server": "${step.server}"`;
      return `    { "id": "${step.id ?? `step-${index + 1}`}", "effect": "mcp.invoke", "input": { "toolName": "${step.tool}", "expectedSchemaHash": "${step.pin}"${server} } }`;
    })
    .join(',\n');
  return `{\n  // generated for a test\n  "blueprint": "verification", "formatVersion": 1,\n  "steps": [\n${body}\n  ]\n}`;
}

function blueprintModel(text: string): BlueprintModel {
  const analysis = analyzeBlueprint(text);
  assert.deepEqual(analysis.problems.map((found) => `${found.code} ${found.message}`), [], 'the test blueprint is clean');
  return analysis.model;
}

/** The text a problem's span covers. */
function covers(text: string, found: Problem | PinVerdict): string {
  return text.slice(found.span.offset, found.span.offset + found.span.length);
}

const CONNECTOR_FILE = path.join(WORKSPACE, 'github.connector.jsonc');

function connectorText(options: { name?: string; include?: string[]; snapshot?: Record<string, string> } = {}): string {
  const include = options.include ? `,\n    "include": ${JSON.stringify(options.include)}` : '';
  const snapshot = options.snapshot ? `,\n    "toolsSnapshot": ${JSON.stringify(options.snapshot, null, 2)}` : '';
  return `{
  "name": "${options.name ?? 'github_tools'}",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": "node", "args": ["./server.mjs"] }${include}${snapshot}
  }
}`;
}

interface ConnectorRun {
  text: string;
  server: ServerDefinition;
  result: ReturnType<typeof verifyConnector>;
}

/** Verifies a connector file against a listing of its own server. */
function verifyConnectorText(text: string, listing: ServerListing, now = NOW): ConnectorRun {
  const analysis = analyzeConnector(text);
  assert.deepEqual(analysis.problems.map((found) => `${found.code} ${found.message}`), [], 'the test connector is clean');
  const definitions = connectorServers(CONNECTOR_FILE, analysis.model, WORKSPACE);
  assert.equal(definitions.length, 1);
  const server = definitions[0]!;
  const result = verifyConnector(CONNECTOR_FILE, analysis.model, definitions, contextOf([[server, listing]], now));
  return { text, server, result };
}

function codes(problems: readonly Problem[]): string[] {
  return problems.map((found) => found.code);
}

function states(verdicts: readonly PinVerdict[]): string[] {
  return verdicts.map((verdict) => `${verdict.tool}: ${verdict.state}`);
}

// ---------------------------------------------------------------------------------------------
// collectListing
// ---------------------------------------------------------------------------------------------

/** A scripted server: the result for each cursor (`(first)` for none); records every cursor asked. */
function pages(table: Record<string, unknown>): { fetchPage: (cursor: string | undefined) => Promise<unknown>; asked: Array<string | undefined> } {
  const asked: Array<string | undefined> = [];
  return {
    asked,
    fetchPage: async (cursor) => {
      asked.push(cursor);
      const key = cursor === undefined ? '(first)' : cursor;
      if (!(key in table)) throw new Error(`the test asked for an unscripted cursor ${JSON.stringify(cursor)}`);
      return table[key];
    },
  };
}

const LIMITS = { maxPages: 100 };

describe('collectListing: pagination', () => {
  test('one page without a cursor is a complete listing', async () => {
    const server = pages({ '(first)': { tools: [ECHO_UPPER, ADD_NUMBERS] } });
    const result = await collectListing(server.fetchPage, LIMITS);
    assert.deepEqual(result.tools.map((tool) => tool.name), ['echo_upper', 'add_numbers']);
    assert.equal(result.pages, 1);
    assert.equal(result.incomplete, undefined);
    assert.deepEqual(result.malformedEntries, []);
    assert.deepEqual(result.duplicateNames, []);
    assert.deepEqual(server.asked, [undefined]);
    assert.deepEqual(result.tools[0]!.raw, ECHO_UPPER, 'the raw object is kept as served');
  });

  test('cursors are followed in order, and an empty-string cursor is still a cursor', async () => {
    const server = pages({
      '(first)': { tools: [ECHO_UPPER], nextCursor: '' },
      '': { tools: [ADD_NUMBERS], nextCursor: 'c3' },
      c3: { tools: [REVERSE_TEXT] },
    });
    const result = await collectListing(server.fetchPage, LIMITS);
    assert.deepEqual(server.asked, [undefined, '', 'c3']);
    assert.deepEqual(result.tools.map((tool) => tool.name), ['echo_upper', 'add_numbers', 'reverse_text']);
    assert.equal(result.pages, 3);
    assert.equal(result.incomplete, undefined);
  });

  test('a null nextCursor ends the listing (some servers serialize "no more" as null)', async () => {
    const result = await collectListing(pages({ '(first)': { tools: [ECHO_UPPER], nextCursor: null } }).fetchPage, LIMITS);
    assert.equal(result.incomplete, undefined);
    assert.equal(result.pages, 1);
  });

  test('a repeated cursor ends the listing as incomplete (repeated-cursor), keeping what was read', async () => {
    const server = pages({
      '(first)': { tools: [ECHO_UPPER], nextCursor: 'a' },
      a: { tools: [ADD_NUMBERS], nextCursor: 'b' },
      b: { tools: [REVERSE_TEXT], nextCursor: 'a' },
    });
    const result = await collectListing(server.fetchPage, LIMITS);
    assert.equal(result.incomplete?.code, 'repeated-cursor');
    assert.match(result.incomplete!.message, /page 3/);
    assert.deepEqual(server.asked, [undefined, 'a', 'b'], 'the repeated cursor is not asked for again');
    assert.equal(result.tools.length, 3);
  });

  test('a page that repeats its own cursor is caught at once', async () => {
    const server = pages({ '(first)': { tools: [ECHO_UPPER], nextCursor: 'x' }, x: { tools: [ADD_NUMBERS], nextCursor: 'x' } });
    const result = await collectListing(server.fetchPage, LIMITS);
    assert.equal(result.incomplete?.code, 'repeated-cursor');
    assert.equal(result.pages, 2);
  });

  test('the page cap ends an endless listing as incomplete (page-cap) without asking beyond it', async () => {
    const asked: Array<string | undefined> = [];
    let page = 0;
    const result = await collectListing(
      async (cursor) => {
        asked.push(cursor);
        page++;
        return { tools: [{ name: `tool_${page}`, inputSchema: { type: 'object' } }], nextCursor: `cursor-${page}` };
      },
      { maxPages: 3 },
    );
    assert.equal(result.incomplete?.code, 'page-cap');
    assert.match(result.incomplete!.message, /3 pages/);
    assert.equal(result.pages, 3);
    assert.equal(asked.length, 3);
    assert.deepEqual(result.tools.map((tool) => tool.name), ['tool_1', 'tool_2', 'tool_3']);
  });

  test('exactly maxPages pages that end on their own are complete', async () => {
    const server = pages({ '(first)': { tools: [ECHO_UPPER], nextCursor: 'a' }, a: { tools: [ADD_NUMBERS] } });
    const result = await collectListing(server.fetchPage, { maxPages: 2 });
    assert.equal(result.incomplete, undefined);
    assert.equal(result.pages, 2);
  });

  test('errors of fetchPage propagate: the caller knows what a timeout or a closed stream means', async () => {
    const failure = new Error('request timed out');
    await assert.rejects(
      collectListing(async (cursor) => {
        if (cursor === undefined) return { tools: [ECHO_UPPER], nextCursor: 'next' };
        throw failure;
      }, LIMITS),
      (error) => error === failure,
    );
  });

  const malformedPages: Array<[string, unknown, RegExp]> = [
    ['a result that is not an object (null)', null, /a result that is not an object/],
    ['a result that is an array', [ECHO_UPPER], /a result that is not an object/],
    ['a result that is a string', 'tools', /a result that is not an object/],
    ['no "tools"', { nextCursor: 'x' }, /no "tools"/],
    ['"tools" that is an object', { tools: {} }, /"tools" that is not an array/],
    ['"tools" that is a string', { tools: 'echo_upper' }, /"tools" that is not an array/],
  ];
  for (const [name, result, message] of malformedPages) {
    test(`a malformed page — ${name} — ends the listing as incomplete (malformed-page)`, async () => {
      const listing = await collectListing(pages({ '(first)': result }).fetchPage, LIMITS);
      assert.equal(listing.incomplete?.code, 'malformed-page');
      assert.match(listing.incomplete!.message, message);
      assert.match(listing.incomplete!.message, /page 1/);
      assert.deepEqual(listing.tools, []);
    });
  }

  test('a malformed second page keeps the first page and says which page', async () => {
    const listing = await collectListing(pages({ '(first)': { tools: [ECHO_UPPER], nextCursor: 'a' }, a: { tools: 7 } }).fetchPage, LIMITS);
    assert.equal(listing.incomplete?.code, 'malformed-page');
    assert.match(listing.incomplete!.message, /page 2/);
    assert.deepEqual(listing.tools.map((tool) => tool.name), ['echo_upper']);
  });

  // BUG (core/verify/listing.ts, `if (typeof next !== 'string') break;`): a nextCursor that is present but
  // not a string (a number, an object) silently ends the listing as COMPLETE. The server said there
  // is more, in a form Toolpin cannot follow; treating the rest as "not served" turns every pinned
  // tool on the later pages into a TP401 "missing" finding (with a remove fix) instead of "cannot
  // verify". null and undefined end the listing; anything else should be a malformed page.
  test('a nextCursor that is not a string (a number, an object, a boolean) is not "the end": malformed-page', async () => {
    for (const cursor of [2, { offset: 100 }, true]) {
      const listing = await collectListing(pages({ '(first)': { tools: [ECHO_UPPER], nextCursor: cursor } }).fetchPage, LIMITS);
      assert.equal(listing.incomplete?.code, 'malformed-page', `a cursor Toolpin cannot follow (${JSON.stringify(cursor)}) leaves the listing incomplete`);
      assert.deepEqual(listing.tools.map((tool) => tool.name), ['echo_upper']);
    }
  });
});

describe('collectListing: lenient reading of tools', () => {
  test('garbage entries are reported by page and index; the rest are read', async () => {
    const listing = await collectListing(
      pages({
        '(first)': { tools: [ECHO_UPPER, 'echo', null, { description: 'no name' }], nextCursor: 'p2' },
        p2: { tools: [{ name: '' }, { name: 42 }, ADD_NUMBERS, ['array']] },
      }).fetchPage,
      LIMITS,
    );
    assert.deepEqual(listing.tools.map((tool) => tool.name), ['echo_upper', 'add_numbers']);
    assert.deepEqual(listing.malformedEntries, [
      'page 1, entry 1: an entry that is not an object',
      'page 1, entry 2: an entry that is not an object',
      'page 1, entry 3: an entry without a string "name"',
      'page 2, entry 0: an entry without a string "name"',
      'page 2, entry 1: an entry without a string "name"',
      'page 2, entry 3: an entry that is not an object',
    ]);
    assert.equal(listing.incomplete, undefined, 'malformed entries do not make the listing incomplete');
  });

  test('duplicate names are reported once, across pages', async () => {
    const listing = await collectListing(
      pages({
        '(first)': { tools: [ECHO_UPPER, ADD_NUMBERS], nextCursor: 'p2' },
        p2: { tools: [{ ...ECHO_UPPER, description: 'another' }, ECHO_UPPER, ADD_NUMBERS] },
      }).fetchPage,
      LIMITS,
    );
    assert.deepEqual(listing.duplicateNames.sort(), ['add_numbers', 'echo_upper']);
    assert.equal(listing.tools.length, 5, 'every copy is kept, so verification can compare them');
  });

  const unpinnable: Array<[string, Record<string, unknown>, RegExp | undefined]> = [
    ['a numeric description', { name: 't', description: 3, inputSchema: {} }, /"description" is number/],
    ['an array inputSchema', { name: 't', inputSchema: [] }, /"inputSchema" is not an object/],
    ['a string inputSchema', { name: 't', inputSchema: '{}' }, /"inputSchema" is not an object/],
    ['a null inputSchema', { name: 't', inputSchema: null }, /"inputSchema" is not an object/],
    ['the older input_schema', { name: 't', input_schema: { type: 'object' } }, /older shape \("input_schema"/],
    ['the older parameters', { name: 't', parameters: { type: 'object' } }, /older shape \("parameters"/],
    ['no inputSchema at all (still pinnable: {name, description})', { name: 't', description: 'd' }, undefined],
    ['extra fields (ignored by the pins)', { ...ECHO_UPPER, title: 'Echo', annotations: { readOnlyHint: true } }, undefined],
  ];
  for (const [name, entry, reason] of unpinnable) {
    test(`a tool with ${name}`, () => {
      const tool = readListedTool(entry);
      assert.ok(typeof tool !== 'string');
      if (reason) assert.match(tool.unpinnable ?? '(pinnable)', reason);
      else assert.equal(tool.unpinnable, undefined);
      assert.equal(tool.raw, entry);
    });
  }

  test('ttlMs: the smallest valid hint over all pages; invalid hints are ignored', async () => {
    const listing = await collectListing(
      pages({
        '(first)': { tools: [], ttlMs: 60_000, nextCursor: 'a' },
        a: { tools: [], ttlMs: 5_000, nextCursor: 'b' },
        b: { tools: [], ttlMs: -1, nextCursor: 'c' },
        c: { tools: [], ttlMs: '10', nextCursor: 'd' },
        d: { tools: [], ttlMs: Number.NaN, nextCursor: 'e' },
        e: { tools: [], ttlMs: Number.POSITIVE_INFINITY },
      }).fetchPage,
      LIMITS,
    );
    assert.equal(listing.ttlMs, 5_000);
    assert.equal((await collectListing(pages({ '(first)': { tools: [] } }).fetchPage, LIMITS)).ttlMs, undefined);
    assert.equal((await collectListing(pages({ '(first)': { tools: [], ttlMs: 0 } }).fetchPage, LIMITS)).ttlMs, 0, '0 is a valid hint (the inventory raises it to the minimum)');
  });
});

// ---------------------------------------------------------------------------------------------
// Variables and mcp.json files
// ---------------------------------------------------------------------------------------------

const VARIABLES: VariableContext = {
  workspaceFolder: path.join(WORKSPACE, 'project'),
  userHome: path.join(path.sep, 'home', 'dev'),
  env: { TOOLPIN_SET: 'from-env', TOOLPIN_EMPTY: '' },
  inputs: { 'api-token': 'input-value' },
};

describe('resolveVariables', () => {
  const cases: Array<[string, string, VariableContext, { value: string } | { unresolved: RegExp }]> = [
    ['no variables', 'plain text', VARIABLES, { value: 'plain text' }],
    ['${workspaceFolder}', '${workspaceFolder}/server.mjs', VARIABLES, { value: `${path.join(WORKSPACE, 'project')}/server.mjs` }],
    ['${workspaceFolderBasename}', 'name=${workspaceFolderBasename}', VARIABLES, { value: 'name=project' }],
    ['${userHome}', '${userHome}/.cache', VARIABLES, { value: `${path.join(path.sep, 'home', 'dev')}/.cache` }],
    ['${userHome} unknown', '${userHome}/.cache', { ...VARIABLES, userHome: undefined }, { unresolved: /userHome/ }],
    ['${env:X} set', 'token=${env:TOOLPIN_SET}', VARIABLES, { value: 'token=from-env' }],
    ['${env:X} set to the empty string', '[${env:TOOLPIN_EMPTY}]', VARIABLES, { value: '[]' }],
    ['${env:X} unset', 'token=${env:TOOLPIN_UNSET}', VARIABLES, { unresolved: /^the environment variable TOOLPIN_UNSET is not set$/ }],
    ['${input:id} with a value', 'Bearer ${input:api-token}', VARIABLES, { value: 'Bearer input-value' }],
    ['${input:id} without a value', 'Bearer ${input:other}', VARIABLES, { unresolved: /^the input "other" has no value \(set it in the editor\)$/ }],
    ['${input:id} with no inputs at all', '${input:api-token}', { ...VARIABLES, inputs: undefined }, { unresolved: /input "api-token"/ }],
    ['an unsupported variable', '${command:pick}', VARIABLES, { unresolved: /\$\{command:pick\} is not supported/ }],
    ['several, all resolved', '${env:TOOLPIN_SET}-${input:api-token}-${workspaceFolderBasename}', VARIABLES, { value: 'from-env-input-value-project' }],
    ['several, the first unresolved is named', '${env:A_UNSET}${input:missing}', VARIABLES, { unresolved: /A_UNSET/ }],
  ];
  for (const [name, text, context, expected] of cases) {
    test(name, () => {
      const result = resolveVariables(text, context);
      if ('value' in expected) assert.deepEqual(result, expected);
      else {
        assert.ok('unresolved' in result, `unresolved, got ${JSON.stringify(result)}`);
        assert.match(result.unresolved, expected.unresolved);
      }
    });
  }
});

const VSCODE_MCP_JSON = `{
  // .vscode/mcp.json: JSONC, with inputs the editor prompts for
  "inputs": [{ "id": "api-token", "type": "promptString", "password": true }],
  "servers": {
    "local": { "type": "stdio", "command": "node", "args": ["\${workspaceFolder}/server.mjs", "--flag"], "env": { "TOKEN": "\${env:TOOLPIN_SET}", "PLAIN": "1" } },
    "remote": { "type": "http", "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer \${input:api-token}" } },
    "legacy": { "type": "sse", "url": "http://127.0.0.1:9999/sse" },
    "inferred_stdio": { "command": "npx", "args": ["-y", "some-server"] },
    "inferred_http": { "url": "http://localhost:3000/mcp" },
    "needs_env": { "command": "node", "env": { "KEY": "\${env:TOOLPIN_UNSET}" } },
    "needs_input": { "url": "https://mcp.example.com/\${input:tenant}/mcp" },
    "no_command": { "type": "stdio", "args": ["x"] },
    "no_url": { "type": "http" },
    "websocket": { "type": "ws", "url": "ws://127.0.0.1:1" },
    "not_object": 42,
  },
}`;

describe('readMcpJsonServers', () => {
  const origin = { kind: 'vscode-mcp-json' as const, file: path.join(WORKSPACE, 'project', '.vscode', 'mcp.json') };
  const servers = readMcpJsonServers(VSCODE_MCP_JSON, 'servers', origin, VARIABLES);
  const byName = new Map(servers.map((server) => [server.name, server]));

  test('every entry becomes a definition, in source order, named where the name is written', () => {
    assert.deepEqual(servers.map((server) => server.name), ['local', 'remote', 'legacy', 'inferred_stdio', 'inferred_http', 'needs_env', 'needs_input', 'no_command', 'no_url', 'websocket', 'not_object']);
    for (const server of servers) {
      assert.equal(server.origin.kind, 'vscode-mcp-json');
      assert.equal(server.origin.file, origin.file);
      assert.equal(VSCODE_MCP_JSON.slice(server.origin.span!.offset, server.origin.span!.offset + server.origin.span!.length), `"${server.name}"`);
      assert.equal(server.cwd, VARIABLES.workspaceFolder);
      assert.equal(server.auth, undefined);
    }
  });

  test('type stdio: command, args and env, with ${workspaceFolder} and ${env:X} resolved', () => {
    assert.deepEqual(byName.get('local')!.transport, {
      kind: 'stdio',
      command: 'node',
      args: [`${VARIABLES.workspaceFolder}/server.mjs`, '--flag'],
      env: { TOKEN: 'from-env', PLAIN: '1' },
    });
    assert.equal(byName.get('local')!.unusable, undefined);
  });

  test('type http: url and headers, with ${input:id} resolved', () => {
    assert.deepEqual(byName.get('remote')!.transport, { kind: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer input-value' } });
    assert.equal(byName.get('remote')!.unusable, undefined);
  });

  test('type sse is read as http (the adapter falls back to SSE by itself)', () => {
    assert.deepEqual(byName.get('legacy')!.transport, { kind: 'http', url: 'http://127.0.0.1:9999/sse', headers: {} });
  });

  test('no type: a command means stdio, a url means http', () => {
    assert.deepEqual(byName.get('inferred_stdio')!.transport, { kind: 'stdio', command: 'npx', args: ['-y', 'some-server'], env: {} });
    assert.deepEqual(byName.get('inferred_http')!.transport, { kind: 'http', url: 'http://localhost:3000/mcp', headers: {} });
  });

  const unusable: Array<[string, RegExp]> = [
    ['needs_env', /the environment variable TOOLPIN_UNSET is not set/],
    ['needs_input', /the input "tenant" has no value/],
    ['no_command', /no "command"/],
    ['no_url', /no "url"/],
    ['websocket', /type "ws" is not stdio, http or sse/],
    ['not_object', /not an object/],
  ];
  for (const [name, reason] of unusable) {
    test(`${name} is unusable, and says why`, () => {
      assert.match(byName.get(name)!.unusable ?? '(usable)', reason);
    });
  }

  test('an unresolved variable keeps its transport (for display) but marks the definition unusable', () => {
    const needsEnv = byName.get('needs_env')!;
    assert.deepEqual(needsEnv.transport, { kind: 'stdio', command: 'node', args: [], env: { KEY: '${env:TOOLPIN_UNSET}' } });
  });

  test('without the input value, ${input:id} makes the definition unusable', () => {
    const withoutInputs = readMcpJsonServers(VSCODE_MCP_JSON, 'servers', origin, { ...VARIABLES, inputs: {} });
    assert.match(withoutInputs.find((server) => server.name === 'remote')!.unusable ?? '', /the input "api-token" has no value/);
  });

  test('.mcp.json reads mcpServers (and not servers)', () => {
    const text = `{ "mcpServers": { "dot": { "command": "node", "args": ["\${workspaceFolder}/x.mjs"] } }, "servers": { "ignored": { "command": "x" } } }`;
    const dotOrigin = { kind: 'mcp-json' as const, file: path.join(WORKSPACE, 'project', '.mcp.json') };
    const read = readMcpJsonServers(text, 'mcpServers', dotOrigin, VARIABLES);
    assert.deepEqual(read.map((server) => server.name), ['dot']);
    assert.deepEqual(read[0]!.transport, { kind: 'stdio', command: 'node', args: [`${VARIABLES.workspaceFolder}/x.mjs`], env: {} });
    assert.equal(read[0]!.origin.kind, 'mcp-json');
    assert.deepEqual(readMcpJsonServers(text, 'servers', dotOrigin, VARIABLES).map((server) => server.name), ['ignored']);
  });

  test('files without the section, or garbage, give no servers and never throw', () => {
    for (const text of ['', '{', '[]', '{ "servers": [] }', '{ "servers": "x" }', 'null', '{ "mcpServers": {} }']) {
      assert.deepEqual(readMcpJsonServers(text, 'servers', origin, VARIABLES), [], text);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Registry precedence and server keys
// ---------------------------------------------------------------------------------------------

describe('ServerRegistry precedence', () => {
  const connector = (name: string): string => connectorText({ name });

  test('connector > .vscode/mcp.json > .mcp.json > user setting; the losers are shadowed', async () => {
    const folder = path.join(WORKSPACE, 'project');
    const files = new Map([
      [path.join(folder, '.vscode', 'mcp.json'), `{ "servers": { "github_tools": { "url": "http://127.0.0.1:1/mcp" }, "shared": { "command": "vscode-shared" } } }`],
      [path.join(folder, '.mcp.json'), `{ "mcpServers": { "shared": { "command": "dot-shared" }, "dot_only": { "command": "dot-only" } } }`],
    ]);
    const connectorFile = path.join(folder, 'github.connector.json');
    const registry = await buildWorkspaceRegistry({
      workspaceFolder: folder,
      connectors: [{ path: connectorFile, model: analyzeConnector(connector('github_tools')).model }],
      readFile: async (file) => files.get(file),
      userServers: { dot_only: { command: 'user-dot-only' }, user_only: { command: 'user-only' } },
      variables: { env: {} },
    });
    assert.deepEqual(registry.names(), ['github_tools', 'shared', 'dot_only', 'user_only']);
    assert.equal(registry.get('github_tools')!.origin.kind, 'connector', 'a connector beats mcp.json of the same name');
    assert.equal(registry.get('github_tools')!.origin.file, connectorFile);
    assert.equal(registry.get('shared')!.origin.kind, 'vscode-mcp-json');
    assert.equal(registry.get('dot_only')!.origin.kind, 'mcp-json');
    assert.equal(registry.get('user_only')!.origin.kind, 'user-setting');
    assert.equal(registry.get('user_only')!.origin.file, undefined);
    assert.deepEqual(
      registry.shadowed.map((shadowed) => `${shadowed.name} ${shadowed.origin.kind}`),
      ['github_tools vscode-mcp-json', 'shared mcp-json', 'dot_only user-setting'],
    );
    assert.equal(registry.definitions.length, 7);
    assert.equal(registry.named().length, 4);
    assert.equal(registry.get('nope'), undefined);
  });

  test('two connector files naming one server: the first by path wins', async () => {
    const registry = await buildWorkspaceRegistry({
      workspaceFolder: WORKSPACE,
      connectors: [
        { path: path.join(WORKSPACE, 'b.connector.json'), model: analyzeConnector(connector('same')).model },
        { path: path.join(WORKSPACE, 'a.connector.json'), model: analyzeConnector(connector('same')).model },
      ],
      readFile: async () => undefined,
      variables: { env: {} },
    });
    assert.equal(registry.get('same')!.origin.file, path.join(WORKSPACE, 'a.connector.json'));
    assert.deepEqual(registry.shadowed.map((shadowed) => shadowed.origin.file), [path.join(WORKSPACE, 'b.connector.json')]);
  });

  test('a blueprint step naming a shadowed server is verified against the winner', () => {
    const winner = definition('shared', { origin: { kind: 'connector', file: CONNECTOR_FILE } });
    const loser = definition('shared', { transport: { kind: 'stdio', command: 'other', args: [], env: {} } });
    const listings = new Map<ServerDefinition, ServerListing>([
      [winner, listed([ECHO_UPPER])],
      [loser, listed([])],
    ]);
    const registry = new ServerRegistry([winner, loser]);
    assert.deepEqual(registry.shadowed, [loser]);
    const result = verifyBlueprint(blueprintModel(blueprintText([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'shared' }])), { registry, now: NOW, listingFor: (defined) => listings.get(defined)! });
    assert.deepEqual(states(result.verdicts), ['echo_upper: verified']);
  });
});

describe('serverKey: equal keys mean one connection', () => {
  const base = definition('a');
  test('names and origins do not matter; transport, auth and cwd do', () => {
    assert.equal(serverKey(base), serverKey(definition('b', { origin: { kind: 'user-setting' } })));
    assert.equal(serverKey(base), serverKey(definition('c', { origin: { kind: 'connector', file: CONNECTOR_FILE, span: { offset: 3, length: 5 } } })));
  });

  test('environment and header key order do not matter', () => {
    const one = definition('a', { transport: { kind: 'stdio', command: 'node', args: [], env: { A: '1', B: '2' } } });
    const two = definition('b', { transport: { kind: 'stdio', command: 'node', args: [], env: { B: '2', A: '1' } } });
    assert.equal(serverKey(one), serverKey(two));
    const h1 = definition('a', { transport: { kind: 'http', url: 'http://127.0.0.1:1/mcp', headers: { X: '1', Y: '2' } } });
    const h2 = definition('b', { transport: { kind: 'http', url: 'http://127.0.0.1:1/mcp', headers: { Y: '2', X: '1' } } });
    assert.equal(serverKey(h1), serverKey(h2));
  });

  const different: Array<[string, Partial<ServerDefinition>]> = [
    ['another command', { transport: { ...STDIO, command: 'deno' } }],
    ['other args', { transport: { ...STDIO, args: ['server.mjs', '--x'] } }],
    ['args in another order', { transport: { ...STDIO, args: ['b', 'a'] } }],
    ['an env value', { transport: { ...STDIO, env: { A: '1' } } }],
    ['another cwd', { cwd: path.join(WORKSPACE, 'other') }],
    ['an auth', { auth: { type: 'bearer', credentialRef: 'TOKEN' } }],
    ['another credentialRef', { auth: { type: 'bearer', credentialRef: 'OTHER' } }],
    ['an http transport', { transport: { kind: 'http', url: 'http://127.0.0.1:1/mcp', headers: {} } }],
    ['unusable', { unusable: 'the input "x" has no value', transport: undefined }],
  ];
  for (const [name, overrides] of different) {
    test(`differs with ${name}`, () => {
      assert.notEqual(serverKey(definition('a', overrides)), serverKey(name === 'another credentialRef' ? definition('a', { auth: { type: 'bearer', credentialRef: 'TOKEN' } }) : base));
    });
  }
});

// ---------------------------------------------------------------------------------------------
// verifyBlueprint
// ---------------------------------------------------------------------------------------------

describe('verifyBlueprint: every state and code', () => {
  const fixture = definition('fixture');
  const other = definition('other', { transport: { kind: 'http', url: 'http://127.0.0.1:1/mcp', headers: {} } });

  function run(steps: readonly StepSpec[], entries: ReadonlyArray<[ServerDefinition, ServerListing]>, now = NOW) {
    const text = blueprintText(steps);
    return { text, ...verifyBlueprint(blueprintModel(text), contextOf(entries, now)) };
  }

  test('verified: the live schema pin equals the pin', () => {
    const { verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'fixture' }], [[fixture, listed([ECHO_UPPER, ADD_NUMBERS])]]);
    assert.deepEqual(problems, []);
    assert.equal(verdicts.length, 1);
    assert.deepEqual({ ...verdicts[0]!, span: undefined }, { kind: 'schema', tool: 'echo_upper', server: 'fixture', pinned: ECHO_SCHEMA_PIN, live: ECHO_SCHEMA_PIN, state: 'verified', reason: undefined, span: undefined });
    assert.equal(schemaPin(ECHO_UPPER.inputSchema), ECHO_SCHEMA_PIN, 'the reference vector');
  });

  test('verified without "server": the one server that serves it', () => {
    const { verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN }], [[fixture, listed([ECHO_UPPER])], [other, listed([ADD_NUMBERS])]]);
    assert.deepEqual(problems, []);
    assert.deepEqual(verdicts.map((verdict) => [verdict.state, verdict.server]), [['verified', 'fixture']]);
  });

  test('drifted (TP400): names tool, server and both hashes; data carries pinned, live and style', () => {
    const { text, verdicts, problems } = run([{ tool: 'echo_upper', pin: WRONG_SCHEMA_PIN, server: 'fixture', id: 'shout' }], [[fixture, listed([ECHO_UPPER])]]);
    assert.deepEqual(states(verdicts), ['echo_upper: drifted']);
    assert.equal(verdicts[0]!.live, ECHO_SCHEMA_PIN);
    assert.deepEqual(codes(problems), ['TP400']);
    const [drift] = problems;
    assert.equal(covers(text, drift!), `"${WRONG_SCHEMA_PIN}"`);
    assert.deepEqual(dataOf(drift, DRIFT_KEYS), {
      kind: 'schema',
      tool: 'echo_upper',
      server: 'fixture',
      pinned: WRONG_SCHEMA_PIN,
      live: ECHO_SCHEMA_PIN,
      style: 'prefixed',
      liveContent: schemaPinContent(ECHO_UPPER.inputSchema),
      change: 'unknown',
    });
    for (const part of ['step "shout"', 'tool "echo_upper"', 'server "fixture"', WRONG_SCHEMA_PIN, ECHO_SCHEMA_PIN]) assert.ok(drift!.message.includes(part), `${part} in: ${drift!.message}`);
    assert.equal(drift!.severity, 'error');
  });

  test('missing (TP401): a complete, clean listing without the tool; the span is the tool name', () => {
    const { text, verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'fixture' }], [[fixture, listed([ADD_NUMBERS])]]);
    assert.deepEqual(states(verdicts), ['echo_upper: missing']);
    assert.deepEqual(codes(problems), ['TP401']);
    assert.equal(covers(text, problems[0]!), '"echo_upper"');
    assert.match(problems[0]!.message, /tool "echo_upper" is not served by server "fixture" \(toolNotFound\)/);
    assert.deepEqual(problems[0]!.data, { kind: 'schema', tool: 'echo_upper', server: 'fixture' });
  });

  test('missing without "server": no configured server serves it, and all of them are named', () => {
    const { verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN }], [[fixture, listed([ADD_NUMBERS])], [other, listed([])]]);
    assert.deepEqual(states(verdicts), ['echo_upper: missing']);
    assert.match(problems[0]!.message, /any configured server \(fixture, other\)/);
  });

  const uncertain: Array<[string, Partial<CollectedListing>, RegExp]> = [
    ['incomplete (page cap)', INCOMPLETE, /the listing is incomplete \(the server kept paginating past 100 pages\)/],
    ['incomplete (repeated cursor)', { incomplete: { code: 'repeated-cursor', message: 'the server repeated a pagination cursor on page 2' } }, /incomplete/],
    ['incomplete (malformed page)', { incomplete: { code: 'malformed-page', message: 'page 2 of tools/list has no "tools"' } }, /incomplete/],
    ['with a malformed entry', MALFORMED, /1 malformed entry \(page 1, entry 3/],
  ];
  for (const [name, extra, reason] of uncertain) {
    test(`NOT missing when the listing is ${name}: cannot verify (TP403)`, () => {
      const { verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'fixture' }], [[fixture, listed([ADD_NUMBERS], extra)]]);
      assert.deepEqual(states(verdicts), ['echo_upper: cannot-verify']);
      assert.deepEqual(codes(problems), ['TP403']);
      assert.match(verdicts[0]!.reason ?? '', reason);
    });
  }

  test('a tool found in an incomplete listing still verifies (what was read is evidence)', () => {
    const { verdicts } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'fixture' }], [[fixture, listed([ECHO_UPPER], INCOMPLETE)]]);
    assert.deepEqual(states(verdicts), ['echo_upper: verified']);
  });

  test('ambiguous (TP402): served by two servers and no "server"; both are named', () => {
    const { text, verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN }], [[fixture, listed([ECHO_UPPER])], [other, listed([ECHO_UPPER])]]);
    assert.deepEqual(states(verdicts), ['echo_upper: ambiguous']);
    assert.deepEqual(codes(problems), ['TP402']);
    assert.match(problems[0]!.message, /served by 2 servers \(fixture, other\)/);
    assert.deepEqual(problems[0]!.data, { tool: 'echo_upper', servers: ['fixture', 'other'] });
    assert.equal(covers(text, problems[0]!), '"echo_upper"');
    assert.equal(problems[0]!.severity, 'warning');
  });

  test('not ambiguous once "server" says which', () => {
    const { verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'other' }], [[fixture, listed([ECHO_UPPER])], [other, listed([ECHO_UPPER])]]);
    assert.deepEqual(problems, []);
    assert.deepEqual(verdicts.map((verdict) => [verdict.state, verdict.server]), [['verified', 'other']]);
  });

  test('unknown server (TP406): names the known ones; cannot verify', () => {
    const { text, verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'nowhere' }], [[fixture, listed([ECHO_UPPER])]]);
    assert.deepEqual(states(verdicts), ['echo_upper: cannot-verify']);
    assert.deepEqual(codes(problems), ['TP406']);
    assert.equal(covers(text, problems[0]!), '"nowhere"');
    assert.match(problems[0]!.message, /no server named "nowhere" is configured \(known: fixture\)/);
  });

  test('cannot verify with the age of the last good listing ("last listed 12 min ago") — never verified from it', () => {
    // The last good listing holds exactly the pinned tool: it is still not evidence of now.
    const { verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'fixture' }], [[fixture, unavailable(12 * MINUTE)]]);
    assert.deepEqual(states(verdicts), ['echo_upper: cannot-verify']);
    assert.equal(verdicts[0]!.live, undefined);
    assert.deepEqual(codes(problems), ['TP403']);
    assert.match(verdicts[0]!.reason ?? '', /HTTP 401: the server rejected the credential; last listed 12 min ago/);
    assert.match(problems[0]!.message, /last listed 12 min ago/);
  });

  test('cannot verify a server never listed: "never listed"', () => {
    const { verdicts } = run([{ tool: 'echo_upper', pin: WRONG_SCHEMA_PIN, server: 'fixture' }], [[fixture, unavailable()]]);
    assert.deepEqual(states(verdicts), ['echo_upper: cannot-verify'], 'an unreachable server is never drift');
    assert.match(verdicts[0]!.reason ?? '', /never listed/);
  });

  test('without "server": one server unavailable and none serving → cannot verify, not missing', () => {
    const { verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN }], [[fixture, listed([ADD_NUMBERS])], [other, unavailable(3 * 60 * MINUTE)]]);
    assert.deepEqual(states(verdicts), ['echo_upper: cannot-verify']);
    assert.match(verdicts[0]!.reason ?? '', /"other": HTTP 401.*last listed 3 h ago/);
    assert.deepEqual(problems[0]!.data, { tool: 'echo_upper', servers: ['fixture', 'other'] });
  });

  test('pending (first listing still running): cannot verify, and no problem is reported yet', () => {
    const { verdicts, problems } = run([{ tool: 'echo_upper', pin: WRONG_SCHEMA_PIN, server: 'fixture' }], [[fixture, { status: 'pending' }]]);
    assert.deepEqual(states(verdicts), ['echo_upper: cannot-verify']);
    assert.match(verdicts[0]!.reason ?? '', /waiting for the server's first listing/);
    assert.deepEqual(problems, []);
  });

  test('no server configured at all → cannot verify, not missing', () => {
    const { verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN }], []);
    assert.deepEqual(states(verdicts), ['echo_upper: cannot-verify']);
    assert.deepEqual(codes(problems), ['TP403']);
  });

  const cannot: Array<[string, unknown[], RegExp]> = [
    ['an unpinnable tool (older shape)', [{ name: 'echo_upper', input_schema: ECHO_UPPER.inputSchema }], /cannot be pinned: it is served in an older shape/],
    ['a tool without an inputSchema', [{ name: 'echo_upper', description: 'd' }], /served without an inputSchema/],
    ['duplicate names with different schemas', [ECHO_UPPER, { ...ECHO_UPPER, inputSchema: { type: 'object' } }], /serves "echo_upper" 2 times with different input schemas/],
  ];
  for (const [name, tools, reason] of cannot) {
    test(`${name} → cannot verify (TP403)`, () => {
      const { verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'fixture' }], [[fixture, listed(tools)]]);
      assert.deepEqual(states(verdicts), ['echo_upper: cannot-verify']);
      assert.deepEqual(codes(problems), ['TP403']);
      assert.match(verdicts[0]!.reason ?? '', reason);
    });
  }

  test('duplicate names with the same schema (descriptions differ) still verify the schema pin', () => {
    const { verdicts } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'fixture' }], [[fixture, listed([ECHO_UPPER, { ...ECHO_UPPER, description: 'other' }])]]);
    assert.deepEqual(states(verdicts), ['echo_upper: verified']);
  });

  test('a description-only rewrite is not schema drift', () => {
    const { verdicts, problems } = run([{ tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'fixture' }], [[fixture, listed([{ ...ECHO_UPPER, description: 'Rewritten.' }])]]);
    assert.deepEqual(states(verdicts), ['echo_upper: verified']);
    assert.deepEqual(problems, []);
  });

  test('each step gets its own verdict; summarize counts them by state', () => {
    const { verdicts } = run(
      [
        { tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'fixture' },
        { tool: 'add_numbers', pin: WRONG_SCHEMA_PIN, server: 'fixture' },
        { tool: 'reverse_text', pin: ECHO_SCHEMA_PIN, server: 'fixture' },
        { tool: 'echo_upper', pin: ECHO_SCHEMA_PIN, server: 'other' },
      ],
      [[fixture, listed([ECHO_UPPER, ADD_NUMBERS])], [other, unavailable()]],
    );
    assert.deepEqual(states(verdicts), ['echo_upper: verified', 'add_numbers: drifted', 'reverse_text: missing', 'echo_upper: cannot-verify']);
    assert.deepEqual(summarize(verdicts), { verified: 1, drifted: 1, missing: 1, ambiguous: 0, 'cannot-verify': 1 });
  });

  test('steps without a well-formed pin are not verified here (their problem is TP204/TP206)', () => {
    const model = analyzeBlueprint(blueprintText([{ tool: 'echo_upper', pin: 'fnv1a64:xyz', server: 'fixture' }])).model;
    assert.deepEqual(verifyBlueprint(model, contextOf([[fixture, listed([ECHO_UPPER])]])).verdicts, []);
  });
});

// ---------------------------------------------------------------------------------------------
// verifyConnector
// ---------------------------------------------------------------------------------------------

describe('verifyConnector: every state and code', () => {
  const SERVED = [ECHO_UPPER, ADD_NUMBERS, REVERSE_TEXT];
  const ALL_PINNED = { echo_upper: ECHO_TOOL_PIN, add_numbers: toolPin(ADD_NUMBERS), reverse_text: toolPin(REVERSE_TEXT) };

  test('verified: prefixed and bare pins', () => {
    const run = verifyConnectorText(connectorText({ snapshot: { ...ALL_PINNED, echo_upper: ECHO_TOOL_HEX } }), listed(SERVED));
    assert.deepEqual(run.result.problems, []);
    assert.deepEqual(states(run.result.verdicts), ['echo_upper: verified', 'add_numbers: verified', 'reverse_text: verified']);
    assert.deepEqual(run.result.verdicts.map((verdict) => [verdict.kind, verdict.server]), [['tool', 'github_tools'], ['tool', 'github_tools'], ['tool', 'github_tools']]);
    assert.equal(toolPin(ECHO_UPPER), ECHO_TOOL_PIN, 'the reference vector');
  });

  test('drifted (TP400): names tool and server; data carries pinned, live and style', () => {
    const run = verifyConnectorText(connectorText({ snapshot: { ...ALL_PINNED, echo_upper: WRONG_TOOL_PIN } }), listed(SERVED));
    assert.deepEqual(states(run.result.verdicts), ['echo_upper: drifted', 'add_numbers: verified', 'reverse_text: verified']);
    assert.deepEqual(codes(run.result.problems), ['TP400']);
    const [drift] = run.result.problems;
    assert.equal(covers(run.text, drift!), `"${WRONG_TOOL_PIN}"`);
    assert.deepEqual(dataOf(drift, DRIFT_KEYS), {
      kind: 'tool',
      tool: 'echo_upper',
      server: 'github_tools',
      pinned: WRONG_TOOL_PIN,
      live: ECHO_TOOL_PIN,
      style: 'prefixed',
      liveContent: toolPinContent(ECHO_UPPER),
      change: 'unknown',
    });
    for (const part of ['connector "github_tools"', 'tool "echo_upper"', 'server "github_tools"', WRONG_TOOL_PIN, ECHO_TOOL_PIN]) assert.ok(drift!.message.includes(part), `${part} in: ${drift!.message}`);
  });

  test('drifted with a bare pin: data.live keeps the bare style, so a re-pin writes what the entry uses', () => {
    const bareWrong = '0'.repeat(64);
    const run = verifyConnectorText(connectorText({ snapshot: { ...ALL_PINNED, echo_upper: bareWrong } }), listed(SERVED));
    assert.deepEqual(codes(run.result.problems), ['TP400']);
    assert.deepEqual(dataOf(run.result.problems[0], ['kind', 'tool', 'server', 'pinned', 'live', 'style']), { kind: 'tool', tool: 'echo_upper', server: 'github_tools', pinned: bareWrong, live: ECHO_TOOL_HEX, style: 'bare' });
    assert.equal(run.result.verdicts[0]!.pinned, bareWrong);
  });

  test('a description-only rewrite is tool drift', () => {
    const run = verifyConnectorText(connectorText({ snapshot: { echo_upper: ECHO_TOOL_PIN } }), listed([{ ...ECHO_UPPER, description: 'Rewritten.' }]));
    assert.deepEqual(states(run.result.verdicts), ['echo_upper: drifted']);
    assert.equal(run.result.verdicts[0]!.live, toolPin({ ...ECHO_UPPER, description: 'Rewritten.' }));
  });

  test('missing (TP401): a pinned tool no longer served; the span is the tool key', () => {
    const run = verifyConnectorText(connectorText({ snapshot: ALL_PINNED }), listed([ECHO_UPPER, ADD_NUMBERS]));
    assert.deepEqual(states(run.result.verdicts), ['echo_upper: verified', 'add_numbers: verified', 'reverse_text: missing']);
    assert.deepEqual(codes(run.result.problems), ['TP401']);
    assert.equal(covers(run.text, run.result.problems[0]!), '"reverse_text"');
    assert.match(run.result.problems[0]!.message, /pinned tool "reverse_text" is no longer served by server "github_tools"/);
    assert.deepEqual(run.result.problems[0]!.data, { kind: 'tool', tool: 'reverse_text', server: 'github_tools' });
  });

  for (const [name, extra] of [
    ['incomplete', INCOMPLETE],
    ['with malformed entries', MALFORMED],
  ] as const) {
    test(`NOT missing when the listing is ${name} (TP403), and no include/selection findings from it`, () => {
      const run = verifyConnectorText(connectorText({ include: ['echo_upper', 'reverse_text', 'not_served'], snapshot: { echo_upper: ECHO_TOOL_PIN, reverse_text: toolPin(REVERSE_TEXT) } }), listed([ECHO_UPPER, ADD_NUMBERS], extra));
      assert.deepEqual(states(run.result.verdicts), ['echo_upper: verified', 'reverse_text: cannot-verify']);
      assert.deepEqual(codes(run.result.problems), ['TP403']);
    });
  }

  test('cannot verify with "last listed 12 min ago"; never verified from the last good listing', () => {
    const run = verifyConnectorText(connectorText({ snapshot: { echo_upper: ECHO_TOOL_PIN } }), unavailable(12 * MINUTE));
    assert.deepEqual(states(run.result.verdicts), ['echo_upper: cannot-verify']);
    assert.equal(run.result.verdicts[0]!.live, undefined);
    assert.match(run.result.verdicts[0]!.reason ?? '', /^cannot verify: HTTP 401: the server rejected the credential; last listed 12 min ago$/);
    assert.deepEqual(codes(run.result.problems), ['TP403']);
    assert.equal(run.result.problems[0]!.severity, 'information');
  });

  test('cannot verify a server never listed: "never listed"; a wrong pin is not drift then', () => {
    const run = verifyConnectorText(connectorText({ snapshot: { echo_upper: WRONG_TOOL_PIN } }), unavailable());
    assert.deepEqual(states(run.result.verdicts), ['echo_upper: cannot-verify']);
    assert.match(run.result.verdicts[0]!.reason ?? '', /never listed/);
  });

  test('pending: cannot verify, no problem, and no include/selection findings', () => {
    const run = verifyConnectorText(connectorText({ include: ['echo_upper', 'not_served'], snapshot: { echo_upper: WRONG_TOOL_PIN } }), { status: 'pending' });
    assert.deepEqual(states(run.result.verdicts), ['echo_upper: cannot-verify']);
    assert.match(run.result.verdicts[0]!.reason ?? '', /waiting for the server's first listing/);
    assert.deepEqual(run.result.problems, []);
  });

  test('include entry not served (TP404) on a complete listing, on the include entry', () => {
    const run = verifyConnectorText(connectorText({ include: ['echo_upper', 'not_served'], snapshot: { echo_upper: ECHO_TOOL_PIN } }), listed(SERVED));
    assert.deepEqual(codes(run.result.problems), ['TP404']);
    assert.equal(covers(run.text, run.result.problems[0]!), '"not_served"');
    assert.match(run.result.problems[0]!.message, /include names "not_served", which server "github_tools" does not serve; the runtime drops it silently/);
  });

  test('no TP404 when the server cannot be listed', () => {
    const run = verifyConnectorText(connectorText({ include: ['echo_upper', 'not_served'], snapshot: { echo_upper: ECHO_TOOL_PIN } }), unavailable(MINUTE));
    assert.deepEqual(codes(run.result.problems), ['TP403']);
  });

  test('selected but unpinned (TP405) with include: on each include entry served without a pin', () => {
    const run = verifyConnectorText(connectorText({ include: ['echo_upper', 'add_numbers'], snapshot: { echo_upper: ECHO_TOOL_PIN } }), listed(SERVED));
    assert.deepEqual(codes(run.result.problems), ['TP405']);
    assert.equal(covers(run.text, run.result.problems[0]!), '"add_numbers"');
    assert.match(run.result.problems[0]!.message, /tool "add_numbers" is selected but has no pin in toolsSnapshot/);
  });

  test('selected but unpinned (TP405) without include: every served tool is selected; on the toolsSnapshot brace', () => {
    const run = verifyConnectorText(connectorText({ snapshot: { echo_upper: ECHO_TOOL_PIN } }), listed(SERVED));
    assert.deepEqual(codes(run.result.problems), ['TP405', 'TP405']);
    assert.deepEqual(run.result.problems.map((found) => found.data?.tool), ['add_numbers', 'reverse_text']);
    for (const found of run.result.problems) assert.equal(covers(run.text, found), '{');
    const brace = run.text.indexOf('{', run.text.indexOf('"toolsSnapshot"'));
    assert.equal(run.result.problems[0]!.span.offset, brace);
  });

  test('no TP405 when everything selected is pinned, or when the instance has no toolsSnapshot', () => {
    assert.deepEqual(verifyConnectorText(connectorText({ snapshot: ALL_PINNED }), listed(SERVED)).result.problems, []);
    assert.deepEqual(verifyConnectorText(connectorText({}), listed(SERVED)).result, { verdicts: [], problems: [] });
  });

  const cannot: Array<[string, unknown[], RegExp]> = [
    ['an unpinnable tool (numeric description)', [{ ...ECHO_UPPER, description: 7 }], /cannot be pinned: its "description" is number/],
    ['duplicate names with different content', [ECHO_UPPER, { ...ECHO_UPPER, description: 'other' }], /serves "echo_upper" 2 times with different content/],
  ];
  for (const [name, tools, reason] of cannot) {
    test(`${name} → cannot verify (TP403)`, () => {
      const run = verifyConnectorText(connectorText({ snapshot: { echo_upper: ECHO_TOOL_PIN } }), listed(tools));
      assert.deepEqual(states(run.result.verdicts), ['echo_upper: cannot-verify']);
      assert.deepEqual(codes(run.result.problems), ['TP403']);
      assert.match(run.result.verdicts[0]!.reason ?? '', reason);
    });
  }

  test('duplicate names with identical content verify', () => {
    const run = verifyConnectorText(connectorText({ snapshot: { echo_upper: ECHO_TOOL_PIN } }), listed([ECHO_UPPER, { ...ECHO_UPPER }]));
    assert.deepEqual(states(run.result.verdicts), ['echo_upper: verified']);
  });

  test('only mcp instances whose definition is given are verified', () => {
    const text = `[${connectorText({ name: 'first', snapshot: { echo_upper: ECHO_TOOL_PIN } })}, ${connectorText({ name: 'second', snapshot: { echo_upper: WRONG_TOOL_PIN } })},
      { "name": "crm", "provider": "openapi", "providerConfig": { "spec": "./crm.yaml" } }]`;
    const model = analyzeConnector(text).model;
    const definitions = connectorServers(CONNECTOR_FILE, model, WORKSPACE);
    assert.deepEqual(definitions.map((defined) => defined.name), ['first', 'second']);
    const context = contextOf(definitions.map((defined) => [defined, listed([ECHO_UPPER])]));
    assert.deepEqual(states(verifyConnector(CONNECTOR_FILE, model, definitions, context).verdicts), ['echo_upper: verified', 'echo_upper: drifted']);
    assert.deepEqual(states(verifyConnector(CONNECTOR_FILE, model, [definitions[1]!], context).verdicts), ['echo_upper: drifted']);
    assert.deepEqual(verifyConnector(path.join(WORKSPACE, 'other.connector.json'), model, definitions, context).verdicts, [], 'definitions of another file do not apply');
  });
});

describe('describeAge', () => {
  const cases: Array<[number, string]> = [
    [0, 'just now'],
    [-5000, 'just now'],
    [4_000, 'just now'],
    [30_000, '30 s ago'],
    [12 * MINUTE, '12 min ago'],
    [119 * MINUTE, '119 min ago'],
    [3 * 60 * MINUTE, '3 h ago'],
    [47 * 60 * MINUTE, '47 h ago'],
    [3 * 24 * 60 * MINUTE, '3 days ago'],
  ];
  for (const [milliseconds, text] of cases) {
    test(`${milliseconds} ms → ${text}`, () => assert.equal(describeAge(milliseconds), text));
  }
});
