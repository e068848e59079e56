/**
 * server/src/cli/codeCache.ts, through the built dist/cli.js as a user runs it: a batch command
 * compiles dist/commands.js through a V8 code cache in the user's cache folder
 * (TOOLPIN_CODE_CACHE_DIR here, a fresh folder per test).
 * - The first run writes one entry, named by the bundle's SHA-256, readable by the user only,
 *   in a folder only the user can enter; a second run uses it and leaves it as it is; both print
 *   exactly what a run without the cache prints.
 * - A corrupt entry, an entry others can write, and an entry of another version of the bundle
 *   are never used: the run compiles from the text, prints the same, and leaves one valid entry.
 * - A folder others can write is not used at all; TOOLPIN_CODE_CACHE=0 makes no folder; `hash`
 *   and the language server never touch the cache.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { codeCacheFolder } from '../../server/src/cli/codeCache';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const examples = path.join(root, 'examples');
const posix = process.platform !== 'win32';
const scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-code-cache-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const runtime = `v8-${process.versions.v8}-${process.arch}`;
/** The entry of a bundle: its name and the SHA-256 of its text. */
function entryOf(bundle: string): string {
  const name = path.basename(bundle, '.js');
  return `${name}-${createHash('sha256').update(readFileSync(path.join(root, 'dist', bundle), 'utf8')).digest('hex').slice(0, 32)}.bin`;
}
const entryName = entryOf('commands.js');
// The example has TypeScript sources, so the check also loads Babel's parser (dist/lib), and no Ajv (offline).
const entryNames = [entryName, entryOf(path.join('lib', 'babel-parser.js'))].sort();

let folders = 0;
/** A cache folder no run has used yet (not made: the run makes it). */
function freshCacheRoot(): string {
  return path.join(scratch, `cache-${folders++}`);
}

/** An offline check of the example workspace, with the cache under `cacheRoot` (or off). */
function check(cacheRoot: string | undefined, extraEnv: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.TOOLPIN_CODE_CACHE;
  delete env.TOOLPIN_CODE_CACHE_DIR;
  if (cacheRoot === undefined) env.TOOLPIN_CODE_CACHE = '0';
  else env.TOOLPIN_CODE_CACHE_DIR = cacheRoot;
  Object.assign(env, extraEnv);
  const result = spawnSync(process.execPath, [cli, 'check', '--offline', '--trust', '--format', 'json', '--workspace', examples, examples], { cwd: examples, env, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const withoutCache = check(undefined);

function assertSameAsWithoutCache(run: { status: number | null; stdout: string; stderr: string }, what: string): void {
  assert.equal(run.status, withoutCache.status, `${what}: exit status`);
  assert.equal(run.stdout, withoutCache.stdout, `${what}: the report`);
  assert.equal(run.stderr, withoutCache.stderr, `${what}: standard error`);
}

describe('the code cache of the CLI bundles', () => {
  test('the reference run without the cache checked the example', () => {
    const report = parseCheckReport(withoutCache.stdout) as { files: Array<{ pins: unknown[] }> };
    assert.ok(report.files.reduce((count, file) => count + file.pins.length, 0) > 10, 'the example\'s pins are in the report');
    assert.ok(withoutCache.status === 0 || withoutCache.status === 2, `exit ${withoutCache.status}: ${withoutCache.stderr}`);
  });

  test('the first run writes an entry only the user can read, the second uses it as it is', () => {
    const cacheRoot = freshCacheRoot();
    assertSameAsWithoutCache(check(cacheRoot), 'first run');
    const folder = path.join(cacheRoot, runtime);
    assert.deepEqual(readdirSync(folder).sort(), entryNames);
    const entry = path.join(folder, entryName);
    const written = statSync(entry);
    assert.ok(written.size > 100_000, `an entry of ${written.size} bytes holds the compiled bundle`);
    if (posix) {
      assert.equal(written.mode & 0o777, 0o600, 'the entry is the user\'s only');
      assert.equal(statSync(folder).mode & 0o777, 0o700, 'the folder is the user\'s only');
    }
    assertSameAsWithoutCache(check(cacheRoot), 'second run');
    const after = statSync(entry);
    assert.equal(after.ino, written.ino, 'the entry was used, not written again');
    assert.equal(after.mtimeMs, written.mtimeMs);
  });

  test('a corrupt entry is not used, and is replaced by a valid one', () => {
    const cacheRoot = freshCacheRoot();
    check(cacheRoot);
    const entry = path.join(cacheRoot, runtime, entryName);
    const valid = readFileSync(entry);
    const corrupt = Buffer.alloc(valid.length, 0x5a);
    writeFileSync(entry, corrupt, { mode: 0o600 });
    assertSameAsWithoutCache(check(cacheRoot), 'with a corrupt entry');
    const replaced = readFileSync(entry);
    assert.ok(!replaced.equals(corrupt), 'the corrupt entry was replaced');
    const again = statSync(entry);
    assertSameAsWithoutCache(check(cacheRoot), 'after the replacement');
    assert.equal(statSync(entry).ino, again.ino, 'the replacement is used');
  });

  test('entries of other versions of the bundle are deleted when a new one is written', () => {
    const cacheRoot = freshCacheRoot();
    const folder = path.join(cacheRoot, runtime);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const stale = `commands-${'0'.repeat(32)}.bin`;
    writeFileSync(path.join(folder, stale), 'an older bundle', { mode: 0o600 });
    writeFileSync(path.join(folder, 'unrelated.txt'), 'not ours to delete', { mode: 0o600 });
    assertSameAsWithoutCache(check(cacheRoot), 'beside a stale entry');
    assert.deepEqual(readdirSync(folder).sort(), [...entryNames, 'unrelated.txt'].sort());
  });

  test('an entry others can write is not used, and is replaced by the user\'s own', { skip: !posix && 'POSIX modes' }, () => {
    const cacheRoot = freshCacheRoot();
    check(cacheRoot);
    const entry = path.join(cacheRoot, runtime, entryName);
    chmodSync(entry, 0o666);
    const before = statSync(entry);
    assertSameAsWithoutCache(check(cacheRoot), 'with a group-writable entry');
    const after = statSync(entry);
    assert.notEqual(after.ino, before.ino, 'the entry was written anew');
    assert.equal(after.mode & 0o777, 0o600);
  });

  test('a folder others can write is not used at all', { skip: !posix && 'POSIX modes' }, () => {
    const cacheRoot = freshCacheRoot();
    const folder = path.join(cacheRoot, runtime);
    mkdirSync(folder, { recursive: true });
    chmodSync(folder, 0o777);
    assertSameAsWithoutCache(check(cacheRoot), 'with a world-writable folder');
    assert.deepEqual(readdirSync(folder), [], 'nothing written there');
  });

  test('TOOLPIN_CODE_CACHE=0 makes no folder; hash and the help never touch the cache', () => {
    const cacheRoot = freshCacheRoot();
    assertSameAsWithoutCache(check(cacheRoot, { TOOLPIN_CODE_CACHE: '0' }), 'turned off');
    assert.equal(existsSync(cacheRoot), false);
    const env: NodeJS.ProcessEnv = { ...process.env, TOOLPIN_CODE_CACHE_DIR: cacheRoot };
    delete env.TOOLPIN_CODE_CACHE;
    const tool = JSON.stringify({ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } });
    const hashed = spawnSync(process.execPath, [cli, 'hash', '-'], { env, input: tool, encoding: 'utf8' });
    assert.equal(hashed.status, 0, hashed.stderr);
    assert.match(hashed.stdout, /fnv1a64:[0-9a-f]{16}/);
    assert.equal(spawnSync(process.execPath, [cli, '--help'], { env, encoding: 'utf8' }).status, 0);
    assert.equal(existsSync(cacheRoot), false);
  });
});

describe('codeCacheFolder', () => {
  const home = (): string => path.join(path.sep, 'home', 'someone');
  test('the platform\'s cache folder, per V8 version and architecture', () => {
    assert.equal(codeCacheFolder({}, 'linux', home), path.join(home(), '.cache', 'toolpin', 'code-cache', runtime));
    assert.equal(codeCacheFolder({ XDG_CACHE_HOME: '/var/cache/someone' }, 'linux', home), path.join('/var/cache/someone', 'toolpin', 'code-cache', runtime));
    assert.equal(codeCacheFolder({ XDG_CACHE_HOME: 'relative/is/ignored' }, 'linux', home), path.join(home(), '.cache', 'toolpin', 'code-cache', runtime));
    assert.equal(codeCacheFolder({}, 'darwin', home), path.join(home(), 'Library', 'Caches', 'toolpin', 'code-cache', runtime));
    assert.equal(codeCacheFolder({ LOCALAPPDATA: 'C:\\Users\\someone\\AppData\\Local' }, 'win32', home), path.join('C:\\Users\\someone\\AppData\\Local', 'toolpin', 'Cache', 'code-cache', runtime));
    assert.equal(codeCacheFolder({}, 'win32', home), undefined, 'no LOCALAPPDATA: no cache');
  });
  test('turned off, named, or without a home folder', () => {
    for (const off of ['0', 'off', 'FALSE', ' no ']) assert.equal(codeCacheFolder({ TOOLPIN_CODE_CACHE: off }, 'linux', home), undefined, off);
    assert.equal(codeCacheFolder({ TOOLPIN_CODE_CACHE_DIR: '/tmp/elsewhere' }, 'linux', home), path.join('/tmp/elsewhere', runtime));
    assert.equal(
      codeCacheFolder({}, 'linux', () => {
        throw new Error('no home');
      }),
      undefined,
    );
  });
});
