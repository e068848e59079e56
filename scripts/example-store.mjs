#!/usr/bin/env node
// Writes examples/.toolpin/store: the exact content each pin of the example workspace was taken
// from, so hover, Compare, Review and `toolpin pin` can say what changed (docs/formats.md §6).
//
//   npm run build && node scripts/example-store.mjs
//
// The pins of the example were taken from the servers as they were then. server-everything and
// server-memory still serve that (their pins verify); the rug-pull server has moved on, and
// serves what it was when pinned with --as-pinned (examples/servers/rugpull-server.mjs). This
// lists each server through Toolpin's own MCP adapter (out/, what `toolpin check` hashes), computes
// both canonical contents of every tool with Toolpin's core, and writes the entry of every pin
// found in the example's blueprints and connectors, and nothing else. A pin that no listed tool
// hashes to fails the run. Entries are content-addressed, so running it again changes nothing.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const examples = join(root, 'examples');
const require = createRequire(import.meta.url);
const load = (module) => require(join(root, 'out', 'server', 'src', ...module.split('/')));
const { analyzeDocument, documentKindOf } = load('core/documents.js');
const { schemaPinContent, toolPinContent } = load('core/pins.js');
const { fnv1a64Hex } = load('core/fnv1a64.js');
const { sha256Hex } = load('core/sha256.js');
const { storePathOf } = load('core/fixes.js');
const { pinsOf } = load('engine/pinStore.js');
const { Redactor } = load('mcp/credentials.js');
const { McpSession } = load('mcp/session.js');

/** The example's stdio servers, started as the example starts them (from the example folder). */
const SERVERS = [
  { name: 'everything', args: ['servers/bundled/everything.mjs', 'stdio'], env: {} },
  { name: 'memory', args: ['servers/bundled/memory.mjs'], env: { MEMORY_FILE_PATH: 'memory.jsonl' } },
  { name: 'notes_tools', args: ['servers/bundled/rugpull-server.mjs', '--as-pinned'], env: {} },
];

async function listTools(server) {
  const definition = {
    name: server.name,
    origin: { kind: 'user-setting' },
    transport: { kind: 'stdio', command: process.execPath, args: server.args, env: server.env },
    auth: undefined,
    unusable: undefined,
    cwd: examples,
  };
  const options = { credentials: { resolve: async () => undefined }, redactor: new Redactor(), requestTimeoutMs: 30_000, maxPages: 100, clientVersion: 'example-store', log: () => undefined };
  const session = await McpSession.open(definition, options);
  try {
    const listing = await session.listTools(definition);
    if (listing.incomplete) throw new Error(`the listing of ${server.name} is incomplete: ${JSON.stringify(listing.incomplete)}`);
    return listing.tools;
  } finally {
    await session.close();
  }
}

/** The file names of every blueprint and connector under a folder. */
function pinnedFiles(folder) {
  const found = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const file = join(folder, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== '.toolpin') found.push(...pinnedFiles(file));
    } else if (documentKindOf(file)) {
      found.push(file);
    }
  }
  return found;
}

/**
 * Tools of servers that cannot be listed here: the CRM server of the example is down by design
 * (its pin is "cannot verify"), so the tool its step was pinned at is written down here.
 */
const UNREACHABLE_AS_PINNED = [
  {
    name: 'upsert_contact',
    description: 'Create or update a contact in the CRM.',
    inputSchema: {
      type: 'object',
      properties: { apiKey: { type: 'string', description: 'CRM API key' }, email: { type: 'string' }, name: { type: 'string' } },
      required: ['apiKey', 'email'],
    },
  },
];

// Every content a listed tool can be pinned at, by store path.
const contents = new Map();
const listed = [...UNREACHABLE_AS_PINNED];
for (const server of SERVERS) listed.push(...(await listTools(server)));
for (const tool of listed) {
  if (tool.unpinnable) continue;
  const schema = schemaPinContent(tool.inputSchema);
  const whole = toolPinContent(tool);
  contents.set(storePathOf('fnv1a64', fnv1a64Hex(schema)), schema);
  contents.set(storePathOf('sha256', sha256Hex(whole)), whole);
}

const entries = new Map();
const unmatched = [];
for (const file of pinnedFiles(examples)) {
  const analysis = analyzeDocument(documentKindOf(file), readFileSync(file, 'utf8'));
  for (const pin of pinsOf(analysis)) {
    const relative = storePathOf(pin.algorithm, pin.hex);
    const content = contents.get(relative);
    if (content === undefined) unmatched.push(`${file.slice(root.length + 1)}: ${pin.algorithm}:${pin.hex}`);
    else entries.set(relative, content);
  }
}
if (unmatched.length > 0) {
  console.error(`example-store: no listed tool hashes to these pins:\n  ${unmatched.join('\n  ')}`);
  process.exit(1);
}

const store = join(examples, '.toolpin', 'store');
rmSync(store, { recursive: true, force: true });
mkdirSync(store, { recursive: true });
for (const [relative, content] of [...entries].sort(([a], [b]) => a.localeCompare(b))) {
  writeFileSync(join(examples, relative), content);
  console.log(relative);
}
console.log(`example-store: ${entries.size} entries written under examples/.toolpin/store`);
