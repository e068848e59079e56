/**
 * `toolpin hash --profile`: a listing's hashes under mcp-pin's definition (Tool definition hash v1)
 * beside Toolpin's own pins, from the built dist/cli.js. The expected values are mcp-pin's published
 * vectors (test/fixtures/peers/mcp-pin) and the contract's reference pins, not computed here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { ECHO_SCHEMA_PIN, ECHO_TOOL_PIN, ECHO_UPPER } from '../support/referenceVectors';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const vectors = JSON.parse(readFileSync(path.join(root, 'test', 'fixtures', 'peers', 'mcp-pin', 'tool-definition-hash-vectors.json'), 'utf8')) as {
  sets: Array<{ pages: string[]; lines: string[]; setHash: string }>;
  instructions: Array<{ instructions: string | null; hash: string | null }>;
};

function run(args: string[], input: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, 'hash', ...args, '-'], { input, encoding: 'utf8', cwd: root, timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const twoTools = vectors.sets[0]!;
const instructions = vectors.instructions[0]!;
/** An initialize-like result: the listing of set vector 1 and the instructions of instructions vector 1. */
const listing = `{"instructions":${JSON.stringify(instructions.instructions)},"tools":${twoTools.pages[0]}}`;

describe('toolpin hash --profile', () => {
  test('mcp-pin: each whole definition, the set hash and the instructions hash, as mcp-pin publishes them (json)', () => {
    const result = run(['--profile', 'mcp-pin', '--format', 'json'], listing);
    assert.equal(result.status, 0, result.stderr);
    const printed = JSON.parse(result.stdout) as { tools: Array<{ name: string; definitionHash: string }>; setHash: string; instructionsHash: string };
    assert.deepEqual(printed.tools.map((tool) => `${tool.name}:${tool.definitionHash}`).sort(), twoTools.lines);
    assert.equal(printed.setHash, twoTools.setHash);
    assert.equal(printed.instructionsHash, instructions.hash);
  });

  test('all: our pins and mcp-pin\'s side by side, as text', () => {
    const result = run(['--profile', 'all'], JSON.stringify({ tools: [ECHO_UPPER] }));
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`^echo_upper\\s+${ECHO_SCHEMA_PIN}\\s+${ECHO_TOOL_PIN}$`, 'm'));
    assert.match(result.stdout, /^echo_upper\s+mcp-pin definition [0-9a-f]{64}$/m);
    assert.match(result.stdout, /^\(set\)\s+mcp-pin set\s+[0-9a-f]{64}$/m);
  });

  test('warden: the entries mcp-warden wrote in its memory example lock, from the recorded listing of that version (json and text)', () => {
    const lock = JSON.parse(readFileSync(path.join(root, 'test', 'fixtures', 'peers', 'warden', 'server-memory.warden.lock'), 'utf8')) as { tools: Array<{ name: string; entry_digest: string; input_schema_hash: string }> };
    const listingText = readFileSync(path.join(root, 'test', 'fixtures', 'tool-lists', 'versions', 'memory@2026.1.26.json'), 'utf8');
    const json = run(['--profile', 'warden', '--format', 'json'], listingText);
    assert.equal(json.status, 0, json.stderr);
    const printed = JSON.parse(json.stdout) as { tools: unknown[] };
    assert.deepEqual([...printed.tools].sort((a, b) => ((a as { name: string }).name < (b as { name: string }).name ? -1 : 1)), lock.tools);
    const text = run(['--profile', 'warden'], listingText);
    assert.equal(text.status, 0, text.stderr);
    const searchNodes = lock.tools.find((tool) => tool.name === 'search_nodes')!;
    assert.match(text.stdout, new RegExp(`^search_nodes\\s+warden description_hash\\s+sha256:[0-9a-f]{64}$`, 'm'));
    assert.match(text.stdout, new RegExp(`warden input_schema_hash ${searchNodes.input_schema_hash}$`, 'm'));
    assert.match(text.stdout, /warden capabilities\s+sql-query$/m);
    assert.match(text.stdout, new RegExp(`warden entry_digest\\s+${searchNodes.entry_digest}$`, 'm'));
    const all = run(['--profile', 'all', '--format', 'json'], listingText);
    assert.equal((JSON.parse(all.stdout) as { warden: { tools: unknown[] } }).warden.tools.length, lock.tools.length);
  });

  test('a listing with a repeated member name is refused before hashing; an unknown profile is a usage error', () => {
    const repeated = run(['--profile', 'mcp-pin'], '{"name":"x","description":"a","description":"b"}');
    assert.equal(repeated.status, 2);
    assert.match(repeated.stderr, /TP101/);
    const unknown = run(['--profile', 'nope'], JSON.stringify(ECHO_UPPER));
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown profile "nope"; use toolpin, mcp-pin, warden, all/);
  });

  test('a definition without a string name leaves the listing without a set hash (exit 1)', () => {
    const result = run(['--profile', 'mcp-pin', '--format', 'json'], '[{"name":7}]');
    assert.equal(result.status, 1);
    assert.equal((JSON.parse(result.stdout) as { setHash: unknown }).setHash, null);
  });
});
