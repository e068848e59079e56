/**
 * The ONE module that writes files (a unit test scans server/src for any other writer). Every file
 * Toolpin writes — pin-store entries, re-pinned documents, SARIF reports, lock files, the user's
 * trust record, the code cache — is written here, and only where its scope allows.
 *
 * A write names a {@link WriteScope}:
 * - `{ root }`: the file's real location (every existing parent and the file itself resolved,
 *   links included) must be inside the real location of `root` (the workspace folder). A link
 *   anywhere on the way that leads out is refused with a {@link WriteRefused} naming the link and
 *   where it points.
 * - `{ exactly: true }`: a file named on the command line or chosen by Toolpin (the user's trust
 *   record, the code cache). It is written at exactly that name: when the name itself is a link,
 *   the write is refused; the folders above it are the caller's choice.
 *
 * How a file is written ({@link writeFileSafely}): missing folders are made one at a time (mkdir
 * never follows a link at its name, and each made folder is checked again); the text goes to a
 * new temporary file created with O_CREAT|O_EXCL|O_NOFOLLOW in the file's real folder, which is
 * then renamed over the real file. rename(2) replaces a link planted at the name meanwhile instead
 * of following it. A new file gets the mode the user's umask gives (0o666 reduced); an existing
 * file keeps its mode.
 *
 * {@link withFileLock} serialises Toolpin processes writing one file (`<real file>.toolpin-lock`,
 * created with O_EXCL). A lock records `{pid, host, time}`; a lock whose time is in the future,
 * from another host, from a pid that is not running on this host, older than
 * {@link STALE_LOCK_MS}, or unreadable and old is stale: it is taken over, and the caller is told
 * whose it was.
 *
 * The language server does not write re-pin edits itself (the client applies a WorkspaceEdit, so
 * one undo takes both back); it asks {@link checkWriteTarget} — the same resolution and the same
 * refusal — before it puts a file into an edit.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, lstatSync, mkdirSync, openSync, readlinkSync, readSync, realpathSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { chmod, lstat, mkdir, open, rename, rm, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { errorCode, isRecord } from '../core/json/values';

/** Where a write may land: inside a folder, or exactly at the named file. */
export type WriteScope = { readonly root: string } | { readonly exactly: true };

/**
 * The scope of a file a command writes: inside `workspaceFolder` when its name lies there (links
 * on the way may not lead out), else exactly the named file (it was named outside on purpose).
 */
export function scopeFor(file: string, workspaceFolder: string): WriteScope {
  const relative = path.relative(path.resolve(workspaceFolder), path.resolve(file));
  return relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative) ? { exactly: true } : { root: workspaceFolder };
}

/** A lock older than this is taken over even if its owner seems alive (its pid was reused). */
export const STALE_LOCK_MS = 60_000;
/** A lock time this far ahead of the clock is not a clock's skew: it is stale. */
const FUTURE_SKEW_MS = 60_000;
const MAX_LINKS = 40;

/** A write refused because its real location is not where its scope allows. */
export class WriteRefused extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`refused to write ${file}: ${reason}`);
    this.name = 'WriteRefused';
  }
}

export class FileLockTimeout extends Error {
  constructor(readonly file: string) {
    super(`another process is writing ${file} (lock ${file}.toolpin-lock); try again, or remove the lock if no Toolpin process is running`);
    this.name = 'FileLockTimeout';
  }
}

/** Synchronous file-system reads the resolution needs (the async writer and the LSP check share it). */
interface Resolver {
  realpath(file: string): string | undefined;
  symlinkTarget(file: string): string | undefined;
}

const syncResolver: Resolver = {
  realpath(file) {
    try {
      return realpathSync(file);
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
      throw error;
    }
  },
  symlinkTarget(file) {
    try {
      return lstatSync(file).isSymbolicLink() ? readlinkSync(file) : undefined;
    } catch {
      return undefined;
    }
  },
};

/**
 * The real location of `file`: realpath when it exists; for a dangling link, the real location
 * of what it names; for a missing file, its real parent joined with its name.
 */
function realLocation(file: string, resolver: Resolver, depth = 0): string {
  if (depth > MAX_LINKS) throw new WriteRefused(file, 'too many levels of links');
  const absolute = path.resolve(file);
  const real = resolver.realpath(absolute);
  if (real !== undefined) return real;
  const link = resolver.symlinkTarget(absolute);
  if (link !== undefined) return realLocation(path.resolve(path.dirname(absolute), link), resolver, depth + 1);
  const parent = path.dirname(absolute);
  if (parent === absolute) return absolute;
  return path.join(realLocation(parent, resolver, depth + 1), path.basename(absolute));
}

function isInside(folder: string, file: string): boolean {
  const relative = path.relative(folder, file);
  return relative !== '' && relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

/** The first link on the way from `root` to `file` whose resolution leaves `realRoot`: for the message. */
function linkLeadingOut(root: string, file: string, realRoot: string, resolver: Resolver): string | undefined {
  const relative = path.relative(path.resolve(root), path.resolve(file));
  let current = path.resolve(root);
  for (const part of relative.split(path.sep).filter(Boolean)) {
    current = path.join(current, part);
    const target = resolver.symlinkTarget(current);
    if (target === undefined) continue;
    const leadsTo = realLocation(current, resolver);
    if (!isInside(realRoot, leadsTo)) return `${current} is a link to ${target} (${leadsTo}), outside ${realRoot}`;
  }
  return undefined;
}

/**
 * Where a write of `file` under `scope` lands, or a {@link WriteRefused} saying why it may not.
 * Synchronous and read-only: the language server asks it before it puts a file into a WorkspaceEdit.
 */
export function checkWriteTarget(file: string, scope: WriteScope): string {
  return resolveTarget(file, scope, syncResolver);
}

function resolveTarget(file: string, scope: WriteScope, resolver: Resolver): string {
  const absolute = path.resolve(file);
  if ('exactly' in scope) {
    const link = resolver.symlinkTarget(absolute);
    if (link !== undefined) throw new WriteRefused(absolute, `${absolute} is a link to ${link}; a named file is written only at its own name`);
    return path.join(realLocation(path.dirname(absolute), resolver), path.basename(absolute));
  }
  const realRoot = realLocation(scope.root, resolver);
  const target = realLocation(absolute, resolver);
  if (isInside(realRoot, target)) return target;
  const link = linkLeadingOut(scope.root, absolute, realRoot, resolver);
  throw new WriteRefused(absolute, link ?? `its real location ${target} is outside ${realRoot}`);
}

/** Makes the missing folders of `folder` one at a time, each checked against the scope once made. */
async function makeFolders(folder: string, scope: WriteScope): Promise<void> {
  const missing: string[] = [];
  let current = path.resolve(folder);
  for (;;) {
    try {
      await stat(current);
      break;
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
    missing.unshift(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const made of missing) {
    // Checked before it is made (its real parent may lie outside) and after (a link may have
    // appeared at its name meanwhile: mkdir then fails with EEXIST rather than follow it).
    if ('root' in scope) resolveTarget(made, scope, syncResolver);
    await mkdir(made).catch((error: unknown) => {
      if (errorCode(error) !== 'EEXIST') throw error;
    });
    if ('root' in scope) resolveTarget(made, scope, syncResolver);
  }
}

/**
 * Writes `text` to `file` if its real location is allowed by `scope` (see the module comment),
 * atomically: a reader sees the old text or the new one, and a crash leaves at most a temporary
 * `.<name>.toolpin-*.tmp` beside it. Missing folders are made. Rejects with {@link WriteRefused}.
 * `options.mode` is the mode of a new file before the umask (default 0o666).
 */
export async function writeFileSafely(file: string, text: string | Uint8Array, scope: WriteScope, options: { mode?: number } = {}): Promise<void> {
  const wanted = path.resolve(file);
  resolveTarget(wanted, scope, syncResolver);
  await makeFolders(path.dirname(wanted), scope);
  const target = resolveTarget(wanted, scope, syncResolver);
  let mode: number | undefined;
  try {
    const found = await lstat(target);
    if (found.isSymbolicLink()) throw new WriteRefused(wanted, `${target} changed into a link while it was written`);
    mode = found.mode & 0o7777;
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.toolpin-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  try {
    const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), mode ?? options.mode ?? 0o666);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // open()'s mode is reduced by the umask; the file being replaced may have had more bits.
    if (mode !== undefined) await chmod(temporary, mode);
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/**
 * The synchronous twin of {@link writeFileSafely} for the code cache, which writes while a process
 * starts: folders are the caller's (see {@link makeFolderSafelySync}).
 */
export function writeFileSafelySync(file: string, data: Uint8Array | string, scope: WriteScope, options: { mode?: number } = {}): void {
  const target = resolveTarget(file, scope, syncResolver);
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.toolpin-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  try {
    const descriptor = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), options.mode ?? 0o666);
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      let written = 0;
      while (written < bytes.length) written += writeSync(descriptor, bytes, written, bytes.length - written);
    } finally {
      closeSync(descriptor);
    }
    renameSync(temporary, target);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // It was never made, or it is gone already.
    }
    throw error;
  }
}

/** Makes `folder` (and its parents) with `mode`, synchronously; for the user's cache folder. */
export function makeFolderSafelySync(folder: string, mode: number): void {
  mkdirSync(folder, { recursive: true, mode });
}

/** Removes `file` (never what a link at its name leads to); a missing file is not an error. */
export function removeFileSafelySync(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

/** Makes `folder` and its parents with `mode`: for the user's own folders (the trust record's), not the workspace's. */
export async function makeFolderSafely(folder: string, mode: number): Promise<void> {
  await mkdir(folder, { recursive: true, mode });
}

interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly time: number;
}

/** Why a lock is stale, as said to the user; undefined when its owner may still be writing. */
export type StaleLockNotice = (lockPath: string, whose: string) => void;

function ownerRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

/** Reads a lock without following a link and without blocking on a FIFO: at most 4 KiB. */
function readLockText(lockPath: string): string | undefined {
  let descriptor: number | undefined;
  try {
    descriptor = openSync(lockPath, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
    const buffer = Buffer.alloc(4096);
    const length = readSync(descriptor, buffer, 0, buffer.length, null);
    return buffer.subarray(0, length).toString('utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') throw error;
    return undefined;
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}

/**
 * Whose the lock at `lockPath` is and why it is stale, or undefined when its owner may still be
 * writing (or it was released meanwhile). The rules are the module comment's.
 */
export function staleLockReason(lockPath: string, now: number, thisHost = hostname()): string | undefined {
  try {
    // Toolpin makes its locks as regular files: a link or anything else at the name was planted.
    const found = lstatSync(lockPath);
    if (!found.isFile()) return `not a lock Toolpin makes: a ${found.isSymbolicLink() ? 'link' : 'special file'}`;
  } catch {
    return undefined; // released meanwhile: retry at once
  }
  let text: string | undefined;
  try {
    text = readLockText(lockPath);
  } catch {
    return undefined; // released meanwhile: retry at once
  }
  let owner: unknown;
  try {
    owner = text === undefined ? undefined : JSON.parse(text);
  } catch {
    owner = undefined;
  }
  if (isRecord(owner) && typeof owner.pid === 'number' && typeof owner.time === 'number') {
    const host = typeof owner.host === 'string' ? owner.host : undefined;
    const whose = `pid ${owner.pid}${host !== undefined ? ` on ${host}` : ''}, taken ${Number.isFinite(owner.time) && Math.abs(owner.time) < 8.64e15 ? new Date(owner.time).toISOString() : `at time ${owner.time}`}`;
    if (!Number.isFinite(owner.time) || owner.time > now + FUTURE_SKEW_MS) return `${whose}: its time is in the future`;
    if (host !== undefined && host !== thisHost) return `${whose}: another host's`;
    if (!ownerRunning(owner.pid)) return `${whose}: that process is not running`;
    if (now - owner.time > STALE_LOCK_MS) return `${whose}: older than ${STALE_LOCK_MS / 1000} s`;
    return undefined;
  }
  try {
    const age = now - lstatSync(lockPath).mtimeMs;
    return age > STALE_LOCK_MS || age < -FUTURE_SKEW_MS ? `an unreadable lock, changed ${Math.round(age / 1000)} s ago` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs `action` while holding `<real file>.toolpin-lock`, the lock being within `scope` too.
 * Rejects with {@link FileLockTimeout} when the lock stays held by a live owner for `timeoutMs`.
 * A stale lock is taken over and reported to `onStale`. The lock is removed however `action` ends.
 */
export async function withFileLock<T>(file: string, scope: WriteScope, action: () => Promise<T>, options: { timeoutMs?: number; onStale?: StaleLockNotice } = {}): Promise<T> {
  // Two links to one file share one lock: it is named after the file the links lead to.
  const real = resolveTarget(file, 'root' in scope ? scope : { root: path.dirname(path.resolve(file)) }, syncResolver);
  const lockPath = `${real}.toolpin-lock`;
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  let delay = 10;
  for (;;) {
    try {
      const handle = await open(lockPath, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o666);
      try {
        await handle.writeFile(JSON.stringify({ pid: process.pid, host: hostname(), time: Date.now() } satisfies LockOwner));
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
    const stale = staleLockReason(lockPath, Date.now());
    if (stale !== undefined) {
      // Two processes may both find the lock stale; unlinking is harmless for the second one,
      // and only one of them wins the O_EXCL create that follows. rm removes a link, never its target.
      await rm(lockPath, { force: true });
      options.onStale?.(lockPath, stale);
      continue;
    }
    if (Date.now() > deadline) throw new FileLockTimeout(file);
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 200);
  }
  try {
    return await action();
  } finally {
    await rm(lockPath, { force: true });
  }
}
