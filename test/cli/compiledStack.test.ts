/**
 * ObjectStack's compiled stack, `dist/objectstack.json` (issue 11): `os compile` writes the whole
 * stack there, connectors with defaults filled in beside objects, flows and the rest. Toolpin reads
 * it as a connector document, leniently: the stack's other parts and the compiler's defaults are not
 * "unknown keys", while everything under `providerConfig` is checked as in authored files, and the
 * pins are verified live. The workspace scan finds the file although `dist` is build output (and
 * `.gitignore` excludes it), and nothing else in `dist` is read.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { analyzeDocument, connectorOf, documentKindOf } from '../../server/src/core/documents/documents';
import { findFiles } from '../../server/src/io/fileFinder';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
/** echo_upper's tool pin as the fixture serves it. */
const ECHO_TOOL = 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';
const STALE_TOOL = `sha256:${'7'.repeat(64)}`;

function compiledStack(pins: Record<string, string>, transportKind = 'stdio'): string {
  return `${JSON.stringify(
    {
      manifest: { id: 'com.example.app', version: '1.0.0' },
      objects: [{ name: 'ticket', fields: { title: { type: 'text' } } }],
      connectors: [
        { name: 'rest_api', label: 'REST', type: 'api', provider: 'rest', enabled: true, providerConfig: { baseUrl: 'https://api.example.com' } },
        {
          name: 'demo',
          label: 'Demo (MCP)',
          type: 'api',
          provider: 'mcp',
          enabled: true,
          connectionTimeoutMs: 30000,
          requestTimeoutMs: 30000,
          status: 'inactive',
          authentication: { type: 'none' },
          providerConfig: {
            transport: { kind: transportKind, command: process.execPath, args: [fixtureServer, '--stdio'], env: {} },
            include: Object.keys(pins),
            toolsSnapshot: pins,
          },
          auth: { type: 'none' },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

describe('the compiled stack, read', () => {
  test('objectstack.json is a compiled stack, read as connector instances; the stack and the defaults are not unknown keys', () => {
    assert.equal(documentKindOf('/w/dist/objectstack.json'), 'compiledStack');
    const analysis = analyzeDocument('compiledStack', compiledStack({ echo_upper: ECHO_TOOL }), '/w/dist/objectstack.json');
    assert.deepStrictEqual(analysis.problems.map((found) => `${found.code} ${found.message}`), []);
    assert.equal(analysis.kind, 'compiledStack');
    assert.deepStrictEqual(connectorOf(analysis)?.instances.map((instance) => instance.name?.value), ['rest_api', 'demo']);
  });

  test('providerConfig is still checked as in an authored file', () => {
    const analysis = analyzeDocument('compiledStack', compiledStack({ echo_upper: ECHO_TOOL }, 'carrier-pigeon'), '/w/dist/objectstack.json');
    assert.deepStrictEqual(analysis.problems.map((found) => found.code), ['TP301']);
  });

  test('the same text under an authored connector name still reports the stack keys', () => {
    const analysis = analyzeDocument('connector', compiledStack({ echo_upper: ECHO_TOOL }), '/w/stack.connector.json');
    assert.ok(analysis.problems.some((found) => found.code === 'TP102' && found.message.includes('"manifest"')), analysis.problems.map((found) => found.message).join('\n'));
  });

  test('a compiled stack without connectors has none, and is not read as one instance', () => {
    const analysis = analyzeDocument('compiledStack', '{ "manifest": { "id": "x" }, "objects": [] }', '/w/dist/objectstack.json');
    assert.deepStrictEqual(analysis.problems, []);
    assert.equal(connectorOf(analysis)?.instances.length, 0);
  });
});

let workspace: string;
before(() => {
  workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-compiled-stack-'));
  mkdirSync(path.join(workspace, 'dist', 'assets'), { recursive: true });
  writeFileSync(path.join(workspace, '.gitignore'), 'dist/\n');
  writeFileSync(path.join(workspace, 'dist', 'objectstack.json'), compiledStack({ echo_upper: ECHO_TOOL, reverse: STALE_TOOL }));
  // Other build output is never read, whatever its name.
  writeFileSync(path.join(workspace, 'dist', 'assets', 'stale.connector.json'), '{ "broken": ');
});
after(() => rmSync(workspace, { recursive: true, force: true }));

describe('the compiled stack, found and verified', () => {
  test('the file finder finds dist/objectstack.json, though .gitignore excludes dist, and nothing else in dist', async () => {
    const found = await findFiles(workspace, { match: (_relative, name) => documentKindOf(name) !== undefined, gitignore: true });
    assert.deepStrictEqual(found.map((file) => path.relative(workspace, file)), [path.join('dist', 'objectstack.json')]);
  });

  test('toolpin check verifies its pins live: one verified, one drifted, naming the tool', () => {
    const result = spawnSync(process.execPath, [cli, 'check', '--format', 'json', '.'], { cwd: workspace, encoding: 'utf8', timeout: 60_000, input: '', env: TRUSTED_ENV });
    assert.equal(result.status, 1, `${result.stdout}\n${result.stderr}`);
    const report: { files: Array<{ path: string; problems: Array<{ code: string; message: string }> }>; summary: Record<string, number> } = parseCheckReport(result.stdout);
    assert.deepStrictEqual(report.files.map((file) => file.path), [path.join('dist', 'objectstack.json')]);
    const drift = report.files[0]!.problems.filter((found) => found.code === 'TP400' || found.code === 'TP401');
    assert.equal(drift.length, 1, JSON.stringify(report.files[0]!.problems));
    assert.match(drift[0]!.message, /reverse/);
  });
});
