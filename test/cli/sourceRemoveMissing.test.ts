/**
 * `toolpin pin --yes --remove-missing` on a TypeScript connector module, end to end with the
 * fixture MCP server: the pin of a tool the server no longer serves is cut out of the
 * `defineConnector` call's `toolsSnapshot`, with its comma, and nothing else in the module
 * changes (comments, quotes and the other exports stay byte for byte).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
/** echo_upper's tool pin as the fixture serves it. */
const ECHO_TOOL = 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';
const GONE_TOOL = `sha256:${'7'.repeat(64)}`;

function connectors(goneEntry: string): string {
  return `// Connectors in code.
import { defineConnector } from '@objectstack/spec/integration';

export const demo = defineConnector({
  name: 'demo',
  provider: 'mcp',
  providerConfig: {
    transport: { kind: 'stdio', command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(fixtureServer)}, '--stdio'] },
    toolsSnapshot: {
      // served as pinned
      echo_upper: '${ECHO_TOOL}',
${goneEntry}    },
  },
});

export const all = [demo];
`;
}

let workspace: string;
before(() => {
  workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-source-remove-'));
  writeFileSync(path.join(workspace, 'connectors.ts'), connectors(`      "retired_tool": "${GONE_TOOL}", // gone from the server\n`));
});
after(() => rmSync(workspace, { recursive: true, force: true }));

// --tool: the connector has no include, so its unpinned tools would get first pins too (test/cli/firstPins.test.ts).
test('pin --yes --remove-missing cuts only the gone pin out of the source; check then exits 0', () => {
  const result = spawnSync(process.execPath, [cli, 'pin', '--yes', '--remove-missing', '--tool', 'retired_tool', '.'], { cwd: workspace, encoding: 'utf8', timeout: 60_000, input: '', env: TRUSTED_ENV });
  assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
  assert.equal(readFileSync(path.join(workspace, 'connectors.ts'), 'utf8'), connectors('      // gone from the server\n'), 'only the entry and its comma went');
  const check = spawnSync(process.execPath, [cli, 'check', '.'], { cwd: workspace, encoding: 'utf8', timeout: 60_000, input: '', env: TRUSTED_ENV });
  assert.equal(check.status, 0, check.stdout);
  assert.match(check.stdout, /1 pin\(s\): 1 verified/);
});
