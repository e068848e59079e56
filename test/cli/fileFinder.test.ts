/**
 * One file finder (server/src/io/fileFinder.ts) for `toolpin check`, the editor's workspace scan
 * and the dispatch-history logs: one list of skipped folders, `.gitignore` honoured for documents,
 * brace globs for logs, an asynchronous walk. The `check` and `history` tests run the built
 * dist/cli.js; the others call the modules the language server is built from.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { nodeFileSystem } from '../../server/src/engine/nodeFileSystem';
import { findLogFiles } from '../../server/src/history/logReader';
import { findFiles, isSystemFolder, SKIPPED_FOLDERS, type WalkCut, walkCutMessage } from '../../server/src/io/fileFinder';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
/** The project's own fixtures are trusted for the run, as CI trusts its own branches (docs/formats.md §10). */
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };

function run(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000, input: '', env: TRUSTED_ENV });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

function relative(base: string, files: readonly string[]): string[] {
  return files.map((file) => path.relative(base, file).split(path.sep).join('/'));
}

const BLUEPRINT = '{ "blueprint": "b", "formatVersion": 1, "steps": [] }\n';

let scratch: string;
let workspace: string;
let marker: string;

before(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-finder-'));
  workspace = path.join(scratch, 'repo');
  marker = path.join(scratch, 'started.marker');
  // A connector whose server, if it were ever started, leaves a marker file behind.
  const starter = path.join(scratch, 'starter.mjs');
  writeFileSync(starter, `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker)}, 'started');\n`);
  const connector = JSON.stringify({
    name: 'copied_fixture',
    provider: 'mcp',
    providerConfig: { transport: { kind: 'stdio', command: process.execPath, args: [starter] }, toolsSnapshot: { echo: `sha256:${'1'.repeat(64)}` } },
  });
  write(path.join(workspace, 'flows', 'main.blueprint.jsonc'), BLUEPRINT);
  for (const skipped of ['.cache/host/ws', 'dist', 'out', 'build', 'coverage', '.vscode-test/user', 'node_modules/pkg', '.git']) {
    write(path.join(workspace, skipped, 'copied.connector.json'), connector);
  }
  // .gitignore: a folder, a pattern with a re-include, and a nested .gitignore.
  write(path.join(workspace, '.gitignore'), 'generated/\n*.local.blueprint.json\n!keep.local.blueprint.json\n');
  write(path.join(workspace, 'generated', 'copied.connector.json'), connector);
  write(path.join(workspace, 'flows', 'mine.local.blueprint.json'), BLUEPRINT);
  write(path.join(workspace, 'flows', 'keep.local.blueprint.json'), BLUEPRINT);
  write(path.join(workspace, 'flows', 'nested', '.gitignore'), 'scratch.blueprint.json\n');
  write(path.join(workspace, 'flows', 'nested', 'scratch.blueprint.json'), BLUEPRINT);
  write(path.join(workspace, 'flows', 'nested', 'real.blueprint.json'), BLUEPRINT);
  // A symbolic link back up the tree: followed, it would loop forever.
  symlinkSync(workspace, path.join(workspace, 'flows', 'loop'), 'dir');
});
after(() => rmSync(scratch, { recursive: true, force: true }));

const EXPECTED = ['flows/keep.local.blueprint.json', 'flows/main.blueprint.jsonc', 'flows/nested/real.blueprint.json'];

describe('one file finder', () => {
  test('check at the repository root skips .cache, dist, out, build, coverage, .vscode-test and gitignored files, and starts none of their servers', () => {
    const result = run(workspace, 'check', '--format', 'json');
    const report = parseCheckReport(result.stdout) as { files: Array<{ path: string }> };
    assert.deepEqual(report.files.map((file) => file.path), EXPECTED, result.stderr);
    assert.equal(existsSync(marker), false, 'no server of a skipped folder was started');
  });

  test('a skipped folder named explicitly is searched: the list applies below the folder given', () => {
    const result = run(workspace, 'check', '--offline', '--format', 'json', 'dist');
    const report = parseCheckReport(result.stdout) as { files: Array<{ path: string }> };
    assert.deepEqual(report.files.map((file) => file.path), ['dist/copied.connector.json']);
  });

  test("the editor's workspace scan finds the same files", async () => {
    assert.deepEqual(relative(workspace, await nodeFileSystem.findDocuments(workspace, 100)), EXPECTED);
    assert.equal((await nodeFileSystem.findDocuments(workspace, 1)).length, 1);
    assert.deepEqual(await nodeFileSystem.findDocuments(workspace, 0), []);
  });

  test('the skipped folders are one list, the same for logs', async () => {
    for (const name of ['node_modules', '.git', '.cache', 'dist', 'out', 'build', 'coverage', '.vscode-test']) assert.ok(SKIPPED_FOLDERS.has(name), name);
    const logs = path.join(scratch, 'logs-root');
    for (const file of ['a.events.jsonl', '.cache/b.events.jsonl', 'dist/c.events.jsonl', 'node_modules/d.events.jsonl', 'ignored/e.events.jsonl']) write(path.join(logs, file), '');
    // Logs are runtime output, usually gitignored: .gitignore does not hide them.
    write(path.join(logs, '.gitignore'), 'ignored/\n');
    assert.deepEqual(relative(logs, await findLogFiles(logs)), ['a.events.jsonl', 'ignored/e.events.jsonl']);
  });

  test('log globs have braces: logs/**/*.{events,runs}.jsonl matches both kinds (setting and CLI argument)', async () => {
    const logs = path.join(scratch, 'brace');
    for (const file of ['logs/a.events.jsonl', 'logs/deep/b.runs.jsonl', 'logs/c.other.jsonl', 'top.events.jsonl']) write(path.join(logs, file), '');
    assert.deepEqual(relative(logs, await findLogFiles(logs, ['logs/**/*.{events,runs}.jsonl'])), ['logs/a.events.jsonl', 'logs/deep/b.runs.jsonl']);
    const line = (seq: number, log: string) =>
      `${JSON.stringify({ type: 'MCP_DISPATCHED', seq, at: '2026-11-20T10:00:00.000Z', executionId: `exec_${log}`, data: { toolName: 'echo_upper', server: 'demo', schemaHash: 'fnv1a64:a76fe8d6d023fca0' } })}\n`;
    writeFileSync(path.join(logs, 'logs', 'a.events.jsonl'), line(1, 'a'));
    writeFileSync(path.join(logs, 'logs', 'deep', 'b.runs.jsonl'), line(2, 'b'));
    const result = run(logs, 'history', '--offline', '--format', 'json', 'logs/**/*.{events,runs}.jsonl');
    const report = JSON.parse(result.stdout) as { logs: Array<{ log: string }>; summary: { executions: number } };
    assert.deepEqual(report.logs.map((log) => log.log), ['logs/a.events.jsonl', 'logs/deep/b.runs.jsonl'], result.stderr);
    assert.equal(report.summary.executions, 2);
  });

  test('the walk is asynchronous: timers run while a large tree is searched', async () => {
    const big = path.join(scratch, 'big');
    for (let folder = 0; folder < 60; folder++) {
      for (let file = 0; file < 20; file++) write(path.join(big, `f${folder}`, `s${file}`, `x${file}.blueprint.json`), '{}');
    }
    let ticks = 0;
    const timer = setInterval(() => void ticks++, 0);
    let found: string[];
    try {
      found = await findFiles(big, { match: (_relative, name) => name.endsWith('.blueprint.json') });
    } finally {
      clearInterval(timer);
    }
    assert.equal(found.length, 1200);
    assert.ok(ticks > 0, 'a timer fired during the walk');
  });

  test('a walk with a budget of entries stops there, returns what it found and says so once', async () => {
    const big = path.join(scratch, 'budget');
    for (let folder = 0; folder < 40; folder++) for (let file = 0; file < 25; file++) write(path.join(big, `f${folder}`, `x${file}.blueprint.json`), '{}');
    const cuts: WalkCut[] = [];
    const found = await findFiles(big, { match: (_relative, name) => name.endsWith('.blueprint.json'), budget: { maxEntries: 300, maxMs: 60_000 }, onCut: (cut) => cuts.push(cut) });
    assert.equal(cuts.length, 1);
    assert.equal(cuts[0]!.reason, 'entries');
    assert.ok(found.length > 0 && found.length < 1000, `${found.length} files found`);
    assert.match(walkCutMessage(big, cuts[0]!, 'documents'), /stopped looking for documents in .* after 300 files and folders .*toolpin\.workspaceScan\.maxEntries/);
    // Without a budget (the CLI) the same tree is walked in full.
    const all = await findFiles(big, { match: (_relative, name) => name.endsWith('.blueprint.json'), onCut: (cut) => cuts.push(cut) });
    assert.equal(all.length, 1000);
    assert.equal(cuts.length, 1);
  });

  test('a walk with a time budget stops in about that time', async () => {
    const cuts: WalkCut[] = [];
    const started = Date.now();
    // The disk root: far more than 300 ms of walking anywhere.
    await findFiles(path.parse(process.cwd()).root, { match: () => false, budget: { maxEntries: Number.MAX_SAFE_INTEGER, maxMs: 300 }, onCut: (cut) => cuts.push(cut) });
    assert.equal(cuts[0]?.reason, 'time');
    assert.ok(Date.now() - started < 15_000, `the walk took ${Date.now() - started} ms`);
  });

  test('a walk of the disk root enters no system folder (/proc, /sys, /dev, …)', async () => {
    const seen: string[] = [];
    await findFiles(path.parse(process.cwd()).root, {
      match: (relative) => {
        seen.push(relative);
        return false;
      },
      budget: { maxEntries: 20_000, maxMs: 10_000 },
    });
    assert.ok(seen.length > 0);
    const inSystem = seen.filter((relative) => /^(proc|sys|dev|run|usr|etc|boot)\//.test(relative));
    assert.deepEqual(inSystem.slice(0, 5), []);
    assert.ok(isSystemFolder('/proc') && isSystemFolder('/sys/') && !isSystemFolder('/home') && !isSystemFolder(scratch));
  });
});
