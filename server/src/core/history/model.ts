/**
 * Dispatch history, the model: `MCP_DISPATCHED` events folded, as text or as the log's bytes, into
 * one bounded state per (server, tool, schemaHash) shared by all logs (an exact count, the first
 * and last execution, the K most recent), and each log's counters and problems. See ./history.ts.
 */
import { ByteTable } from './byteTable';
import { parseCanonicalTimeBytes, SCAN_DISPATCH, SCAN_OTHER, ScannedEvent, scanEventBytes } from './eventBytes';
import { checkLine, Execution, forEachLine, LinePosition, LineProblem, LineScratch, MAX_INTERNED, schemaHashProblem } from './events';
import { type EntrySlots, type HistoryKey, type KeySummary, LazyExecutions } from './summaries';

export { sortNewestFirst, type HistoryKey, type KeySummary } from './summaries';

/** What a log's last line without a line end is reported as; the team store reports the same (store/storeIngest.ts). */
export const TORN_LINE_MESSAGE = 'the last line has no line end (torn or still being written); it is read once completed';

// Read once: in the one-to-one CommonJS transpile the tests and benchmarks load (out/), every use
// of an imported binding is a call of a getter, which the byte path would make several times per line.
const scanLine = scanEventBytes;
const canonicalTimeOf = parseCanonicalTimeBytes;
const SCANNED_DISPATCH = SCAN_DISPATCH;
const SCANNED_OTHER = SCAN_OTHER;
/**
 * The typed array's own search, also for a Buffer: Buffer#indexOf is a JavaScript wrapper (for
 * strings and encodings) that costs more than the search itself while it is not optimized.
 */
const indexOfByte = Uint8Array.prototype.indexOf;
/** The same for the string path's line check, called once per line. */
const checkEventLine = checkLine;

/** How many recent executions each (server, tool, schemaHash) keeps in memory by default. */
export const DEFAULT_RECENT_LIMIT = 20;
/** How many line problems each log keeps (all are counted). */
export const DEFAULT_MAX_PROBLEMS_PER_LOG = 100;

// ---------------------------------------------------------------------------------------------
// The model

/** First/last seen of a hash: the execution's time and sequence. */
export interface SeenAt {
  readonly at: string;
  readonly seq: number;
}

/**
 * Execution ids of at most this many characters, all of them Latin-1 (U+0000–U+00FF, which covers
 * ULIDs, UUIDs and every ASCII id), are kept as bytes in their log's {@link IdPool}; others as
 * strings. Why: a ring slot keeps its id for thousands of events, long enough for the string to be
 * promoted to V8's old generation and then dropped there when the slot is reused. Over a million
 * events that garbage grew the young generation to its maximum and the heap by tens of MiB; bytes
 * written in place into one array leave no garbage.
 */
const ID_CELL = 64;

/** Cells per page of an {@link IdPool} (16 KiB pages). */
const ID_PAGE_CELLS = 256;

/**
 * Fixed cells of {@link ID_CELL} bytes, one per slot of a log, in pages that are never copied nor
 * freed while the log is kept. One array grown by doubling held up to twice the bytes in use, and
 * both copies while it grew (3 MiB at the peak for 1 MiB of ids).
 */
class IdPool {
  private page = new Uint8Array(0);
  private used = 0;

  /** A new cell: the page that holds it and its byte offset there. */
  allocate(): { readonly page: Uint8Array; readonly cell: number } {
    if (this.used === this.page.length) {
      this.page = new Uint8Array(ID_CELL * ID_PAGE_CELLS);
      this.used = 0;
    }
    const cell = this.used;
    this.used += ID_CELL;
    return { page: this.page, cell };
  }
}

/**
 * One execution as the model keeps it: mutable and reused (a ring slot is overwritten in place), so
 * that folding a million events allocates nothing that outlives its line except the strings kept.
 */
class Slot {
  seq = 0;
  /**
   * Times exceed the small-integer range, so the field starts as a double (NaN, never read before
   * it is set): starting at 0 made V8 widen the field on the first time written, replacing the
   * object shape and throwing away the optimized code of the fold ("wrong map").
   */
  atMs = Number.NaN;
  /** Null when `at` was canonical (`new Date(atMs).toISOString()` gives it back). */
  at: string | null = null;
  /** The execution id's length when its bytes are in the pool at `cell`; -1 when it is `idText`. */
  idLength = -1;
  idText = '';
  blueprint: string | null = null;
  stepId: string | null = null;
  line = 0;
  offset = 0;
  /** The model's count of dispatches folded when this slot was last written (see HistoryModel.sharedUpTo). */
  written = 0;
  /** The log the execution was read from. */
  log = '';

  constructor(
    /** The page of the slot's id cell, and the cell's offset in it. */
    private readonly bytes: Uint8Array,
    private readonly cell: number,
  ) {}

  /** A new slot with a new cell of the pool. */
  static inPool(pool: IdPool): Slot {
    const { page, cell } = pool.allocate();
    return new Slot(page, cell);
  }

  /**
   * Leaves this slot as it is, for the summaries that may read it, and returns a new slot in its id
   * cell to be written instead (this slot's id moves into a string, so the cell is free).
   */
  detach(): Slot {
    if (this.idLength >= 0) {
      this.idText = this.executionId();
      this.idLength = -1;
    }
    return new Slot(this.bytes, this.cell);
  }

  setExecutionId(id: string): void {
    const length = id.length;
    if (length <= ID_CELL) {
      const bytes = this.bytes;
      const cell = this.cell;
      let index = 0;
      for (; index < length; index++) {
        const code = id.charCodeAt(index);
        if (code > 0xff) break;
        bytes[cell + index] = code;
      }
      if (index === length) {
        this.idLength = length;
        this.idText = '';
        return;
      }
    }
    this.idLength = -1;
    this.idText = id;
  }

  /** {@link setExecutionId} of ASCII bytes (each byte one character), at most {@link ID_CELL} of them. */
  setExecutionIdBytes(source: Uint8Array, start: number, end: number): void {
    const bytes = this.bytes;
    const cell = this.cell;
    for (let index = start; index < end; index++) bytes[cell + index - start] = source[index]!;
    this.idLength = end - start;
    this.idText = '';
  }

  executionId(): string {
    if (this.idLength < 0) return this.idText;
    // One flat string from the cell's bytes (each byte is one Latin-1 code). Concatenating
    // character by character made a rope of ~20 cons strings per id, which survived into the old
    // generation with the summaries that hold it: most of the cost of keys() was that garbage.
    const text: string = Reflect.apply(String.fromCharCode, undefined, this.bytes.subarray(this.cell, this.cell + this.idLength));
    return text;
  }

  copyFrom(other: Slot): void {
    this.seq = other.seq;
    this.atMs = other.atMs;
    this.at = other.at;
    this.idLength = other.idLength;
    this.idText = other.idText;
    // A loop, not set(subarray(…)): ids are short, and a subarray is an object per copy.
    const to = this.bytes;
    const from = other.bytes;
    for (let index = 0, length = other.idLength; index < length; index++) to[this.cell + index] = from[other.cell + index]!;
    this.blueprint = other.blueprint;
    this.stepId = other.stepId;
    this.line = other.line;
    this.offset = other.offset;
    this.log = other.log;
  }

  toExecution(key: HistoryKey): Execution {
    return {
      line: this.line,
      offset: this.offset,
      seq: this.seq,
      at: this.at ?? new Date(this.atMs).toISOString(),
      atMs: this.atMs,
      executionId: this.executionId(),
      blueprint: this.blueprint,
      stepId: this.stepId,
      server: key.server,
      toolName: key.tool,
      schemaHash: key.schemaHash,
      log: this.log,
    };
  }
}

/** Later by time, then by sequence. */
function laterSlot(a: Slot, b: Slot): boolean {
  return a.atMs > b.atMs || (a.atMs === b.atMs && a.seq > b.seq);
}

/** Newest first, as {@link newestFirst} orders the executions the slots become. */
function newestSlotFirst(a: Slot, b: Slot): number {
  return b.atMs - a.atMs || b.seq - a.seq || (a.log < b.log ? -1 : a.log > b.log ? 1 : 0) || b.line - a.line;
}

interface KeyEntry {
  count: number;
  /**
   * The first and last execution by time: a ring slot while it is in the ring (no copy per event;
   * events mostly come in time order, so the newest slot is usually the last), copied into the
   * entry's own `first` / `last` slot just before the ring reuses it, or kept as it is when the
   * ring detaches it for a summary (copy on write: a detached slot is never written again).
   */
  firstRef: Slot;
  lastRef: Slot;
  first: Slot;
  last: Slot;
  /**
   * A ring of the most recent executions of one log (`ringLog`) in append order; `next` is the
   * oldest once full. When an execution of another log comes, the ring is merged into `merged`.
   */
  recent: Slot[];
  next: number;
  ringLog: string;
  /**
   * The K newest executions (by time, then sequence, log and line) of the rings of the logs folded
   * before `ringLog`: the top K of a union is the top K of the top K of its parts, so a key keeps at
   * most 2K executions however many logs it is in.
   */
  merged: Slot[];
  /** Slots dropped from `merged`, whose id cells the ring reuses (the pool never frees a cell). */
  readonly spare: Slot[];
}

/** Counters of one log. `lines` counts every line read (blank lines and problems included). */
export interface LogCounters {
  lines: number;
  blank: number;
  /** `MCP_DISPATCHED` events folded into the model. */
  dispatched: number;
  /** Events of every other type, skipped. */
  skipped: number;
  /** Lines that are not a readable event (every reason but `torn`). */
  malformed: number;
  /** 1 while the log ends in a line without a line end, else 0. */
  torn: number;
}

export interface LogStats extends LogCounters {
  readonly log: string;
  /** The first problems (up to the model's limit), then the torn line if any; all are counted. */
  readonly problems: readonly LineProblem[];
}

/** Keys (server, tool, schemaHash) each log finds by their bytes at most (see LogFold.keysByBytes). */
const MAX_KEYS_BY_BYTES = 16_384;

/**
 * UTF-8 as the reader decodes it (Buffer#toString: invalid sequences become U+FFFD, a byte-order
 * mark is kept, not stripped). A decoded string is flat and of its own, never a slice of a larger
 * one (which would keep the larger one alive).
 */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

function decodeUtf8(bytes: Uint8Array, start: number, end: number): string {
  // A plain view, not `subarray`: on a Buffer that makes a Buffer through its species, a slower
  // path that the first thousands of lines (before the optimizing compiler) feel.
  return UTF8.decode(new Uint8Array(bytes.buffer, bytes.byteOffset + start, end - start));
}

/** A new, empty entry for a key of `keys` (its maps so far given, when they exist). */
function addEntry(keys: KeyState, tools: Map<string, Map<string, KeyEntry>> | undefined, hashes: Map<string, KeyEntry> | undefined, server: string, tool: string, hash: string): KeyEntry {
  if (!tools) keys.entries.set(server, (tools = new Map()));
  if (!hashes) tools.set(tool, (hashes = new Map()));
  const first = Slot.inPool(keys.ids);
  const last = Slot.inPool(keys.ids);
  const entry: KeyEntry = { count: 0, firstRef: first, lastRef: last, first, last, recent: [], next: 0, ringLog: '', merged: [], spare: [] };
  hashes.set(hash, entry);
  return entry;
}

/**
 * The state per (server, tool, schemaHash), shared by all logs: one entry per key however many
 * logs hold it (daily or per-run logs repeat the same keys), so memory is bounded by the keys and
 * K, not by the number of logs.
 */
class KeyState {
  readonly entries = new Map<string, Map<string, Map<string, KeyEntry>>>();
  /**
   * The same entries by the bytes of (server, tool, schemaHash), for the byte path: filled as it
   * meets keys, bounded (a key beyond the bound is found through `entries` each time).
   */
  readonly keysByBytes = new ByteTable<KeyEntry>(MAX_KEYS_BY_BYTES, MAX_KEYS_BY_BYTES * 64);
  readonly ids = new IdPool();
}

/** One log's counters and problems (the executions are in the shared {@link KeyState}). */
class LogFold {
  /** True once the log contributed a dispatch (dropping it then needs every log read again). */
  contributed = false;
  readonly counters: LogCounters = { lines: 0, blank: 0, dispatched: 0, skipped: 0, malformed: 0, torn: 0 };
  readonly problems: LineProblem[] = [];
  torn: LineProblem | undefined;
}

export interface HistoryModelOptions {
  /** K: the most recent executions kept in memory per (server, tool, schemaHash). Default 20. */
  readonly recentLimit?: number;
  /** Line problems kept per log (all are counted). Default 100. */
  readonly maxProblemsPerLog?: number;
}

/**
 * The dispatch-history read model. Logs are folded in line by line, from any source, into one
 * state per (server, tool, schemaHash) shared by all logs; each log keeps only its counters and
 * problems. Folding logs one after another gives the same summaries as keeping each log's K most
 * recent executions apart and merging them: a key's ring holds the K last appended of the log
 * being folded, merged into the key's K newest when another log's execution comes.
 *
 * Dropping a log that contributed executions (truncation, rotation, removal) cannot be undone in
 * a bounded state: it clears the executions of every log and advances {@link generation}, and the
 * reader (server/src/history) reads every log again from its start. Logs without executions are
 * dropped on their own.
 */
export class HistoryModel {
  readonly recentLimit: number;
  private readonly maxProblems: number;
  private readonly folds = new Map<string, LogFold>();
  private state = new KeyState();
  private generationCount = 0;
  private readonly knownHashes = new Set<string>();
  private readonly interned = new Map<string, string>();
  private readonly scratch = new LineScratch();
  /** Where the byte scanner leaves a dispatch's fields, reused line after line. */
  private readonly scanned = new ScannedEvent();
  /**
   * Blueprint names and step ids by their bytes (see {@link textOfBytes}): as many distinct values
   * as the interned strings, and at most 1 MiB of their bytes.
   */
  private readonly texts = new ByteTable<string>(MAX_INTERNED, 1024 * 1024);
  /** Dispatches folded so far: each slot written records the count (`Slot.written`). */
  private writes = 0;
  /**
   * The count of dispatches when a summary was last handed out: a slot written at or before it may
   * be read by a summary not yet built, so a fold never changes it but writes a detached copy
   * instead (copy on write, see {@link merge}). -1: no summary handed out.
   */
  private sharedUpTo = -1;

  constructor(options: HistoryModelOptions = {}) {
    this.recentLimit = Math.max(1, Math.floor(options.recentLimit ?? DEFAULT_RECENT_LIMIT));
    this.maxProblems = Math.max(0, Math.floor(options.maxProblemsPerLog ?? DEFAULT_MAX_PROBLEMS_PER_LOG));
  }

  private fold(log: string): LogFold {
    let fold = this.folds.get(log);
    if (!fold) {
      fold = new LogFold();
      this.folds.set(log, fold);
    }
    return fold;
  }

  /**
   * Folds the complete lines in `text`, the first of which starts at `start` (see
   * {@link forEachLine}); returns the position after them. `byteLength` is optional (see there).
   */
  foldText(log: string, text: string, start: LinePosition, byteLength?: number): LinePosition {
    const fold = this.fold(log);
    return forEachLine(text, start, (line, number, offset) => this.foldInto(fold, log, line, number, offset), byteLength);
  }

  /** Folds one complete line (without its line end) read at `position`. */
  foldLine(log: string, text: string, position: LinePosition): void {
    this.foldInto(this.fold(log), log, text, position.line, position.offset);
  }

  /** Records a problem found by the reader itself (e.g. `too-long`) as one line of the log. */
  recordProblem(log: string, found: LineProblem): void {
    const fold = this.fold(log);
    fold.counters.lines++;
    this.addProblem(fold, found);
  }

  /**
   * Says whether the log currently ends in a torn line (no line end yet): `undefined` when it
   * does not. A torn line is reported, never folded; when an append completes it, the reader
   * folds the whole line and clears this.
   */
  setTorn(log: string, torn: LinePosition | undefined): void {
    const fold = this.fold(log);
    fold.torn = torn ? { line: torn.line, offset: torn.offset, reason: 'torn', message: TORN_LINE_MESSAGE } : undefined;
    fold.counters.torn = torn ? 1 : 0;
  }

  /**
   * Advanced each time the model dropped the executions of every log (see the class comment): a
   * reader that read a log under an older generation reads it again from its start.
   */
  get generation(): number {
    return this.generationCount;
  }

  /** Drops everything a log contributed (before reading it again from the start). */
  resetLog(log: string): void {
    this.dropExecutionsOf(log);
    this.folds.set(log, new LogFold());
  }

  /** Forgets a log altogether. */
  removeLog(log: string): void {
    this.dropExecutionsOf(log);
    this.folds.delete(log);
  }

  /** When `log` contributed executions: drops every log's (counters included) for a new generation. */
  private dropExecutionsOf(log: string): void {
    if (!this.folds.get(log)?.contributed) return;
    this.state = new KeyState();
    for (const name of this.folds.keys()) this.folds.set(name, new LogFold());
    this.generationCount++;
  }

  logs(): string[] {
    return [...this.folds.keys()].sort();
  }

  logStats(log: string): LogStats {
    const fold = this.folds.get(log) ?? new LogFold();
    return { log, ...fold.counters, problems: fold.torn ? [...fold.problems, fold.torn] : [...fold.problems] };
  }

  private addProblem(fold: LogFold, found: LineProblem): void {
    fold.counters.malformed++;
    if (fold.problems.length < this.maxProblems) fold.problems.push(found);
  }

  /** A short string repeated across events (blueprint, step id) as one shared copy, up to a bound. */
  private intern(text: string | undefined): string | null {
    return text === undefined ? null : this.internText(text);
  }

  private internText(text: string): string {
    const known = this.interned.get(text);
    if (known !== undefined) return known;
    if (this.interned.size < MAX_INTERNED) this.interned.set(text, text);
    return text;
  }

  private foldInto(fold: LogFold, log: string, text: string, line: number, offset: number): void {
    fold.counters.lines++;
    const scratch = this.scratch;
    // The schema hash is checked only for a key the log has no entry for yet: an entry is only
    // ever made for a well-formed hash, so the common case skips a lookup of the fresh string.
    const found = checkEventLine(text, line, offset, undefined, scratch, false);
    if (found) {
      if (found.kind === 'blank') fold.counters.blank++;
      else if (found.kind === 'other') fold.counters.skipped++;
      else if (found.kind === 'problem') this.addProblem(fold, found.problem);
      return;
    }
    const server = scratch.server;
    const tool = scratch.toolName;
    const hash = scratch.schemaHash;
    const state = this.state;
    const tools = state.entries.get(server);
    const hashes = tools?.get(tool);
    let entry = hashes?.get(hash);
    if (!entry) {
      const malformed = schemaHashProblem(hash, line, offset, this.knownHashes);
      if (malformed) {
        if (malformed.kind === 'problem') this.addProblem(fold, malformed.problem);
        return;
      }
      entry = addEntry(state, tools, hashes, server, tool, hash);
    }
    fold.counters.dispatched++;
    const slot = this.nextSlot(fold, log, entry);
    slot.seq = scratch.seq;
    slot.atMs = scratch.atMs;
    slot.at = scratch.canonicalAt ? null : scratch.at;
    slot.setExecutionId(scratch.executionId);
    slot.blueprint = this.intern(scratch.blueprint);
    slot.stepId = this.intern(scratch.stepId);
    slot.line = line;
    slot.offset = offset;
    slot.log = log;
    this.place(entry, slot);
  }

  /**
   * The slot of `entry`'s ring that the next execution is written to: a new one while the ring is
   * not full, else the oldest, which is first detached when a summary may still read it (copy on
   * write), and whose execution is first copied into the entry's own first or last slot when it
   * is the first or last execution.
   */
  private nextSlot(fold: LogFold, log: string, entry: KeyEntry): Slot {
    fold.contributed = true;
    if (entry.ringLog !== log) this.mergeRing(entry, log);
    let slot: Slot;
    if (entry.recent.length < this.recentLimit) {
      slot = entry.spare.pop() ?? Slot.inPool(this.state.ids);
      entry.recent.push(slot);
      return slot;
    }
    slot = entry.recent[entry.next] = this.release(entry, entry.recent[entry.next]!);
    entry.next = (entry.next + 1) % this.recentLimit;
    return slot;
  }

  /**
   * A slot whose execution the entry no longer keeps, made writable: when a summary may read it,
   * it keeps it (and it stays first or last if it was) and a new slot in the same id cell is
   * returned; else its execution is first copied into the entry's own first or last slot when it
   * is the first or last execution.
   */
  private release(entry: KeyEntry, slot: Slot): Slot {
    if (slot.written <= this.sharedUpTo) return slot.detach();
    if (slot === entry.firstRef) {
      if (entry.first.written <= this.sharedUpTo) entry.first = entry.first.detach();
      entry.first.copyFrom(slot);
      entry.first.written = this.writes + 1;
      entry.firstRef = entry.first;
    }
    if (slot === entry.lastRef) {
      if (entry.last.written <= this.sharedUpTo) entry.last = entry.last.detach();
      entry.last.copyFrom(slot);
      entry.last.written = this.writes + 1;
      entry.lastRef = entry.last;
    }
    return slot;
  }

  /**
   * Another log's execution comes to `entry`: the ring (the last K appended of the log before)
   * joins the merged K newest, and the ring starts empty for `log`. Each ring slot is inserted
   * where it belongs (the merged slots are kept newest first; a log in time order puts its slots
   * at the front after one comparison), and the slots beyond K are released. Slots are moved,
   * never written, and summaries hold copies of both arrays, so a summary still reads what it held.
   */
  private mergeRing(entry: KeyEntry, log: string): void {
    entry.ringLog = log;
    const ring = entry.recent;
    if (ring.length === 0) return;
    const merged = entry.merged;
    const limit = this.recentLimit;
    for (const slot of ring) {
      let index = 0;
      while (index < merged.length && newestSlotFirst(merged[index]!, slot) < 0) index++;
      if (index >= limit) {
        entry.spare.push(this.release(entry, slot));
        continue;
      }
      merged.splice(index, 0, slot);
      if (merged.length > limit) entry.spare.push(this.release(entry, merged.pop()!));
    }
    ring.length = 0;
    entry.next = 0;
  }

  /** Counts the execution just written to `slot` and makes it the entry's first or last if it is. */
  private place(entry: KeyEntry, slot: Slot): void {
    slot.written = ++this.writes;
    if (entry.count === 0) {
      entry.firstRef = slot;
      entry.lastRef = slot;
    } else {
      if (laterSlot(entry.firstRef, slot)) entry.firstRef = slot;
      if (laterSlot(slot, entry.lastRef)) entry.lastRef = slot;
    }
    entry.count++;
  }

  /**
   * Folds the lines in `bytes` (UTF-8), the first of which starts at `start`; returns the position
   * after them. Lines end at `\n` (a `\r` before it is dropped), as in {@link forEachLine}; the
   * buffer should end with a line end (a remainder without one is folded as a line too, as there).
   * Line numbers and byte offsets are counted from the bytes themselves.
   *
   * The same model as {@link foldText} of the decoded text, faster: a line the byte scanner
   * (./eventBytes.ts) answers for is folded from its bytes, its fields found by their bytes in
   * bounded tables ({@link ByteTable}) that hold the strings made for them once; every other line
   * is decoded and read by the string path ({@link foldInto}), which makes every problem. The
   * buffer is only read during the call: the model keeps copies, never the buffer.
   */
  foldLineBytes(log: string, bytes: Uint8Array, start: LinePosition): LinePosition {
    const fold = this.fold(log);
    const length = bytes.length;
    let line = start.line;
    let offset = start.offset;
    let from = 0;
    while (from < length) {
      let end = indexOfByte.call(bytes, 10, from);
      const terminated = end >= 0;
      if (!terminated) end = length;
      const contentEnd = end > from && bytes[end - 1] === 13 ? end - 1 : end;
      this.foldBytesInto(fold, log, bytes, from, contentEnd, line, offset);
      const next = terminated ? end + 1 : end;
      offset += next - from;
      line++;
      from = next;
    }
    return { line, offset };
  }

  /** Folds the line `bytes[start, end)` (without its line end): from its bytes, else as text. */
  private foldBytesInto(fold: LogFold, log: string, bytes: Uint8Array, start: number, end: number, line: number, offset: number): void {
    const outcome = scanLine(bytes, start, end, this.scanned);
    if (outcome === SCANNED_OTHER) {
      fold.counters.lines++;
      fold.counters.skipped++;
      return;
    }
    if (outcome === SCANNED_DISPATCH && this.foldScanned(fold, log, bytes, line, offset)) return;
    this.foldInto(fold, log, start === end ? '' : decodeUtf8(bytes, start, end), line, offset);
  }

  /**
   * Folds the dispatch the scanner found (its fields in `this.scanned`), or returns false having
   * changed nothing when the line has a problem the string path must describe (`at` not a
   * date-time, a malformed schema hash for a key this log has no entry for).
   */
  private foldScanned(fold: LogFold, log: string, bytes: Uint8Array, line: number, offset: number): boolean {
    const event = this.scanned;
    let atMs = canonicalTimeOf(bytes, event.atStart, event.atEnd);
    let at: string | null = null;
    if (Number.isNaN(atMs)) {
      // Not the canonical form: kept as written (a flat string of its own), as the string path does.
      at = decodeUtf8(bytes, event.atStart, event.atEnd);
      atMs = Date.parse(at);
      if (Number.isNaN(atMs)) return false;
    }
    const entry = this.entryOfScanned(bytes, event, line, offset);
    if (entry === undefined) return false;
    const blueprint = event.blueprintStart < 0 ? null : this.textOfBytes(bytes, event.blueprintStart, event.blueprintEnd);
    const stepId = event.stepIdStart < 0 ? null : this.textOfBytes(bytes, event.stepIdStart, event.stepIdEnd);
    fold.counters.lines++;
    fold.counters.dispatched++;
    const slot = this.nextSlot(fold, log, entry);
    slot.seq = event.seq;
    slot.atMs = atMs;
    slot.at = at;
    const idStart = event.executionIdStart;
    const idEnd = event.executionIdEnd;
    if (event.executionIdAscii && idEnd - idStart <= ID_CELL) slot.setExecutionIdBytes(bytes, idStart, idEnd);
    else slot.setExecutionId(decodeUtf8(bytes, idStart, idEnd));
    slot.blueprint = blueprint;
    slot.stepId = stepId;
    slot.line = line;
    slot.offset = offset;
    slot.log = log;
    this.place(entry, slot);
    return true;
  }

  /**
   * The entry of a scanned dispatch's (server, tool, schemaHash): found by the fields' bytes in the
   * log's table, else by their strings in the log's maps, which the string path reads and writes
   * too (so both paths reach the same entries in any order), else made, after its schema hash is
   * checked as the string path checks it. Undefined when that hash is malformed.
   */
  private entryOfScanned(bytes: Uint8Array, event: ScannedEvent, line: number, offset: number): KeyEntry | undefined {
    const s0 = event.serverStart;
    const s1 = event.serverEnd;
    const t0 = event.toolNameStart;
    const t1 = event.toolNameEnd;
    const h0 = event.schemaHashStart;
    const h1 = event.schemaHashEnd;
    const state = this.state;
    const table = state.keysByBytes;
    const found = table.find(bytes, s0, s1, t0, t1, h0, h1);
    if (found >= 0) return table.value(found);
    const server = decodeUtf8(bytes, s0, s1);
    const tool = decodeUtf8(bytes, t0, t1);
    const schemaHash = decodeUtf8(bytes, h0, h1);
    const tools = state.entries.get(server);
    const hashes = tools?.get(tool);
    let entry = hashes?.get(schemaHash);
    if (!entry) {
      if (schemaHashProblem(schemaHash, line, offset, this.knownHashes)) return undefined;
      entry = addEntry(state, tools, hashes, server, tool, schemaHash);
    }
    // When the table is full this key is found by its strings line after line, as above.
    table.add(bytes, s0, s1, t0, t1, h0, h1, entry);
    return entry;
  }

  /**
   * The string of a blueprint name or step id written `bytes[start, end)`: the one made for the
   * same bytes before, else decoded (once per distinct value while the table has room) and
   * shared with the string path's interned copies.
   */
  private textOfBytes(bytes: Uint8Array, start: number, end: number): string {
    const texts = this.texts;
    const found = texts.find(bytes, start, end, 0, 0, 0, 0);
    if (found >= 0) return texts.value(found);
    const text = this.internText(decodeUtf8(bytes, start, end));
    texts.add(bytes, start, end, 0, 0, 0, 0, text);
    return text;
  }

  /** Every (server, tool, schemaHash) with executions, over all logs, sorted by key. */
  keys(): KeySummary[] {
    const summaries: KeySummary[] = [];
    const entries = this.state.entries;
    for (const server of [...entries.keys()].sort()) {
      const tools = entries.get(server)!;
      for (const tool of [...tools.keys()].sort()) {
        const hashes = tools.get(tool)!;
        for (const schemaHash of [...hashes.keys()].sort()) summaries.push(this.summarize(server, tool, schemaHash, hashes.get(schemaHash)!));
      }
    }
    return summaries;
  }

  /** One key, over all logs, or undefined when no execution is at it. */
  summary(key: HistoryKey): KeySummary | undefined {
    const entry = this.state.entries.get(key.server)?.get(key.tool)?.get(key.schemaHash);
    return entry ? this.summarize(key.server, key.tool, key.schemaHash, entry) : undefined;
  }

  /**
   * A summary of one key. `count` is taken now; `first`, `last` and `recent` are built from the
   * slots on first access of any of them (see {@link LazyExecutions}), because most callers read
   * only names and counts (selecting by tool or hash, collecting server names) and building K + 2
   * executions per key was most of what keys() cost. The summary is still a snapshot: it keeps the
   * slots it will read, and a later fold never changes a slot written before a summary was handed
   * out ({@link sharedUpTo}): it detaches it and writes a new one.
   */
  private summarize(server: string, tool: string, schemaHash: string, entry: KeyEntry): KeySummary {
    this.sharedUpTo = this.writes;
    const slots: EntrySlots = { recent: entry.merged.concat(entry.recent), firstRef: entry.firstRef, lastRef: entry.lastRef };
    const lazy = new LazyExecutions({ server, tool, schemaHash }, slots, this.recentLimit);
    // Own enumerable accessors on a plain object: spreading, JSON.stringify and deep equality see
    // the same properties as before, read through the getters.
    return {
      server,
      tool,
      schemaHash,
      count: entry.count,
      get first() {
        return lazy.built().first;
      },
      get last() {
        return lazy.built().last;
      },
      get recent() {
        return lazy.built().recent;
      },
    };
  }
}
