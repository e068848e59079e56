/**
 * io/safeWrite.ts: the one module that writes files (issue 22 §1), and the stale-lock rules
 * (issue 25). Real files and real links in a temporary folder.
 */
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { checkWriteTarget, staleLockReason, withFileLock, WriteRefused, writeFileSafely } from '../../server/src/io/safeWrite';

const sourceRoot = path.resolve(__dirname, '..', '..', '..', 'server', 'src');

describe('writeFileSafely', () => {
  let base: string;
  let workspace: string;
  let outside: string;
  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'toolpin-safewrite-'));
    workspace = path.join(base, 'ws');
    outside = path.join(base, 'out');
    mkdirSync(workspace);
    mkdirSync(outside);
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  test('writes a new file, making its folders, with the mode the umask gives', async () => {
    const file = path.join(workspace, '.toolpin', 'store', 'sha256-aa.json');
    await writeFileSafely(file, 'text', { root: workspace });
    assert.equal(readFileSync(file, 'utf8'), 'text');
    const umask = process.umask();
    assert.equal(statSync(file).mode & 0o777, 0o666 & ~umask);
    assert.deepEqual(readdirSync(path.dirname(file)), ['sha256-aa.json'], 'no temporary file is left');
  });

  test('an existing file keeps its mode', async () => {
    const file = path.join(workspace, 'doc.jsonc');
    writeFileSync(file, 'old');
    chmodSync(file, 0o640);
    await writeFileSafely(file, 'new', { root: workspace });
    assert.equal(readFileSync(file, 'utf8'), 'new');
    assert.equal(statSync(file).mode & 0o777, 0o640);
  });

  test('a link at the name that leads out is refused, naming the link and where it points', async () => {
    const victim = path.join(outside, 'victim');
    writeFileSync(victim, 'mine');
    const link = path.join(workspace, 'entry.json');
    symlinkSync(victim, link);
    await assert.rejects(writeFileSafely(link, 'theirs', { root: workspace }), (error: unknown) => {
      assert.ok(error instanceof WriteRefused);
      assert.match(error.message, new RegExp(`${link.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is a link to ${victim.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
      return true;
    });
    assert.equal(readFileSync(victim, 'utf8'), 'mine');
  });

  test('a dangling link leading out is refused and creates nothing', async () => {
    const link = path.join(workspace, 'entry.json');
    symlinkSync(path.join(outside, 'new'), link);
    await assert.rejects(writeFileSafely(link, 'x', { root: workspace }), WriteRefused);
    assert.deepEqual(readdirSync(outside), []);
  });

  test('a linked parent folder leading out is refused, also for folders still to be made', async () => {
    symlinkSync(outside, path.join(workspace, '.toolpin'));
    await assert.rejects(writeFileSafely(path.join(workspace, '.toolpin', 'store', 'e.json'), 'x', { root: workspace }), /\.toolpin is a link to /);
    assert.deepEqual(readdirSync(outside), []);
  });

  test('links that stay inside the workspace are followed; the link is kept', async () => {
    mkdirSync(path.join(workspace, 'real'));
    writeFileSync(path.join(workspace, 'real', 'doc'), 'old');
    symlinkSync(path.join(workspace, 'real', 'doc'), path.join(workspace, 'doc'));
    await writeFileSafely(path.join(workspace, 'doc'), 'new', { root: workspace });
    assert.ok(lstatSync(path.join(workspace, 'doc')).isSymbolicLink());
    assert.equal(readFileSync(path.join(workspace, 'real', 'doc'), 'utf8'), 'new');
  });

  test('a workspace reached through a link is still its own real folder', async () => {
    const alias = path.join(base, 'alias');
    symlinkSync(workspace, alias);
    await writeFileSafely(path.join(alias, 'a.json'), 'x', { root: alias });
    assert.equal(readFileSync(path.join(workspace, 'a.json'), 'utf8'), 'x');
  });

  test('exactly: a named file is written at its name; a link there is refused', async () => {
    const named = path.join(outside, 'report.sarif');
    await writeFileSafely(named, 'one', { exactly: true });
    assert.equal(readFileSync(named, 'utf8'), 'one');
    const link = path.join(outside, 'link.sarif');
    symlinkSync(named, link);
    await assert.rejects(writeFileSafely(link, 'two', { exactly: true }), /link\.sarif is a link to .*report\.sarif/);
    assert.equal(readFileSync(named, 'utf8'), 'one');
  });

  test('checkWriteTarget (what the language server asks) gives the same answer', () => {
    symlinkSync(path.join(outside, 'x'), path.join(workspace, 'y'));
    assert.throws(() => checkWriteTarget(path.join(workspace, 'y'), { root: workspace }), WriteRefused);
    assert.equal(checkWriteTarget(path.join(workspace, 'z'), { root: workspace }), path.join(statRealpath(workspace), 'z'));
  });
});

function statRealpath(folder: string): string {
  return realpathSync(folder);
}

describe('locks', () => {
  let folder: string;
  beforeEach(() => (folder = mkdtempSync(path.join(tmpdir(), 'toolpin-lock-unit-'))));
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  const lockWith = (content: string): string => {
    const lock = path.join(folder, 'f.toolpin-lock');
    writeFileSync(lock, content);
    return lock;
  };

  test('the stale rules, each naming whose lock it was', () => {
    const now = Date.now();
    assert.match(staleLockReason(lockWith(JSON.stringify({ pid: 1, time: 9e15 })), now)!, /^pid 1, taken at time 9000000000000000: its time is in the future$/);
    assert.match(staleLockReason(lockWith(JSON.stringify({ pid: process.pid, host: 'elsewhere', time: now })), now, 'here')!, /on elsewhere.*another host's/);
    assert.match(staleLockReason(lockWith(JSON.stringify({ pid: 2 ** 22 + 7, host: hostname(), time: now })), now)!, /not running/);
    assert.match(staleLockReason(lockWith(JSON.stringify({ pid: process.pid, host: hostname(), time: now - 120_000 })), now)!, /older than 60 s/);
    assert.equal(staleLockReason(lockWith(JSON.stringify({ pid: process.pid, host: hostname(), time: now })), now), undefined, 'a live lock of this process is not stale');
  });

  test('withFileLock writes {pid, host, time} and takes over a stale lock, telling whose it was', async () => {
    const file = path.join(folder, 'f');
    writeFileSync(file, '');
    lockWith(JSON.stringify({ pid: 1, time: 9e15 }));
    const told: string[] = [];
    const seen = await withFileLock(file, { root: folder }, async () => JSON.parse(readFileSync(`${file}.toolpin-lock`, 'utf8')) as Record<string, unknown>, { onStale: (_lock, whose) => told.push(whose), timeoutMs: 2000 });
    assert.equal(seen.pid, process.pid);
    assert.equal(seen.host, hostname());
    assert.equal(typeof seen.time, 'number');
    assert.deepEqual(told, ['pid 1, taken at time 9000000000000000: its time is in the future']);
  });
});

/** Calls of the file system's write APIs: only io/safeWrite.ts may hold them. */
const WRITE_CALL = /\b(writeFile|writeFileSync|appendFile|appendFileSync|rename|renameSync|unlink|unlinkSync|rm|rmSync|mkdir|mkdirSync|copyFile|copyFileSync|createWriteStream|symlink|symlinkSync|truncate|truncateSync|chmod|chmodSync|writeSync|openSync|open)\s*\(/g;

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

test('no module but io/safeWrite.ts calls a file-system write API', () => {
  const offenders: string[] = [];
  for (const file of sourceFiles(sourceRoot)) {
    const relative = path.relative(sourceRoot, file).split(path.sep).join('/');
    // io/regularFile.ts is the one reader: it opens read-only, with flags built by openFlags (O_RDONLY).
    if (relative === 'io/safeWrite.ts' || relative === 'io/regularFile.ts') continue;
    // Comments name these calls in prose; their text is kept blank so line numbers stay.
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (comment) => comment.replace(/[^\n]/g, ' '));
    if (!/from 'node:fs(\/promises)?'|require\('node:fs/.test(text)) continue;
    for (const match of text.matchAll(WRITE_CALL)) {
      const before = text.slice(Math.max(0, match.index - 1), match.index);
      // A method of another object (handle.close, socket.write) is not the file system's.
      if (before === '.' && !/\bfs\.$/.test(text.slice(Math.max(0, match.index - 3), match.index))) continue;
      const line = text.slice(0, match.index).split('\n').length;
      const lineText = text.split('\n')[line - 1]!;
      // Reads open files too: a read-only open (O_RDONLY or 'r') is not a write.
      if (/^open(Sync)?$/.test(match[1]!) && /O_RDONLY|'r'/.test(text.slice(Math.max(0, match.index - 400), match.index + lineText.length))) continue;
      offenders.push(`${relative}:${line}: ${lineText.trim()}`);
    }
  }
  assert.deepEqual(offenders, [], 'every writer goes through io/safeWrite.ts');
});
