/**
 * The one way Toolpin reads a file: regular files only, opened without blocking.
 *
 * Contract:
 * - A path is opened with O_NONBLOCK (where the platform has it; for a regular file it changes
 *   nothing) and checked on the open descriptor, which no rename can swap. A named pipe would
 *   otherwise block the open until some writer appears (a synchronous read froze the whole
 *   process; an asynchronous one held a thread of the pool for ever), and a device never ends.
 * - Anything but a regular file (a folder, a FIFO, a socket, a device) is refused with
 *   {@link NotARegularFile}, whose message says what the path is and that it was skipped; the
 *   caller says so to the user (a `check` issue, a line on standard error, the server's log).
 * - Every other failure is the system's own error (ENOENT, EACCES, …), unchanged.
 *
 * A unit test (test/unit/regularFileReads.test.ts) scans server/src and fails when another module
 * reads a file by itself; the few exceptions are named there with their reasons.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';

/** What a path that is not a regular file is, in words. */
export function fileKind(info: Stats): string {
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a named pipe (FIFO)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/** Thrown for a path that is not a regular file; its message says what it is instead. */
export class NotARegularFile extends Error {
  /** A code of its own, so that callers that sort errors by `code` can tell it apart. */
  readonly code = 'ENOTREG';
  constructor(
    readonly file: string,
    readonly kind: string,
  ) {
    super(`not a regular file (${kind}); skipped`);
    this.name = 'NotARegularFile';
  }
}

/**
 * True for a {@link NotARegularFile}, by its code rather than its class: the CLI's two bundles
 * (dist/cli.js and dist/commands.js) each hold a copy of this module, so `instanceof` would miss
 * an error thrown by the other's copy.
 */
export function isNotARegularFile(error: unknown): error is NotARegularFile {
  return error instanceof Error && 'code' in error && error.code === 'ENOTREG';
}

export interface RegularFileOptions {
  /** Refuse a symbolic link itself (O_NOFOLLOW, where the platform has it) instead of following it. */
  readonly noFollow?: boolean;
}

function openFlags(options: RegularFileOptions | undefined): number {
  return constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (options?.noFollow ? (constants.O_NOFOLLOW ?? 0) : 0);
}

/** Opens `file` for reading when it is a regular file (see the contract); the caller closes the handle. */
export async function openRegularFile(file: string, options?: RegularFileOptions): Promise<FileHandle> {
  const handle = await open(file, openFlags(options));
  let info: Stats;
  try {
    info = await handle.stat();
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (!info.isFile()) {
    await handle.close();
    throw new NotARegularFile(file, fileKind(info));
  }
  return handle;
}

/** The bytes of a regular file. */
export async function readRegularFile(file: string, options?: RegularFileOptions): Promise<Buffer> {
  const handle = await openRegularFile(file, options);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** The text (UTF-8) of a regular file. */
export async function readRegularText(file: string, options?: RegularFileOptions): Promise<string> {
  return (await readRegularFile(file, options)).toString('utf8');
}

/**
 * The bytes of a regular file, read synchronously (for callers with nothing else to do meanwhile,
 * and the code cache, which runs inside `require`). `accept` may refuse a regular file by its
 * status (an owner check): the result is then undefined.
 */
export function readRegularFileSync(file: string, options?: RegularFileOptions & { readonly accept?: (info: Stats) => boolean }): Buffer | undefined {
  const descriptor = openSync(file, openFlags(options));
  try {
    const info = fstatSync(descriptor);
    if (!info.isFile()) throw new NotARegularFile(file, fileKind(info));
    if (options?.accept && !options.accept(info)) return undefined;
    return readFileSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

/** The text (UTF-8) of a regular file, read synchronously. */
export function readRegularTextSync(file: string, options?: RegularFileOptions): string {
  // Without `accept`, the read either returns the bytes or throws: the fallback is never taken.
  return (readRegularFileSync(file, options) ?? Buffer.alloc(0)).toString('utf8');
}
