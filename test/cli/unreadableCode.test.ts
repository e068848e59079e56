/**
 * Issue 25, "false passes from unreadable code", held end to end with the built CLI and the
 * fixture MCP server (which has rewritten reverse_text since it was pinned): a TypeScript module
 * whose connector has one drifted pin gets, elsewhere in the same file, a part Babel cannot read:
 * - a 400-deep array literal, and 100,000 nested parentheses (Babel's recursion threw RangeError
 *   for the whole file, read as "no program": 0 pins, exit 0);
 * - 17 unrecoverable statements (every pin of the file was dropped, exit 0).
 * In each case the drifted pin is reported as drift (exit 1), the verified one as verified, and a
 * run is never 0; when the unreadable part itself holds a pin literal, that pin is TP112
 * ("cannot verify") and the exit is still not 0.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const ECHO_TOOL = 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';
const REVERSE_TOOL_OLD = 'sha256:46647729c91fad347eb8e8bf645191936eb21fd63b262e367b12bfad14b0fd5f';

function connector(hostile: string): string {
  return `import { defineConnector } from '@objectstack/spec/integration';

export const demo = defineConnector({
  name: 'demo',
  provider: 'mcp',
  providerConfig: {
    transport: { kind: 'stdio', command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(fixtureServer)}, '--stdio', '--control-file', 'control.json'] },
    include: ['echo_upper', 'reverse_text'],
    toolsSnapshot: { echo_upper: '${ECHO_TOOL}', reverse_text: '${REVERSE_TOOL_OLD}' },
  },
});

${hostile}
`;
}

interface Report {
  files: Array<{ pins: Array<{ tool: string; state: string }>; problems: Array<{ code: string; message: string }> }>;
}

const HOSTILE: ReadonlyArray<readonly [string, string]> = [
  ['a 400-deep array literal', `export const deep = ${'['.repeat(400)}${']'.repeat(400)};`],
  ['100,000 nested parentheses', `export const parens = ${'('.repeat(100_000)}1${')'.repeat(100_000)};`],
  ['17 unrecoverable statements', Array.from({ length: 17 }, (_, index) => `export const broken${index} = ) ] } ;`).join('\n')],
];

describe('a module Babel cannot read whole is never a pass', () => {
  let workspace: string;
  before(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-unreadable-code-'));
    writeFileSync(
      path.join(workspace, 'control.json'),
      JSON.stringify({ version: 1, rewrite: { reverse_text: { inputSchema: { type: 'object', properties: { text: { type: 'string' }, locale: { type: 'string' } }, required: ['text', 'locale'] } } } }),
    );
    mkdirSync(path.join(workspace, 'src'));
  });
  after(() => rmSync(workspace, { recursive: true, force: true }));

  const check = (hostile: string): { status: number | null; report: Report; stderr: string } => {
    writeFileSync(path.join(workspace, 'src', 'connectors.ts'), connector(hostile));
    const result = spawnSync(process.execPath, [cli, 'check', '--format', 'json', 'src'], { cwd: workspace, encoding: 'utf8', timeout: 60_000, input: '', env: { ...process.env, TOOLPIN_TRUST: '1' } });
    assert.equal(result.error, undefined, String(result.error));
    return { status: result.status, report: parseCheckReport(result.stdout) as Report, stderr: result.stderr };
  };

  for (const [name, hostile] of HOSTILE) {
    test(`${name} elsewhere in the file: the drifted pin is drift (exit 1), the other verified`, { timeout: 60_000 }, () => {
      const { status, report, stderr } = check(hostile);
      const pins = report.files.flatMap((file) => file.pins.map((pin) => [pin.tool, pin.state]));
      assert.deepEqual(pins, [['echo_upper', 'verified'], ['reverse_text', 'drifted']], stderr);
      assert.equal(status, 1, stderr);
    });

    test(`${name} holding a pin literal: that pin cannot be verified (TP112), the drift is still found, exit not 0`, { timeout: 60_000 }, () => {
      const { status, report, stderr } = check(`${hostile}\nexport const hidden = ${'['.repeat(3)}'${REVERSE_TOOL_OLD}' ${'}'.repeat(3)};`);
      const codes = report.files.flatMap((file) => file.problems.map((found) => found.code));
      assert.ok(codes.includes('TP112'), `TP112 in ${codes.join(', ')}`);
      assert.ok(report.files.flatMap((file) => file.pins).some((pin) => pin.tool === 'reverse_text' && pin.state === 'drifted'), stderr);
      assert.notEqual(status, 0, stderr);
    });
  }
});

describe('a module over maxFileBytes (default 2 MiB) is skipped with a message, never a pass when it holds a pin', () => {
  let workspace: string;
  before(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-oversized-code-'));
    mkdirSync(path.join(workspace, 'src'));
  });
  after(() => rmSync(workspace, { recursive: true, force: true }));
  const filler = `export const data = [${'1,'.repeat(1_600_000)}];\n`;
  const check = (text: string): { status: number | null; report: Report; stderr: string } => {
    writeFileSync(path.join(workspace, 'src', 'bundle.ts'), text);
    const result = spawnSync(process.execPath, [cli, 'check', '--offline', '--format', 'json', 'src'], { cwd: workspace, encoding: 'utf8', timeout: 60_000, input: '', env: { ...process.env, TOOLPIN_TRUST: '1' } });
    return { status: result.status, report: parseCheckReport(result.stdout) as Report, stderr: result.stderr };
  };

  test('3 MiB naming defineConnector without a pin literal: TP113, exit 0', { timeout: 60_000 }, () => {
    const { status, report, stderr } = check(`import { defineConnector } from '@objectstack/spec/integration';\n${filler}`);
    assert.deepEqual(report.files.flatMap((file) => file.problems.map((found) => found.code)), ['TP113'], stderr);
    assert.equal(status, 0, stderr);
  });

  test('3 MiB with a pin literal: TP112, exit not 0', { timeout: 60_000 }, () => {
    const { status, report, stderr } = check(`import { defineConnector } from '@objectstack/spec/integration';\n${filler}export const pin = '${ECHO_TOOL}';\n`);
    assert.ok(report.files.flatMap((file) => file.problems.map((found) => found.code)).includes('TP112'), stderr);
    assert.notEqual(status, 0, stderr);
  });
});

