/**
 * mcp-warden's field hashes and digests (server/src/core/pins/warden.ts) against mcp-warden's own
 * example locks (test/fixtures/peers/warden, attributed in its README): every stored digest
 * recomputes from the lock's own entries, and the tools of the recorded listings of the servers
 * they pin hash to the very entries mcp-warden wrote (field hashes, capabilities, skeleton, digest).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import {
  compareCodePoints,
  wardenCapabilities,
  wardenCommandDigest,
  wardenHash,
  wardenOverallDigest,
  wardenPromptEntry,
  wardenSchemaSkeleton,
  wardenStoredEntryDigest,
  wardenTokenize,
  wardenToolEntry,
  type WardenToolInput,
} from '../../server/src/core/pins/warden';

const root = path.resolve(__dirname, '..', '..', '..');
interface Entry extends Readonly<Record<string, unknown>> {
  readonly name?: string;
  readonly uri?: string;
  readonly entry_digest: string;
  readonly input_schema_hash?: string;
}
interface Lock {
  readonly schema_version: number;
  readonly server: { command: string; args: string[]; command_digest: string };
  readonly tools: Entry[];
  readonly resources: Entry[];
  readonly prompts: Entry[];
  readonly overall_digest: string;
}
const readJson = (...parts: string[]): unknown => JSON.parse(readFileSync(path.join(root, 'test', 'fixtures', ...parts), 'utf8'));
const lockOf = (server: string): Lock => readJson('peers', 'warden', `server-${server}.warden.lock`) as Lock;
const toolsOf = (listing: string): WardenToolInput[] => (readJson('tool-lists', 'versions', `${listing}.json`) as { tools: WardenToolInput[] }).tools;

for (const server of ['everything', 'memory', 'sequential-thinking']) {
  test(`every digest of mcp-warden's ${server} example lock recomputes from its own entries`, () => {
    const lock = lockOf(server);
    const entries = [...lock.tools, ...lock.resources, ...lock.prompts];
    assert.ok(entries.length > 0);
    for (const entry of entries) assert.equal(wardenStoredEntryDigest(entry), entry.entry_digest, entry.name ?? entry.uri);
    assert.equal(wardenCommandDigest(lock.server), lock.server.command_digest);
    const digests = (list: readonly Entry[]): string[] => list.map((entry) => entry.entry_digest);
    assert.equal(
      wardenOverallDigest({ schemaVersion: lock.schema_version, commandDigest: lock.server.command_digest, tools: digests(lock.tools), resources: digests(lock.resources), prompts: digests(lock.prompts) }),
      lock.overall_digest,
    );
  });
}

for (const [listing, server, count] of [['memory@2026.1.26', 'memory', 9], ['everything@2026.1.14', 'everything', 12]] as const) {
  test(`the tools of ${listing} hash to the entries mcp-warden wrote for them`, () => {
    const lock = lockOf(server);
    const tools = toolsOf(listing);
    let matched = 0;
    for (const tool of tools) {
      const stored = lock.tools.find((entry) => entry.name === tool.name);
      if (!stored) continue;
      assert.deepEqual(wardenToolEntry(tool), stored, tool.name);
      matched++;
    }
    assert.equal(matched, count);
  });
}

test('a real upgrade (everything 2026.1.14 → 2026.7.4) changes the input schema hash of the tools it changed, and only those', () => {
  const lock = lockOf('everything');
  const tools = toolsOf('everything@2026.7.4');
  const changed = tools.filter((tool) => {
    const stored = lock.tools.find((entry) => entry.name === tool.name);
    return stored && wardenToolEntry(tool).input_schema_hash !== stored.input_schema_hash;
  });
  assert.ok(changed.length > 0 && changed.length < tools.length);
  for (const tool of tools.filter((tool) => !changed.includes(tool))) {
    const stored = lock.tools.find((entry) => entry.name === tool.name);
    if (stored) assert.equal(wardenToolEntry(tool).entry_digest, stored.entry_digest);
  }
});

test('prompt arguments hash as the reference dumps them (name, description, required always present)', () => {
  const lock = lockOf('everything');
  const prompt = {
    name: 'completable-prompt',
    description: 'First argument choice narrows values for second argument.',
    arguments: [
      { name: 'department', description: 'Choose the department.', required: true },
      { name: 'name', description: 'Choose a team member to lead the selected department.', required: true },
    ],
  };
  assert.deepEqual(wardenPromptEntry(prompt), lock.prompts.find((entry) => entry.name === 'completable-prompt'));
  assert.equal(wardenPromptEntry({ name: 'p' }).arguments_hash, wardenHash([]));
});

test('absent and null descriptions and schemas hash as "" and {}', () => {
  const entry = wardenToolEntry({ name: 'x' });
  assert.equal(entry.description_hash, wardenHash(''));
  assert.equal(entry.input_schema_hash, wardenHash({}));
  assert.equal(wardenToolEntry({ name: 'x', description: null, inputSchema: null }).entry_digest, entry.entry_digest);
});

test('the tokenizer splits as the reference does, and capabilities follow its table', () => {
  assert.deepEqual(wardenTokenize('runShellCommand'), ['run', 'shell', 'command']);
  assert.deepEqual(wardenTokenize('HTTPServer_fetch-url.v2'), ['http', 'server', 'fetch', 'url', 'v2']);
  assert.deepEqual(wardenCapabilities('shelter', { properties: {} }), []);
  assert.deepEqual(wardenCapabilities('write_file', { properties: { path: {}, content: {} } }), ['fs-write']);
  assert.deepEqual(wardenCapabilities('read_file', { properties: { path: {} } }), ['fs-read']);
  assert.deepEqual(wardenCapabilities('search_nodes', { properties: { query: {} } }), ['sql-query']);
  assert.deepEqual(wardenCapabilities('runCmd', { properties: { url: {} } }), ['http-request', 'shell-exec']);
});

test('the skeleton resolves in-document $ref, marks cycles and opaque refs, and sorts enums as the reference', () => {
  const skeleton = wardenSchemaSkeleton({
    type: 'object',
    $defs: { name: { type: 'string', maxLength: 8 }, loop: { $ref: '#/$defs/loop' } },
    properties: { a: { $ref: '#/$defs/name' }, b: { $ref: '#/$defs/loop' }, c: { $ref: 'https://example.invalid/x' }, d: { enum: ['b', 10, 9, 'a', null, true] } },
    required: ['a'],
  });
  assert.deepEqual(skeleton.props.a, { type: ['string'], required: true, enum: null, constraints: { additionalProperties: true, maxLength: 8 } });
  assert.deepEqual(skeleton.props.b, { type: null, required: false, enum: null, constraints: { _truncated: true } });
  assert.deepEqual(skeleton.props.c, { type: null, required: false, enum: null, constraints: { $ref: 'https://example.invalid/x' } });
  assert.deepEqual(skeleton.props.d?.enum, [null, true, 10, 9, 'a', 'b']);
  assert.deepEqual(Object.keys(skeleton.props), ['$root', 'a', 'b', 'c', 'd']);
});

test('code point order puts characters above U+FFFF after U+FFFF, unlike UTF-16 order', () => {
  assert.ok(compareCodePoints('\u{1F600}', '\uFFFF') > 0);
  assert.ok('\u{1F600}' < '\uFFFF');
});
