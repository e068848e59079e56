/**
 * Writing a file that someone else may be writing too: a lock file that serialises Toolpin
 * processes, and an atomic replace that never leaves a half-written file.
 *
 * - {@link withFileLock} holds `<file>.toolpin-lock` (beside the file a link leads to), created
 *   with O_EXCL, for the time of one read-compare-write. The lock holds the owner's pid and start time; a lock whose owner is no
 *   longer running, or that is older than {@link STALE_LOCK_MS}, is stale and taken over. Waiting
 *   uses timers (never a busy loop), and gives up after `timeoutMs` with an error naming the file.
 * - {@link writeFileAtomic} writes a temporary file in the same folder (so the rename never
 *   crosses file systems), gives it the mode of the file it replaces, and renames it over the
 *   file. A symbolic link is followed: the file it points to is replaced, the link stays.
 *
 * Editors and other tools do not take the lock; the caller compares the text it read with the
 * text on disk while holding the lock, which catches their writes too.
 */
import { randomBytes } from 'node:crypto';
import { chmod, open, readFile, realpath, rename, rm, stat, unlink } from 'node:fs/promises';
import * as path from 'node:path';
import { errorCode, isRecord } from '../core/json/values';

/** A lock older than this is taken over even if its owner seems alive (its pid was reused). */
export const STALE_LOCK_MS = 60_000;

export class FileLockTimeout extends Error {
  constructor(readonly file: string) {
    super(`another process is writing ${file} (lock ${file}.toolpin-lock); try again, or remove the lock if no Toolpin process is running`);
    this.name = 'FileLockTimeout';
  }
}

interface LockOwner {
  readonly pid: number;
  readonly time: number;
}

function ownerRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

/** True when the lock at `lockPath` belongs to nobody who is still writing. */
async function lockIsStale(lockPath: string): Promise<boolean> {
  let owner: unknown;
  try {
    owner = JSON.parse(await readFile(lockPath, 'utf8'));
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false; // released meanwhile: retry at once
    owner = undefined; // being written right now, or garbage: judged by its age below
  }
  if (isRecord(owner) && typeof owner.pid === 'number' && typeof owner.time === 'number') {
    return !ownerRunning(owner.pid) || Date.now() - owner.time > STALE_LOCK_MS;
  }
  try {
    return Date.now() - (await stat(lockPath)).mtimeMs > STALE_LOCK_MS;
  } catch {
    return false;
  }
}

/**
 * Runs `action` while holding `<file>.toolpin-lock`. Rejects with {@link FileLockTimeout} when the
 * lock stays held by a live owner for `timeoutMs`. The lock is removed however `action` ends.
 */
export async function withFileLock<T>(file: string, action: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  // Two links to one file share one lock: it is named after the file the links lead to.
  const lockPath = `${await realpath(file).catch(() => file)}.toolpin-lock`;
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx');
      try {
        await handle.writeFile(JSON.stringify({ pid: process.pid, time: Date.now() } satisfies LockOwner));
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
    if (await lockIsStale(lockPath)) {
      // Two processes may both find the lock stale; unlinking is harmless for the second one,
      // and only one of them wins the O_EXCL create that follows.
      await rm(lockPath, { force: true });
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

/**
 * Replaces `file` with `text` in one rename: a reader sees the old text or the new one, never a
 * mix, and a crash leaves at most a temporary `.<name>.toolpin-*.tmp` file beside it. A new file
 * gets the default mode; an existing one keeps its mode.
 */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  let target = file;
  let mode: number | undefined;
  try {
    target = await realpath(file);
    mode = (await stat(target)).mode & 0o7777;
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.toolpin-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  try {
    const handle = await open(temporary, 'wx', mode ?? 0o666);
    try {
      await handle.writeFile(text, 'utf8');
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
