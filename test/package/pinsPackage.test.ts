/**
 * `toolpin/pins` as its users get it (docs/pins-library.md): the package is packed with `npm pack`
 * and unpacked into an empty project, where it is the only package in node_modules (the library
 * must work with no dependency installed). From there it is loaded by ES module `import` and by
 * CommonJS `require` in a plain `node` process, compiled against by TypeScript through the
 * package's own `exports`, and bundled by esbuild for the browser, whose bundle must reach no
 * `node:` module and then runs in a context with no Node global (no `process`, `require` or
 * `Buffer`; only `TextEncoder`, as a browser or a worker has it).
 *
 * Every one of these computes the pins of every tool that three real MCP servers list
 * (@modelcontextprotocol/server-everything, -memory and -filesystem, started from node_modules
 * over stdio), and they must equal the reference: `canonicalize` (an independent RFC 8785
 * implementation from npm) with `node:crypto`'s SHA-256 for tool pins, and the BigInt FNV-1a of
 * test/support for schema pins.
 *
 * Needs `npm run build` first (dist/pins.*); it fails, never skips, when they are missing.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import * as vm from 'node:vm';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import canonicalize from 'canonicalize';
import * as esbuild from 'esbuild';

import { fnv1a64ReferenceHex } from '../support/fnv1a64Reference';

const root = path.resolve(__dirname, '..', '..', '..');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-pins-package-'));
const project = path.join(scratch, 'consumer');

interface Tool {
  name: string;
  description?: string;
  inputSchema?: unknown;
  [field: string]: unknown;
}

/** The pins a consumer computes for one tool, and the result of the two guards on it. */
interface ConsumerPins {
  name: string;
  schemaPin: string;
  toolPin: string;
  canonical: string;
}

/** Every tool of the three servers, by server. */
const listed = new Map<string, Tool[]>();

const SERVERS: Record<string, string[]> = {
  everything: [path.join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')],
  memory: [path.join(root, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js')],
  filesystem: [path.join(root, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js'), scratch],
};

async function listTools(args: string[]): Promise<Tool[]> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    cwd: scratch,
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '', MEMORY_FILE_PATH: path.join(scratch, 'memory.jsonl') },
  });
  const client = new Client({ name: 'pins-package-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...(page.tools as Tool[]));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  } finally {
    await client.close();
  }
}

/** The reference pins, computed without any Toolpin code. */
function referencePins(tool: Tool): ConsumerPins {
  const covered: Record<string, unknown> = { name: tool.name };
  if (tool.description !== undefined) covered.description = tool.description;
  if (tool.inputSchema !== undefined) covered.inputSchema = tool.inputSchema;
  const canonical = canonicalize(covered)!;
  return {
    name: tool.name,
    schemaPin: `fnv1a64:${fnv1a64ReferenceHex(new TextEncoder().encode(canonicalize(tool.inputSchema)!))}`,
    toolPin: `sha256:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`,
    canonical,
  };
}

/**
 * The consumer's script, the same for every loader: given the library's exports and the tools,
 * computes each tool's pins and runs both guards twice, once against the pins it just computed
 * (which must hold) and once against a list where the first tool changed and the last is gone.
 */
const CONSUMER_BODY = `
function run(pins, servers) {
  const out = {};
  for (const [server, tools] of Object.entries(servers)) {
    const each = tools.map((tool) => ({
      name: tool.name,
      schemaPin: pins.schemaPin(tool.inputSchema),
      toolPin: pins.toolPin(tool),
      canonical: pins.canonicalJson(Object.fromEntries(Object.entries({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }).filter(([, value]) => value !== undefined))),
    }));
    const snapshot = Object.fromEntries(each.map((pin) => [pin.name, pin.toolPin]));
    const holding = {
      schema: each.map((pin) => pins.verifySchemaPin({ toolName: pin.name, expectedSchemaHash: pin.schemaPin }, tools) ?? null),
      snapshot: pins.verifyToolsSnapshot(snapshot, tools),
    };
    const first = tools[0];
    const upgraded = [{ ...first, inputSchema: { ...first.inputSchema, title: 'changed' } }, ...tools.slice(1, -1)];
    const drifting = {
      schema: [pins.verifySchemaPin({ toolName: first.name, expectedSchemaHash: each[0].schemaPin }, upgraded), pins.verifySchemaPin({ toolName: tools[tools.length - 1].name, expectedSchemaHash: each[each.length - 1].schemaPin }, upgraded)],
      snapshot: pins.verifyToolsSnapshot(snapshot, upgraded),
    };
    out[server] = { each, holding, drifting };
  }
  return out;
}
`;

type ConsumerResult = Record<string, { each: ConsumerPins[]; holding: { schema: unknown[]; snapshot: unknown }; drifting: { schema: unknown[]; snapshot: unknown } }>;

function runNode(args: string[]): ConsumerResult {
  const run = spawnSync(process.execPath, args, { cwd: project, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' }, timeout: 60_000 });
  assert.equal(run.status, 0, `node ${args.join(' ')} failed:\n${run.stderr}`);
  return JSON.parse(run.stdout) as ConsumerResult;
}

/** What every consumer must have found: the reference pins, guards that hold, and both kinds of drift. */
function assertMatchesReference(result: ConsumerResult, how: string): void {
  assert.deepEqual(Object.keys(result).sort(), Object.keys(SERVERS).sort(), how);
  for (const [server, tools] of listed) {
    const { each, holding, drifting } = result[server]!;
    assert.deepEqual(each, tools.map(referencePins), `${how}: the pins of ${server}'s ${tools.length} tools`);
    assert.ok(holding.schema.every((outcome) => outcome === null), `${how}: ${server}'s own schema pins hold`);
    assert.deepEqual(holding.snapshot, { changed: [], gone: [] }, `${how}: ${server}'s own snapshot holds`);
    const first = tools[0]!;
    const last = tools[tools.length - 1]!;
    const changedSchema = { ...(first.inputSchema as object), title: 'changed' };
    const changedPin = referencePins({ ...first, inputSchema: changedSchema });
    assert.deepEqual(drifting.schema, [
      { channel: 'schemaDrift', toolName: first.name, expectedSchemaHash: referencePins(first).schemaPin, observedHash: changedPin.schemaPin },
      { channel: 'toolNotFound', toolName: last.name },
    ], `${how}: ${server}'s drift channels`);
    assert.deepEqual(drifting.snapshot, {
      changed: [{ toolName: first.name, expectedPin: referencePins(first).toolPin, livePin: changedPin.toolPin }],
      gone: [last.name],
    }, `${how}: ${server}'s changed and gone tools`);
  }
}

before(async () => {
  for (const file of ['pins.mjs', 'pins.cjs', 'pins.d.ts']) {
    assert.ok(fs.existsSync(path.join(root, 'dist', file)), `dist/${file} is missing: run "npm run build" first`);
  }
  for (const [server, args] of Object.entries(SERVERS)) {
    const tools = await listTools(args);
    assert.ok(tools.length >= 2, `${server} listed ${tools.length} tools`);
    listed.set(server, tools);
  }
  // npm pack, then unpack the tarball where npm would install it, alone.
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as Array<{ filename: string }>;
  const tarball = path.join(scratch, packed[0]!.filename);
  const installed = path.join(project, 'node_modules', 'toolpin');
  fs.mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, version: '1.0.0' }));
  fs.writeFileSync(path.join(project, 'tools.json'), JSON.stringify(Object.fromEntries(listed)));
  assert.deepEqual(fs.readdirSync(path.join(project, 'node_modules')), ['toolpin'], 'the consumer has no other package');
});

after(() => {
  fs.rmSync(scratch, { recursive: true, force: true });
});

test('the packed library is imported as an ES module, with no dependency installed, and pins every tool as the reference does', () => {
  const script = `import * as pins from 'toolpin/pins';\nimport { readFileSync } from 'node:fs';\n${CONSUMER_BODY}\nprocess.stdout.write(JSON.stringify(run(pins, JSON.parse(readFileSync('tools.json', 'utf8')))));\n`;
  fs.writeFileSync(path.join(project, 'consumer.mjs'), script);
  assertMatchesReference(runNode(['consumer.mjs']), 'ESM import');
});

test('the packed library is required as CommonJS, and pins every tool as the reference does', () => {
  const script = `const pins = require('toolpin/pins');\n${CONSUMER_BODY}\nprocess.stdout.write(JSON.stringify(run(pins, require('./tools.json'))));\n`;
  fs.writeFileSync(path.join(project, 'consumer.cjs'), script);
  assertMatchesReference(runNode(['consumer.cjs']), 'CommonJS require');
});

test('the library bundled by esbuild for the browser reaches no node: module and runs with no Node global', async () => {
  const build = await esbuild.build({
    stdin: { contents: `import * as pins from 'toolpin/pins';\n${CONSUMER_BODY}\nglobalThis.result = JSON.stringify(run(pins, JSON.parse(globalThis.servers)));\n`, resolveDir: project, loader: 'js' },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const inputs = Object.keys(build.metafile.inputs);
  assert.ok(inputs.some((input) => input.endsWith('node_modules/toolpin/dist/pins.mjs')), `the browser build used the package's ES module: ${inputs.join(', ')}`);
  const imports = Object.values(build.metafile.inputs).flatMap((input) => input.imports.map((entry) => entry.path));
  assert.deepEqual(imports.filter((specifier) => specifier.startsWith('node:') || !specifier.includes('toolpin')), [], 'the bundle imports nothing beyond the library');
  const code = build.outputFiles[0]!.text;
  assert.doesNotMatch(code, /\brequire\(|node:/, 'no require and no node: specifier in the browser bundle');
  // A fresh context has the language's globals (WebAssembly among them) but none of Node's. The
  // tools go in as text, parsed inside, as a page parses a response: objects made in this realm
  // have another Object.prototype there, and canonicalJson accepts only plain objects.
  const sandbox: Record<string, unknown> = { TextEncoder, servers: JSON.stringify(Object.fromEntries(listed)) };
  vm.runInNewContext(code, sandbox, { timeout: 30_000 });
  assert.equal(vm.runInNewContext('typeof process + typeof require + typeof Buffer', sandbox), 'undefinedundefinedundefined');
  assertMatchesReference(JSON.parse(sandbox.result as string) as ConsumerResult, 'browser bundle');
});

test('TypeScript compiles a consumer against the packed declarations, and rejects a misuse', () => {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const options = ['--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022', '--lib', 'es2022'];
  fs.writeFileSync(path.join(project, 'guard.mts'), [
    "import { schemaPin, toolPin, canonicalJson, verifySchemaPin, verifyToolsSnapshot, CanonicalJsonError, type ListedTool } from 'toolpin/pins';",
    "const tools: ListedTool[] = [{ name: 'echo', description: 'Echo', inputSchema: { type: 'object' } }];",
    "const drift = verifySchemaPin({ toolName: 'echo', expectedSchemaHash: schemaPin({ type: 'object' }) }, tools);",
    "if (drift?.channel === 'schemaDrift') { const observed: string | null = drift.observedHash; void observed; }",
    "const { changed, gone } = verifyToolsSnapshot({ echo: toolPin(tools[0]!) }, tools);",
    "const first: string | undefined = changed[0]?.livePin ?? gone[0];",
    "const kind: string = new CanonicalJsonError('cycle', '', 'x').kind;",
    'void first; void kind; void canonicalJson(1);',
  ].join('\n'));
  const good = spawnSync(process.execPath, [tsc, ...options, 'guard.mts'], { cwd: project, encoding: 'utf8' });
  assert.equal(good.status, 0, `the consumer does not compile:\n${good.stdout}${good.stderr}`);
  fs.writeFileSync(path.join(project, 'misuse.mts'), "import { verifySchemaPin } from 'toolpin/pins';\nverifySchemaPin({ toolName: 'echo' }, []);\n");
  const bad = spawnSync(process.execPath, [tsc, ...options, 'misuse.mts'], { cwd: project, encoding: 'utf8' });
  assert.notEqual(bad.status, 0, 'a call without expectedSchemaHash must not compile');
  assert.match(bad.stdout, /expectedSchemaHash/);
});

test('the package ships the library and its declarations, and nothing of the repository beyond what it runs', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', 'toolpin', 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  assert.deepEqual(manifest.exports['./pins'], { types: './dist/pins.d.ts', import: './dist/pins.mjs', require: './dist/pins.cjs' });
  const shipped = fs.readdirSync(path.join(project, 'node_modules', 'toolpin'));
  for (const folder of ['server', 'client', 'test', 'bench', 'node_modules', 'examples']) assert.ok(!shipped.includes(folder), `${folder}/ is not in the package`);
  for (const file of ['pins.mjs', 'pins.cjs', 'pins.d.ts', 'cli.js']) assert.ok(fs.existsSync(path.join(project, 'node_modules', 'toolpin', 'dist', file)), `dist/${file} ships`);
});
