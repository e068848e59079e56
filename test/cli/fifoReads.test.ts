/**
 * Issue 25, "files that are not what they seem": a named pipe (FIFO) wherever Toolpin reads a
 * file never makes a command wait, and is named on standard error. Before io/regularFile.ts, a
 * FIFO placed as the code-cache entry of dist/commands.js made every batch command wait for ever
 * for a writer (the cache opened it blocking), and one in place of a policy, a store entry, a
 * sources file, a trust record or a document did the same to `toolpin check`.
 *
 * Each run here is the built dist/cli.js as a user runs it, ended after 15 s if it hangs so the
 * assertion can name it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-fifo-reads-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const posix = process.platform !== 'win32';

function mkfifo(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  assert.equal(spawnSync('mkfifo', [file]).status, 0, 'mkfifo works here');
}

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
    setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
  });
}

let workspaces = 0;
/** A copy of the example workspace (checked offline), with a config home of its own. */
function workspace(): { folder: string; env: NodeJS.ProcessEnv } {
  const folder = path.join(scratch, `workspace-${workspaces++}`);
  cpSync(path.join(root, 'examples'), folder, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLPIN_TRUST: '1', XDG_CONFIG_HOME: path.join(folder, '..', `config-${workspaces}`), TOOLPIN_CODE_CACHE: '0' };
  return { folder, env };
}

const check = (folder: string, env: NodeJS.ProcessEnv, ...extra: string[]) => run(['check', '--offline', '--workspace', folder, ...extra, folder], folder, env);
// Store entries are read through the same reader (cli/io.ts readIfPresent) as the policy; the
// unit test test/unit/regularFileReads.test.ts holds that no reader bypasses it.

describe('a FIFO in place of a file Toolpin reads', { skip: !posix && 'no FIFOs here' }, () => {
  test('the code-cache entry of dist/commands.js: the command runs, compiles from the text and names the entry', { timeout: 40_000 }, async () => {
    const { folder, env } = workspace();
    const reference = await check(folder, env);
    const cacheRoot = path.join(scratch, 'cache');
    const key = createHash('sha256').update(readFileSync(path.join(root, 'dist', 'commands.js'), 'utf8')).digest('hex').slice(0, 32);
    const entry = path.join(cacheRoot, `v8-${process.versions.v8}-${process.arch}`, `commands-${key}.bin`);
    mkfifo(entry);
    const result = await check(folder, { ...env, TOOLPIN_CODE_CACHE: '1', TOOLPIN_CODE_CACHE_DIR: cacheRoot });
    assert.notEqual(result.status, null, 'the run ended by itself');
    assert.equal(result.status, reference.status, result.stderr);
    assert.equal(result.stdout, reference.stdout);
    assert.match(result.stderr, /code cache entry .*commands-[0-9a-f]{32}\.bin skipped: not a regular file \(a named pipe \(FIFO\)\); skipped/);
  });

  test('a document: the check ends, names the pipe and exits 2', { timeout: 40_000 }, async () => {
    const { folder, env } = workspace();
    mkfifo(path.join(folder, 'piped.blueprint.json'));
    const result = await check(folder, env);
    assert.notEqual(result.status, null, 'the run ended by itself');
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /piped\.blueprint\.json: not a regular file \(a named pipe \(FIFO\)\); skipped/);
  });

  test('a document named on the command line: the check ends, names the pipe and exits 2', { timeout: 40_000 }, async () => {
    const { folder, env } = workspace();
    mkfifo(path.join(folder, 'named.blueprint.json'));
    const result = await run(['check', '--offline', '--workspace', folder, path.join(folder, 'named.blueprint.json')], folder, env);
    assert.notEqual(result.status, null, 'the run ended by itself');
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /cannot read named\.blueprint\.json: not a regular file \(a named pipe \(FIFO\)\); skipped/);
  });

  test('the policy and a .gitignore: the check ends as without them and names both', { timeout: 40_000 }, async () => {
    const { folder, env } = workspace();
    const reference = await check(folder, env, '--format', 'json');
    mkfifo(path.join(folder, '.toolpin', 'policy.jsonc'));
    mkfifo(path.join(folder, '.gitignore'));
    const result = await check(folder, env, '--format', 'json');
    assert.notEqual(result.status, null, 'the run ended by itself');
    assert.match(result.stderr, /policy\.jsonc: not a regular file \(a named pipe \(FIFO\)\); skipped/);
    assert.match(result.stderr, /\.gitignore: not a regular file \(a named pipe \(FIFO\)\); skipped/);
    assert.equal(result.status, 2, 'a skipped .gitignore is a path the check could not read');
    assert.deepEqual((parseCheckReport(result.stdout) as { files: unknown[] }).files, (parseCheckReport(reference.stdout) as { files: unknown[] }).files);
  });

  test('.toolpin/sources.jsonc: the check ends with exit 2 and names the pipe', { timeout: 40_000 }, async () => {
    const { folder, env } = workspace();
    mkfifo(path.join(folder, '.toolpin', 'sources.jsonc'));
    const result = await check(folder, env);
    assert.notEqual(result.status, null, 'the run ended by itself');
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /\.toolpin\/sources\.jsonc cannot be read \(not a regular file \(a named pipe \(FIFO\)\); skipped\)/);
  });

  test('the trust record: the folder counts as untrusted and the record is named', { timeout: 40_000 }, async () => {
    const { folder, env } = workspace();
    delete env.TOOLPIN_TRUST;
    mkfifo(path.join(String(env.XDG_CONFIG_HOME), 'toolpin', 'trust.json'));
    const result = await run(['trust', '--list'], folder, env);
    assert.notEqual(result.status, null, 'the run ended by itself');
    assert.match(result.stderr, /ignoring the trust record .*trust\.json: not a regular file \(a named pipe \(FIFO\)\); skipped/);
  });
});
