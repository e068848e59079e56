/**
 * mcp-warden's own example lock for `@modelcontextprotocol/server-memory` (pinned at 2026.1.26)
 * verified against the real server installed here (a later release), its whole surface fetched by
 * mcp/surface.ts: the nine tools it locks are unchanged and verify, and the resource the later
 * release added (memory://knowledge-graph) is drift (TP125), as mcp-warden itself would report it.
 * The trust decision is asked before anything starts: refused, nothing runs.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';

import { parseWardenLock, verifyWardenLock } from '../../server/src/core/documents/lockfiles/wardenLock';
import type { ServerDefinition } from '../../server/src/core/verify/registry';
import { environmentCredentials, Redactor } from '../../server/src/mcp/credentials';
import { fetchSurface } from '../../server/src/mcp/surface';

const root = path.resolve(__dirname, '..', '..', '..');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-lock-surface-'));
const memory: ServerDefinition = {
  name: 'memory',
  origin: { kind: 'warden-lock' },
  transport: {
    kind: 'stdio',
    command: process.execPath,
    args: [path.join(root, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js')],
    env: { MEMORY_FILE_PATH: path.join(scratch, 'memory.jsonl') },
  },
  auth: undefined,
  unusable: undefined,
  cwd: scratch,
};
const options = (trusted: boolean) => ({
  credentials: environmentCredentials({}),
  redactor: new Redactor(),
  clientVersion: 'test',
  trust: () => (trusted ? ({ trusted: true } as const) : ({ trusted: false, reason: 'the folder is not trusted' } as const)),
  startTimeoutMs: 60_000,
  requestTimeoutMs: 30_000,
});

describe('a real warden example lock against the real server', () => {
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  test('the locked tools verify; the resource a later release added is drift', async () => {
    const result = await fetchSurface(memory, options(true));
    assert.ok('surface' in result, 'unavailable' in result ? result.unavailable : '');
    assert.deepEqual(result.surface.prompts, []);
    const model = parseWardenLock(fs.readFileSync(path.join(root, 'test', 'fixtures', 'peers', 'warden', 'server-memory.warden.lock'), 'utf8')).model!;
    const verification = verifyWardenLock(model, result.surface);
    const tools = verification.verdicts.filter((verdict) => verdict.kind === 'tool');
    assert.deepEqual(tools.map((verdict) => verdict.state), Array(9).fill('verified'));
    assert.deepEqual(
      verification.problems.map((found) => [found.code, found.message.split(' ')[0]]),
      (result.surface.resources ?? []).map((resource) => ['TP125', `resources/${(resource as { uri: string }).uri}`]),
    );
    assert.ok((result.surface.resources ?? []).length > 0, 'the installed release serves a resource the 2026.1.26 lock does not record');
  });

  test('an untrusted launch is never started', async () => {
    const result = await fetchSurface({ ...memory, transport: { kind: 'stdio', command: path.join(scratch, 'does-not-exist'), args: [], env: {} } }, options(false));
    assert.deepEqual(result, { reason: 'untrusted-workspace', unavailable: 'the folder is not trusted' });
  });
});
