/**
 * Reading one dispatch-history event log (`*.events.jsonl`, docs/formats.md §7) into the pure
 * {@link HistoryModel}: the file side of the read model, with nothing else loaded (discovery and
 * sets of logs are in ./logReader.ts, which re-exports all of this).
 *
 * - {@link LogReader} reads one log incrementally. It remembers how far it read, the file's
 *   identity (device + inode) and a hash of its first bytes. On growth it reads only the appended
 *   bytes (positioned reads in 256 KiB chunks). A last line without a line end is held back (and
 *   reported as torn) until an append completes it. Truncation (the file is shorter than what was
 *   read) and rotation (another inode, or the first bytes changed: rename + recreate, copy +
 *   truncate + regrow) drop the log's contribution to the model and read it again from byte 0.
 * - {@link LogReader.streamExecutions} re-reads the log to yield every execution of one
 *   (server, tool, schemaHash), for when more are wanted than the K the model keeps in memory.
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { openRegularFile } from '../io/regularFile';
import { DEFAULT_LOG_GLOB } from '../core/documents/kinds/eventLog';
import { type Execution, forEachLine, type HistoryKey, type HistoryModel, type LinePosition, parseEventLine } from '../core/history/history';

// Logs are opened as every file is (regular files only, without blocking): io/regularFile.ts.
export { fileKind, NotARegularFile } from '../io/regularFile';

/** The default log glob, the event-log kind's (core/documents/kinds/eventLog.ts). */
export { DEFAULT_LOG_GLOB };
/** Decoded strings are kept below V8's large-object size (see {@link splitLines}). */
const SEGMENT_BYTES = 64 * 1024;
const EMPTY = Buffer.alloc(0);
const DEFAULT_CHUNK_BYTES = 256 * 1024;

export interface LogReaderOptions {
  /**
   * Bytes per read (default 256 KiB). Two buffers of this size are live while a log is read; 1 MiB
   * chunks cost about 5 MiB more peak memory than 256 KiB (measured over 100,000 events) and were
   * no faster.
   */
  readonly chunkSize?: number;
  /** How many first bytes identify the file's content (default 1024). */
  readonly headBytes?: number;
  /** A line longer than this is skipped as `too-long` instead of being held (default 64 MiB). */
  readonly maxLineBytes?: number;
}

export type ResetReason = 'truncated' | 'rotated';

export interface UpdateResult {
  /** Bytes of log content read by this update (the head check is counted apart). */
  readonly bytesRead: number;
  /** Bytes read to compare the file's first bytes with the remembered ones. */
  readonly headBytesRead: number;
  /** Set when the log was dropped and read again from the start. */
  readonly reset: ResetReason | undefined;
  /** Set when the file is gone (its contribution was removed from the model). */
  readonly missing: boolean;
  /** The file's size when this update looked. */
  readonly size: number;
}

interface Identity {
  readonly dev: number;
  readonly ino: number;
}

/** Reads one log file into a model, incrementally. Updates are serialized. */
export class LogReader {
  private readonly chunkSize: number;
  private readonly headBytes: number;
  private readonly maxLineBytes: number;
  private identity: Identity | undefined;
  /** Bytes read so far: complete lines plus the held-back partial line. */
  private readOffset = 0;
  /** Where the next complete line starts, and its number. */
  private next: LinePosition = { line: 1, offset: 0 };
  /** The bytes of a line not yet ended (torn, or still being written). */
  private partial: Buffer = EMPTY;
  /** True while skipping the rest of a line longer than `maxLineBytes`. */
  private skipping = false;
  private headLength = 0;
  private headHash = '';
  private queue: Promise<unknown> = Promise.resolve();
  /** The model's generation this log was read under (see HistoryModel.generation); -1: none. */
  private generation = -1;
  /** Totals over the reader's life, for tests and benchmarks. */
  totalBytesRead = 0;

  constructor(
    readonly file: string,
    /** The log's id in the model (and in reports). */
    readonly log: string,
    private readonly model: HistoryModel,
    options: LogReaderOptions = {},
  ) {
    this.chunkSize = Math.max(64, options.chunkSize ?? DEFAULT_CHUNK_BYTES);
    this.headBytes = Math.max(1, options.headBytes ?? 1024);
    this.maxLineBytes = Math.max(1, options.maxLineBytes ?? 64 * 1024 * 1024);
  }

  /** Bytes consumed into complete lines (what {@link streamExecutions} re-reads). */
  get completeBytes(): number {
    return this.next.offset;
  }

  /** Reads whatever was appended since the last update (everything, the first time). */
  update(): Promise<UpdateResult> {
    const run = this.queue.then(() => this.updateNow());
    this.queue = run.catch(() => undefined);
    return run;
  }

  private forget(): void {
    this.identity = undefined;
    this.readOffset = 0;
    this.next = { line: 1, offset: 0 };
    this.partial = EMPTY;
    this.skipping = false;
    this.headLength = 0;
    this.headHash = '';
  }

  private async updateNow(): Promise<UpdateResult> {
    // The model dropped every log's executions (another log was truncated, rotated or removed):
    // this log is read again from its start.
    if (this.generation !== this.model.generation) this.forget();
    let handle: FileHandle;
    try {
      handle = await openRegularFile(this.file);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') {
        this.forget();
        this.model.removeLog(this.log);
        return { bytesRead: 0, headBytesRead: 0, reset: undefined, missing: true, size: 0 };
      }
      throw error;
    }
    try {
      const info = await handle.stat();
      let reset: ResetReason | undefined;
      let headBytesRead = 0;
      if (this.identity && (this.identity.dev !== info.dev || this.identity.ino !== info.ino)) reset = 'rotated';
      else if (info.size < this.readOffset) reset = 'truncated';
      else if (this.headLength > 0) {
        const head = await readRange(handle, 0, this.headLength);
        headBytesRead = head.length;
        if (hashOf(head) !== this.headHash) reset = 'rotated';
      }
      if (reset) {
        this.forget();
        this.model.resetLog(this.log);
      } else if (!this.identity) {
        this.model.resetLog(this.log);
      }
      this.identity = { dev: info.dev, ino: info.ino };
      this.generation = this.model.generation;

      const bytesRead = await this.readTail(handle, info.size);
      if (this.headLength < this.headBytes && info.size > this.headLength) {
        const head = await readRange(handle, 0, Math.min(this.headBytes, info.size));
        headBytesRead += head.length;
        this.headLength = head.length;
        this.headHash = hashOf(head);
      }
      this.model.setTorn(this.log, this.partial.length > 0 && !this.skipping ? this.next : undefined);
      return { bytesRead, headBytesRead, reset, missing: false, size: info.size };
    } finally {
      await handle.close();
    }
  }

  /**
   * Reads [readOffset, size) in chunks and folds every completed line. Two buffers: the next chunk
   * is being read while the current one is folded, so the disk and the CPU work at the same time.
   */
  private async readTail(handle: FileHandle, size: number): Promise<number> {
    let total = 0;
    const buffers = [Buffer.allocUnsafe(this.chunkSize), Buffer.allocUnsafe(this.chunkSize)];
    let position = this.readOffset;
    let turn = 0;
    const readNext = (): Promise<{ bytesRead: number; buffer: Buffer; want: number }> | undefined => {
      if (position >= size) return undefined;
      const buffer = buffers[turn++ % 2]!;
      const want = Math.min(this.chunkSize, size - position);
      const reading = handle.read(buffer, 0, want, position).then((result) => ({ ...result, want }));
      position += want;
      return reading;
    };
    let pending = readNext();
    while (pending) {
      const { bytesRead, buffer, want } = await pending;
      // A short read means the file shrank meanwhile: stop; the next update sees the truncation.
      const short = bytesRead < want;
      // The other buffer is free: its chunk was folded before this one was awaited.
      pending = short ? undefined : readNext();
      this.readOffset += bytesRead;
      total += bytesRead;
      this.totalBytesRead += bytesRead;
      if (bytesRead > 0) this.consume(buffer.subarray(0, bytesRead));
    }
    return total;
  }

  /** Takes a chunk of bytes that follows everything consumed so far. */
  private consume(chunk: Buffer): void {
    let start = 0;
    if (this.skipping) {
      const end = chunk.indexOf(10);
      if (end < 0) return;
      // The over-long line ends here; it was recorded when skipping began.
      this.next = { line: this.next.line + 1, offset: this.readOffset - chunk.length + end + 1 };
      this.skipping = false;
      start = end + 1;
    }
    if (this.partial.length > 0) {
      // Complete the held line on its own (a small copy), then go on without copying the chunk.
      const end = chunk.indexOf(10, start);
      if (end < 0) {
        this.hold(chunk.subarray(start));
        return;
      }
      const completed = Buffer.concat([this.partial, chunk.subarray(start, end + 1)]);
      this.partial = EMPTY;
      this.foldBytes(completed);
      start = end + 1;
    }
    const last = chunk.lastIndexOf(10);
    if (last >= start) {
      this.foldBytes(chunk.subarray(start, last + 1));
      start = last + 1;
    }
    this.hold(chunk.subarray(start));
  }

  /** Holds the start of an unfinished line (a copy: the read buffer is reused). */
  private hold(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.partial.length + bytes.length > this.maxLineBytes) {
      this.model.recordProblem(this.log, {
        line: this.next.line,
        offset: this.next.offset,
        reason: 'too-long',
        message: `the line is longer than ${this.maxLineBytes} bytes; it is skipped`,
      });
      this.partial = EMPTY;
      this.skipping = true;
      return;
    }
    this.partial = this.partial.length > 0 ? Buffer.concat([this.partial, bytes]) : Buffer.from(bytes);
  }

  /**
   * Folds bytes that end with a line end. The model reads them as bytes (`foldLineBytes`: exact
   * byte offsets, no string per common line) during the call only, so `bytes` may be a view of a
   * read buffer that is reused afterwards.
   */
  private foldBytes(bytes: Buffer): void {
    this.next = this.model.foldLineBytes(this.log, bytes, this.next);
  }

  /**
   * Every execution at one (server, tool, schemaHash) in the part of the log that was read
   * (complete lines only), re-read from the file in order. Throws when the file is no longer the
   * one that was read (rotated or truncated since): call {@link update} first.
   */
  async *streamExecutions(key: HistoryKey): AsyncIterable<Execution> {
    const handle = await openRegularFile(this.file);
    try {
      const info = await handle.stat();
      const end = this.next.offset;
      if (!this.identity || info.dev !== this.identity.dev || info.ino !== this.identity.ino || info.size < end) {
        throw new Error(`${this.file} changed since it was read (rotated or truncated); update before streaming`);
      }
      const buffer = Buffer.allocUnsafe(this.chunkSize);
      let position: LinePosition = { line: 1, offset: 0 };
      let carry: Buffer = EMPTY;
      let readAt = 0;
      const found: Execution[] = [];
      const visit = (text: string, line: number, offset: number): void => {
        if (!text.includes(key.schemaHash)) return; // cheap pre-filter before JSON.parse
        const parsed = parseEventLine(text, { line, offset });
        if (parsed.kind !== 'dispatch') return;
        const event = parsed.event;
        if (event.server === key.server && event.toolName === key.tool && event.schemaHash === key.schemaHash) found.push({ ...event, log: this.log });
      };
      while (readAt < end) {
        const { bytesRead } = await handle.read(buffer, 0, Math.min(this.chunkSize, end - readAt), readAt);
        if (bytesRead === 0) break;
        readAt += bytesRead;
        const chunk = buffer.subarray(0, bytesRead);
        let start = 0;
        if (carry.length > 0) {
          const lineEnd = chunk.indexOf(10);
          if (lineEnd < 0) {
            carry = Buffer.concat([carry, chunk]);
            continue;
          }
          position = foldLines(Buffer.concat([carry, chunk.subarray(0, lineEnd + 1)]), position, visit);
          carry = EMPTY;
          start = lineEnd + 1;
        }
        const last = chunk.lastIndexOf(10);
        if (last >= start) {
          position = foldLines(chunk.subarray(start, last + 1), position, visit);
          start = last + 1;
        }
        if (start < chunk.length) carry = Buffer.from(chunk.subarray(start));
        for (const execution of found) yield execution;
        found.length = 0;
      }
    } finally {
      await handle.close();
    }
  }
}

/**
 * Decodes bytes that end with a line end, in segments of about {@link SEGMENT_BYTES} cut at line
 * ends: strings that small stay in V8's young generation (a 1 MiB string is a "large object" that
 * only a full GC frees, which costs both time and peak memory). A segment that is valid UTF-8 (the
 * usual case) goes to `text` whole, with its byte length, so the core computes exact byte offsets;
 * one with invalid UTF-8 is decoded line by line (`line`) so offsets stay exact anyway.
 */
function splitLines(
  bytes: Buffer,
  start: LinePosition,
  text: (text: string, start: LinePosition, byteLength: number) => LinePosition,
  line: (text: string, line: number, offset: number) => void,
): LinePosition {
  let position = start;
  let from = 0;
  while (from < bytes.length) {
    let to = Math.min(from + SEGMENT_BYTES, bytes.length);
    if (to < bytes.length) {
      const end = bytes.lastIndexOf(10, to - 1);
      to = end >= from ? end + 1 : bytes.indexOf(10, to) + 1;
    }
    const segment = bytes.subarray(from, to);
    const decoded = segment.toString('utf8');
    if (decoded.length === segment.length || Buffer.byteLength(decoded) === segment.length) {
      // Each byte is one UTF-16 unit (ASCII), or re-encoding gives the same bytes: offsets computed
      // from the text are the file's byte offsets.
      position = text(decoded, position, segment.length);
    } else {
      let lineFrom = 0;
      while (lineFrom < segment.length) {
        const end = segment.indexOf(10, lineFrom);
        let contentEnd = end;
        if (contentEnd > lineFrom && segment[contentEnd - 1] === 13) contentEnd--;
        line(segment.toString('utf8', lineFrom, contentEnd), position.line, position.offset);
        position = { line: position.line + 1, offset: position.offset + (end + 1 - lineFrom) };
        lineFrom = end + 1;
      }
    }
    from = to;
  }
  return position;
}

/** Splits bytes that end with a line end into lines with exact byte offsets. */
function foldLines(bytes: Buffer, start: LinePosition, visit: (text: string, line: number, offset: number) => void): LinePosition {
  return splitLines(bytes, start, (text, at, byteLength) => forEachLine(text, at, visit, byteLength), visit);
}

async function readRange(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, offset + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

function hashOf(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The `code` of a Node system error (`ENOENT`…), or undefined for anything else. */
export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}
