/**
 * Dispatch history (docs/formats.md §7, ADR 0063 D4): the read model over `MCP_DISPATCHED` events
 * in `*.events.jsonl` logs. It answers the proactive-repair question "which executions called
 * tool X at schema H", and whether H is the pinned hash, the live hash, or stale.
 *
 * Pure: lines come in, as text (from wherever the caller read them, with their line numbers and
 * byte offsets) or as the log's UTF-8 bytes ({@link HistoryModel.foldLineBytes}, what the reader
 * uses: the common line is read from its bytes by ./eventBytes.ts, without `JSON.parse`, and gives
 * exactly the model the text would), pins and live schema hashes come in as plain values, and a
 * model and a report with a stable JSON shape come out. Parsing never throws; a bad line is a
 * positioned {@link LineProblem}, counted and skipped.
 *
 * Memory is bounded per (server, tool, schemaHash): an exact count, the first and last execution
 * seen, and the most recent K executions (K = `recentLimit`, default 20). All executions of one
 * hash are re-read from the log on request by the I/O layer (server/src/history/logReader.ts).
 *
 * Definitions used throughout (also in the report's doc comments):
 *
 * - A hash is **live** when the server currently serves the tool with that schema pin
 *   (`schemaPin(inputSchema)`, the same `fnv1a64` pin as a blueprint's `expectedSchemaHash`);
 *   it is **pinned** when a blueprint step pins it for that tool (a step with a `server` pins it
 *   on that server only; a step without `server` pins it for the tool on every server).
 *   Connector tool pins (`sha256`, over name + description + schema) are a different pin kind
 *   and are never compared with a schema hash.
 * - The status of a hash is `pinned+live`, `live`, `pinned`, `stale` (known not to be live and
 *   not pinned), or `unknown` (not pinned, and no live listing says whether it is live: the server
 *   could not be listed, was not contacted, or its listing cannot prove the tool is absent).
 *   Without a listing a hash is never called stale.
 * - A hash is **not live** (`live: false`) when a listing of its server proves that the server
 *   serves the tool with another schema, or no longer serves it. Those are the `stale` hashes and
 *   the `pinned` hashes whose pin has drifted. The stale query (`toolpin history --stale`)
 *   selects exactly the executions at hashes that are not live.
 * - An execution **ran after drift** when it ran at a hash that is not live, later (by its `at`
 *   time) than the first execution at the current live hash of the same (server, tool) found in
 *   the logs: by then the server demonstrably served the new schema, so the execution dispatched
 *   with a schema that had already been replaced. Executions at that hash before that moment ran
 *   while their schema may still have been current. When no execution at the live hash is in the
 *   logs, the moment of drift is unknown and "ran after drift" is `null`, never a guess.
 */
import type { BlueprintModel } from '../documents/blueprint';
import type { CollectedListing } from '../verify/listing';
import { isParsedPin, parsePin, schemaPin } from '../pins/pins';
import { ByteTable } from './byteTable';
import { parseCanonicalTimeBytes, SCAN_DISPATCH, SCAN_OTHER, ScannedEvent, scanEventBytes } from './eventBytes';
import { daysFromCivil, isCanonicalTimeFields, timeOnDay } from './calendar';

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

export const DISPATCH_EVENT_TYPE = 'MCP_DISPATCHED';
/** How many recent executions each (server, tool, schemaHash) keeps in memory by default. */
export const DEFAULT_RECENT_LIMIT = 20;
/** How many line problems each log keeps (all are counted). */
export const DEFAULT_MAX_PROBLEMS_PER_LOG = 100;
export const HISTORY_REPORT_VERSION = 1;
/**
 * Bound of the model's two caches: distinct blueprint names and step ids shared between kept
 * executions, and schema hashes known to be well formed (beyond it, values are used as read).
 */
const MAX_INTERNED = 10_000;

// ---------------------------------------------------------------------------------------------
// Lines and events

/** Where a line starts: 1-based line number, 0-based byte offset in the log file. */
export interface LinePosition {
  readonly line: number;
  readonly offset: number;
}

/** One `MCP_DISPATCHED` event, read from the line at `line`/`offset`. */
export interface DispatchEvent extends LinePosition {
  readonly seq: number;
  /** The event's `at` exactly as written. */
  readonly at: string;
  /** `at` in milliseconds since the epoch. */
  readonly atMs: number;
  readonly executionId: string;
  /** Null when the event has no `blueprint`. */
  readonly blueprint: string | null;
  /** Null when the event has no `stepId`. */
  readonly stepId: string | null;
  readonly server: string;
  readonly toolName: string;
  readonly schemaHash: string;
}

/** An execution as the model reports it: the event plus the log it was read from. */
export interface Execution extends DispatchEvent {
  readonly log: string;
}

/**
 * Why a line was skipped. These strings are stable (the JSON report and tests use them):
 * - `not-json`: the line is not JSON;
 * - `not-an-object`: the line is JSON but not an object;
 * - `no-type`: an object without a string `type`;
 * - `missing-field` / `mistyped-field`: an `MCP_DISPATCHED` event lacks a required field, or has
 *   one of the wrong type (`field` names it, e.g. `data.server`);
 * - `malformed-schema-hash`: `data.schemaHash` is not a well-formed `fnv1a64:` schema pin;
 * - `torn`: the last line of the log has no line end yet (a write in progress or cut short); it is
 *   read as soon as a later append completes it;
 * - `too-long`: a line longer than the reader's limit, skipped without being held in memory.
 */
export type LineProblemReason = 'not-json' | 'not-an-object' | 'no-type' | 'missing-field' | 'mistyped-field' | 'malformed-schema-hash' | 'torn' | 'too-long';

export interface LineProblem extends LinePosition {
  readonly reason: LineProblemReason;
  /** Complete on its own, e.g. `data.server is missing`. Never contains the line's content. */
  readonly message: string;
  /** The offending field of an `MCP_DISPATCHED` event, when there is one. */
  readonly field?: string;
}

export type ParsedLine =
  | { readonly kind: 'dispatch'; readonly event: DispatchEvent }
  | { readonly kind: 'other'; readonly type: string }
  | { readonly kind: 'blank' }
  | { readonly kind: 'problem'; readonly problem: LineProblem };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lineProblem(line: number, offset: number, reason: LineProblemReason, message: string, field?: string): ParsedLine {
  return { kind: 'problem', problem: { line, offset, reason, message, ...(field !== undefined ? { field } : {}) } };
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

// Field checks: module functions (no closure per line); the common case returns at once.

function requiredString(field: string, value: unknown, line: number, offset: number): ParsedLine | undefined {
  if (typeof value === 'string' && value.length > 0) return undefined;
  if (value === undefined) return lineProblem(line, offset, 'missing-field', `${DISPATCH_EVENT_TYPE} without "${field}"`, field);
  return lineProblem(line, offset, 'mistyped-field', `${DISPATCH_EVENT_TYPE} "${field}" is ${typeof value === 'string' ? 'empty' : describeType(value)}, not a non-empty string`, field);
}

function optionalString(field: string, value: unknown, line: number, offset: number): ParsedLine | undefined {
  if (value === undefined || typeof value === 'string') return undefined;
  return lineProblem(line, offset, 'mistyped-field', `${DISPATCH_EVENT_TYPE} "${field}" is ${describeType(value)}, not a string`, field);
}

function sequenceNumber(value: unknown, line: number, offset: number): ParsedLine | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return undefined;
  if (value === undefined) return lineProblem(line, offset, 'missing-field', `${DISPATCH_EVENT_TYPE} without "seq"`, 'seq');
  return lineProblem(line, offset, 'mistyped-field', `${DISPATCH_EVENT_TYPE} "seq" is ${describeType(value)}, not a whole number ≥ 0`, 'seq');
}

/**
 * Parses one line of an event log (without its line end). Never throws.
 *
 * `MCP_DISPATCHED` needs `seq` (a whole number ≥ 0), `at` (a date-time), `executionId`,
 * `data.toolName`, `data.server` (non-empty strings) and `data.schemaHash` (an `fnv1a64:` schema
 * pin); `blueprint` and `stepId` are optional strings. Any other `type` is skipped unread.
 *
 * `knownHashes` is an optional cache of schema hashes already found well formed (a log repeats a
 * handful of hashes a million times; the cache avoids parsing each again).
 */
export function parseEventLine(text: string, position: LinePosition, knownHashes?: Set<string>): ParsedLine {
  const scratch = new LineScratch();
  const found = checkLine(text, position.line, position.offset, knownHashes, scratch);
  if (found) return found;
  return {
    kind: 'dispatch',
    event: {
      line: position.line,
      offset: position.offset,
      seq: scratch.seq,
      at: scratch.at,
      atMs: scratch.atMs,
      executionId: scratch.executionId,
      blueprint: scratch.blueprint ?? null,
      stepId: scratch.stepId ?? null,
      server: scratch.server,
      toolName: scratch.toolName,
      schemaHash: scratch.schemaHash,
    },
  };
}

/** Where {@link checkLine} leaves a valid dispatch's fields: reused line after line (no allocation). */
class LineScratch {
  seq = 0;
  at = '';
  /**
   * Times exceed the small-integer range, so the field starts as a double (NaN, never read before
   * it is set): starting at 0 made V8 widen the field on the first time written, replacing the
   * object shape and throwing away the optimized code of the fold ("wrong map").
   */
  atMs = Number.NaN;
  /** True when `at` is exactly `new Date(atMs).toISOString()` (it need not be kept). */
  canonicalAt = false;
  executionId = '';
  blueprint: string | undefined = undefined;
  stepId: string | undefined = undefined;
  server = '';
  toolName = '';
  schemaHash = '';
}

/** The first problem of an `MCP_DISPATCHED` event's fields, in the documented order of checks. */
function fieldProblem(event: Record<string, unknown>, line: number, offset: number): ParsedLine {
  const data = event.data;
  return (
    sequenceNumber(event.seq, line, offset) ??
    requiredString('at', event.at, line, offset) ??
    requiredString('executionId', event.executionId, line, offset) ??
    optionalString('blueprint', event.blueprint, line, offset) ??
    optionalString('stepId', event.stepId, line, offset) ??
    (data === undefined
      ? lineProblem(line, offset, 'missing-field', `${DISPATCH_EVENT_TYPE} without "data"`, 'data')
      : !isRecord(data)
        ? lineProblem(line, offset, 'mistyped-field', `${DISPATCH_EVENT_TYPE} "data" is ${describeType(data)}, not an object`, 'data')
        : (requiredString('data.toolName', data.toolName, line, offset) ??
          requiredString('data.server', data.server, line, offset) ??
          requiredString('data.schemaHash', data.schemaHash, line, offset) ??
          // Unreachable: the caller found a problem; named anyway so that the result is never empty.
          lineProblem(line, offset, 'mistyped-field', `${DISPATCH_EVENT_TYPE} has a malformed field`)))
  );
}

/**
 * Reads and checks one line. Returns what it is — blank, another type, a problem — or undefined for
 * a valid `MCP_DISPATCHED`, whose fields are then in `scratch`. With `checkHash` false the last
 * check, of the schema hash ({@link schemaHashProblem}), is left to the caller, which must make it
 * before using the event (the model skips it for a hash it already holds an entry for).
 */
function checkLine(text: string, line: number, offset: number, knownHashes: Set<string> | undefined, scratch: LineScratch, checkHash = true): ParsedLine | undefined {
  if (text.length === 0) return BLANK;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text.trim().length === 0 ? BLANK : lineProblem(line, offset, 'not-json', 'the line is not JSON');
  }
  if (!isRecord(value)) {
    return lineProblem(line, offset, 'not-an-object', `the line is ${describeType(value)}, not an event object`);
  }
  const type = value.type;
  if (typeof type !== 'string') {
    return lineProblem(line, offset, 'no-type', type === undefined ? 'the event has no "type"' : `the event's "type" is ${describeType(type)}, not a string`, 'type');
  }
  if (type !== DISPATCH_EVENT_TYPE) return { kind: 'other', type };

  // The common case in one test; any failure is described by fieldProblem, in order.
  const { seq, at, executionId, blueprint, stepId, data } = value;
  if (
    typeof seq !== 'number' || !Number.isInteger(seq) || seq < 0 ||
    typeof at !== 'string' || at.length === 0 ||
    typeof executionId !== 'string' || executionId.length === 0 ||
    (blueprint !== undefined && typeof blueprint !== 'string') ||
    (stepId !== undefined && typeof stepId !== 'string') ||
    !isRecord(data)
  ) {
    return fieldProblem(value, line, offset);
  }
  const { toolName, server, schemaHash } = data;
  if (typeof toolName !== 'string' || toolName.length === 0 || typeof server !== 'string' || server.length === 0 || typeof schemaHash !== 'string' || schemaHash.length === 0) {
    return fieldProblem(value, line, offset);
  }

  scratch.seq = seq;
  scratch.at = at;
  scratch.executionId = executionId;
  scratch.blueprint = blueprint;
  scratch.stepId = stepId;
  scratch.server = server;
  scratch.toolName = toolName;
  scratch.schemaHash = schemaHash;
  return checkTime(at, 0, at.length, line, offset, scratch) ?? (checkHash ? schemaHashProblem(schemaHash, line, offset, knownHashes) : undefined);
}

/**
 * The check before last of a dispatch whose fields are all present and typed: `at` (the text
 * `source[start, end)`) is a date-time. Sets `scratch.atMs` and `scratch.canonicalAt`, and
 * `scratch.at` when `at` is not canonical.
 */
function checkTime(source: string, start: number, end: number, line: number, offset: number, scratch: LineScratch): ParsedLine | undefined {
  let atMs = parseCanonicalTimeAt(source, start, end);
  scratch.canonicalAt = !Number.isNaN(atMs);
  if (!scratch.canonicalAt) {
    const at = start === 0 && end === source.length ? source : source.slice(start, end);
    scratch.at = at;
    atMs = Date.parse(at);
  }
  if (Number.isNaN(atMs)) return lineProblem(line, offset, 'mistyped-field', `${DISPATCH_EVENT_TYPE} "at" is not a date-time (ISO 8601)`, 'at');
  scratch.atMs = atMs;
  return undefined;
}

/** The last check of a dispatch: its schema hash is a well-formed `fnv1a64:` pin. */
function schemaHashProblem(schemaHash: string, line: number, offset: number, knownHashes: Set<string> | undefined): ParsedLine | undefined {
  if (knownHashes?.has(schemaHash)) return undefined;
  const parsed = parsePin(schemaHash, 'fnv1a64');
  if (!isParsedPin(parsed)) return lineProblem(line, offset, 'malformed-schema-hash', `${DISPATCH_EVENT_TYPE} "data.schemaHash": ${parsed.message}`, 'data.schemaHash');
  if (knownHashes && knownHashes.size < MAX_INTERNED) knownHashes.add(schemaHash);
  return undefined;
}

const BLANK: ParsedLine = { kind: 'blank' };


/**
 * The two decimal digits at `text[index, index + 2)` as a number, or -1000 when either is not a
 * digit (far enough below every bound checked that any sum containing it fails the check). Integer
 * arithmetic throughout: NaN for a non-digit made every field of the time a double.
 */
function twoDigitsAt(text: string, index: number): number {
  const tens = text.charCodeAt(index) - 48;
  const ones = text.charCodeAt(index + 1) - 48;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1000;
}

/**
 * The time of `YYYY-MM-DDTHH:mm:ss.sssZ` (what `Date#toISOString` writes, and runtimes log) in
 * milliseconds, or NaN for anything else — including days after the 28th and years before 100, which
 * are left to `Date.parse`. When it is not NaN, `new Date(result).toISOString()` is exactly `text`.
 */
function parseCanonicalTime(text: string): number {
  return parseCanonicalTimeAt(text, 0, text.length);
}

/** {@link parseCanonicalTime} of `text[start, end)`, read in place. */
function parseCanonicalTimeAt(text: string, start: number, end: number): number {
  if (end - start !== 24 || text.charCodeAt(start + 23) !== 90 || text.charCodeAt(start + 4) !== 45 || text.charCodeAt(start + 7) !== 45 || text.charCodeAt(start + 10) !== 84) return NaN;
  if (text.charCodeAt(start + 13) !== 58 || text.charCodeAt(start + 16) !== 58 || text.charCodeAt(start + 19) !== 46) return NaN;
  const century = twoDigitsAt(text, start);
  const yearOfCentury = twoDigitsAt(text, start + 2);
  const year = century * 100 + yearOfCentury;
  const month = twoDigitsAt(text, start + 5);
  const day = twoDigitsAt(text, start + 8);
  const hour = twoDigitsAt(text, start + 11);
  const minute = twoDigitsAt(text, start + 14);
  const second = twoDigitsAt(text, start + 17);
  const lastDigit = text.charCodeAt(start + 22) - 48;
  const millisecond = lastDigit >= 0 && lastDigit <= 9 ? twoDigitsAt(text, start + 20) * 10 + lastDigit : -1;
  if (!isCanonicalTimeFields(century, yearOfCentury, month, day, hour, minute, second, millisecond)) return NaN;
  return timeOnDay(daysFromCivil(year, month, day), hour, minute, second, millisecond);
}

/** `Date.parse`, about 3× faster on the canonical form runtimes write (same result always). */
export function parseTime(text: string): number {
  const fast = parseCanonicalTime(text);
  return Number.isNaN(fast) ? Date.parse(text) : fast;
}

/** UTF-8 byte length of `text[from, to)`; a lone surrogate counts 3 bytes (U+FFFD). */
export function utf8Length(text: string, from = 0, to = text.length): number {
  let bytes = 0;
  for (let index = from; index < to; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < to) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        index++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

const NON_ASCII = /[\u0080-\uffff]/;

/**
 * Calls `visit` for every line of `text` with its number and byte offset. Lines end at `\n` (a `\r` before it
 * is dropped); a remainder without `\n` is a line too (the caller decides what is complete).
 * `byteLength` is the UTF-8 length of `text` when the caller knows it (one pass is saved when it
 * equals `text.length`, i.e. the text is ASCII). Returns the position after the text.
 */
export function forEachLine(text: string, start: LinePosition, visit: (text: string, line: number, offset: number) => void, byteLength?: number): LinePosition {
  const ascii = byteLength !== undefined ? byteLength === text.length : !NON_ASCII.test(text);
  let line = start.line;
  let offset = start.offset;
  let from = 0;
  while (from < text.length) {
    let end = text.indexOf('\n', from);
    const terminated = end >= 0;
    if (!terminated) end = text.length;
    const contentEnd = end > from && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
    visit(text.slice(from, contentEnd), line, offset);
    const next = terminated ? end + 1 : end;
    offset += ascii ? next - from : utf8Length(text, from, next);
    line++;
    from = next;
  }
  return { line, offset };
}

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

/** Newest first: by time, then sequence, then log, then line. */
function newestFirst(a: Execution, b: Execution): number {
  return b.atMs - a.atMs || b.seq - a.seq || (a.log < b.log ? -1 : a.log > b.log ? 1 : 0) || b.line - a.line;
}

export interface HistoryKey {
  readonly server: string;
  readonly tool: string;
  readonly schemaHash: string;
}

/** Everything the model holds about one (server, tool, schemaHash), merged over all logs. */
export interface KeySummary extends HistoryKey {
  readonly count: number;
  readonly first: Execution;
  readonly last: Execution;
  /** The most recent executions in memory, newest first (at most `recentLimit`). */
  readonly recent: readonly Execution[];
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
    fold.torn = torn ? { line: torn.line, offset: torn.offset, reason: 'torn', message: 'the last line has no line end (torn or still being written); it is read once completed' } : undefined;
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
    const found = checkLine(text, line, offset, undefined, scratch, false);
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
   * joins the merged K newest, and the ring starts empty for `log`. Slots are moved, never
   * written, so a summary that holds them still reads what it held.
   */
  private mergeRing(entry: KeyEntry, log: string): void {
    entry.ringLog = log;
    if (entry.recent.length === 0) return;
    const all = entry.merged.concat(entry.recent);
    all.sort(newestSlotFirst);
    entry.merged = all.slice(0, this.recentLimit);
    for (let index = this.recentLimit; index < all.length; index++) entry.spare.push(this.release(entry, all[index]!));
    entry.recent = [];
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

/** What a summary reads of a key's entry: its kept slots (merged and ring), the first and the last. */
interface EntrySlots {
  readonly recent: readonly Slot[];
  readonly firstRef: Slot;
  readonly lastRef: Slot;
}

type Built = { readonly first: Execution; readonly last: Execution; readonly recent: readonly Execution[] };

/** The executions of one key's summary, built from the slots it kept, once, on first use. */
class LazyExecutions {
  private result: Built | undefined;

  constructor(
    private readonly key: HistoryKey,
    private slots: EntrySlots | undefined,
    private readonly recentLimit: number,
  ) {}

  built(): Built {
    if (this.result) return this.result;
    const key = this.key;
    const { recent: slots, firstRef, lastRef } = this.slots!;
    const recent = slots.map((slot) => slot.toExecution(key));
    recent.sort(newestFirst);
    this.result = { first: firstRef.toExecution(key), last: lastRef.toExecution(key), recent: recent.slice(0, this.recentLimit) };
    // The slots are no longer needed.
    this.slots = undefined;
    return this.result;
  }
}

/** Sorts executions newest first (time, then sequence, then log, then line). */
export function sortNewestFirst(executions: Execution[]): Execution[] {
  return executions.sort(newestFirst);
}

// ---------------------------------------------------------------------------------------------
// Pins and live hashes

/** A schema pin written in a blueprint step. `server` undefined: the pin holds on every server. */
export interface SchemaPinRef {
  readonly tool: string;
  readonly server: string | undefined;
  readonly hash: string;
  readonly blueprint: string | null;
  readonly step: string | null;
  /** The file that holds the blueprint, as the caller wants it shown. */
  readonly file: string | null;
}

/** The well-formed schema pins of blueprint steps (malformed ones are the blueprint checks' job). */
export function schemaPinsOf(blueprints: ReadonlyArray<{ readonly model: BlueprintModel; readonly file?: string }>): SchemaPinRef[] {
  const pins: SchemaPinRef[] = [];
  for (const { model, file } of blueprints) {
    for (const step of model.steps) {
      const mcp = step.mcp;
      if (!mcp?.toolName || !mcp.pin || !mcp.expectedSchemaHash) continue;
      pins.push({
        tool: mcp.toolName.value,
        server: mcp.server?.value,
        hash: mcp.expectedSchemaHash.value,
        blueprint: model.name?.value ?? null,
        step: step.id?.value ?? null,
        file: file ?? null,
      });
    }
  }
  return pins;
}

/**
 * What is known of one server's live tools:
 * - `listed`: `tools` maps each served tool to its schema pin (undefined when the tool is served
 *   but its schema cannot be pinned); `complete` is false when the listing cannot prove that a
 *   tool it lacks is not served (incomplete or with malformed entries);
 * - `unavailable`: not listed (not configured, not contacted, unreachable…), with the reason.
 * A server missing from a {@link LiveSchemas} map is unavailable ("not listed").
 */
export type LiveServer =
  | { readonly state: 'listed'; readonly tools: ReadonlyMap<string, string | undefined>; readonly complete: boolean }
  | { readonly state: 'unavailable'; readonly reason: string };

/** Live knowledge by server name. */
export type LiveSchemas = ReadonlyMap<string, LiveServer>;

/** The schema pins of a listing's tools (a tool served twice with different schemas: undefined). */
export function liveServerFromListing(listing: CollectedListing): LiveServer {
  const tools = new Map<string, string | undefined>();
  const seen = new Set<string>();
  for (const tool of listing.tools) {
    let pin: string | undefined;
    if (!tool.unpinnable && tool.inputSchema !== undefined) {
      try {
        pin = schemaPin(tool.inputSchema);
      } catch {
        pin = undefined; // not plain JSON: served, but not pinnable
      }
    }
    if (seen.has(tool.name) && tools.get(tool.name) !== pin) tools.set(tool.name, undefined);
    else tools.set(tool.name, pin);
    seen.add(tool.name);
  }
  return { state: 'listed', tools, complete: !listing.incomplete && listing.malformedEntries.length === 0 };
}

/** What the live listing says about one tool. */
export type LiveTool =
  | { readonly state: 'served'; readonly hash: string }
  | { readonly state: 'not-served' }
  | { readonly state: 'unknown'; readonly reason: string };

export function liveToolOf(live: LiveSchemas, server: string, tool: string): LiveTool {
  const known = live.get(server);
  if (!known) return { state: 'unknown', reason: `server "${server}" was not listed` };
  if (known.state === 'unavailable') return { state: 'unknown', reason: known.reason };
  if (known.tools.has(tool)) {
    const hash = known.tools.get(tool);
    return hash === undefined ? { state: 'unknown', reason: `"${tool}" is served without a schema that can be pinned` } : { state: 'served', hash };
  }
  return known.complete ? { state: 'not-served' } : { state: 'unknown', reason: `the listing of "${server}" is incomplete, so it cannot prove "${tool}" is gone` };
}

export type HashStatus = 'pinned+live' | 'live' | 'pinned' | 'stale' | 'unknown';

/**
 * The status of a hash (see the module comment). `live` is true (served with this schema), false
 * (a listing proves it is not) or null (no usable listing).
 */
export function hashStatus(pinned: boolean, live: boolean | null): HashStatus {
  if (live === true) return pinned ? 'pinned+live' : 'live';
  if (pinned) return 'pinned';
  return live === false ? 'stale' : 'unknown';
}

function pinsFor(pins: readonly SchemaPinRef[], server: string, tool: string): SchemaPinRef[] {
  return pins.filter((pin) => pin.tool === tool && (pin.server === undefined || pin.server === server));
}

// ---------------------------------------------------------------------------------------------
// Queries and the report (stable JSON shape, version 1)

export interface HistoryQuery {
  /** Only this tool (exact name). */
  readonly tool?: string;
  /** Only this schema hash (`fnv1a64:<hex>`; bare 16 hex digits are accepted). */
  readonly hash?: string;
  /** Only hashes that are not live (`live: false`): the stale query. */
  readonly staleOnly?: boolean;
  /** Executions listed per hash: a number, or null for all of them. Default: the model's K. */
  readonly limit?: number | null;
}

export interface HistoryInputs {
  readonly pins: readonly SchemaPinRef[];
  readonly live: LiveSchemas;
  /**
   * All executions of a key, when the caller read them (beyond the K in memory); any order.
   * Used when the query lists more executions than the model holds.
   */
  readonly allExecutions?: (key: HistoryKey) => readonly Execution[] | undefined;
  /** Logs as the caller wants them shown (default: the model's log ids), in report order. */
  readonly logs?: readonly string[];
}

export interface HistoryExecutionReport {
  executionId: string;
  blueprint: string | null;
  stepId: string | null;
  at: string;
  seq: number;
  log: string;
  /** 1-based line in the log. */
  line: number;
  /** See "ran after drift" in the module comment; null when it cannot be told. */
  ranAfterDrift: boolean | null;
}

export interface HistoryHashReport {
  schemaHash: string;
  status: HashStatus;
  pinned: boolean;
  /** True: the server serves the tool with this schema now; false: it does not; null: unknown. */
  live: boolean | null;
  /** Exact number of executions at this hash in all logs. */
  count: number;
  firstSeen: SeenAt;
  lastSeen: SeenAt;
  /** Executions that ran after drift (exact); null when it cannot be told from what was read. */
  ranAfterDrift: number | null;
  /** Newest first. */
  executions: HistoryExecutionReport[];
  /** True when `executions` holds every execution at this hash. */
  executionsComplete: boolean;
}

export interface HistoryToolReport {
  tool: string;
  /** `served`: `liveHash` is what the server serves now; `not-served`; `unknown` (`liveReason`). */
  liveState: 'served' | 'not-served' | 'unknown';
  liveHash: string | null;
  liveReason: string | null;
  /** The first execution at the live hash in the logs: the moment drift became visible. */
  liveFirstSeen: SeenAt | null;
  pins: Array<{ hash: string; blueprint: string | null; step: string | null; file: string | null; anyServer: boolean }>;
  hashes: HistoryHashReport[];
}

export interface HistoryServerReport {
  server: string;
  tools: HistoryToolReport[];
}

export interface HistoryLogReport extends LogCounters {
  log: string;
  problems: LineProblem[];
  /** True when more problems were counted than are listed. */
  problemsTruncated: boolean;
}

/**
 * The report of `toolpin history --format json`: a stable shape, `version: 1`. Fields are only
 * ever added under a version; renaming or removing one bumps it.
 *
 * ```
 * { version: 1,
 *   query:   { tool, hash, stale, limit },                         // null = not given / all
 *   logs:    [ { log, lines, blank, dispatched, skipped, malformed, torn,
 *                problems: [ { line, offset, reason, message, field? } ], problemsTruncated } ],
 *   servers: [ { server,
 *                tools: [ { tool, liveState, liveHash, liveReason, liveFirstSeen: { at, seq } | null,
 *                           pins: [ { hash, blueprint, step, file, anyServer } ],
 *                           hashes: [ { schemaHash, status, pinned, live, count,
 *                                       firstSeen: { at, seq }, lastSeen: { at, seq }, ranAfterDrift,
 *                                       executions: [ { executionId, blueprint, stepId, at, seq,
 *                                                       log, line, ranAfterDrift } ],
 *                                       executionsComplete } ] } ] } ],
 *   summary: { logs, lines, dispatched, skipped, malformed, torn, hashes, executions,
 *              staleExecutions, unknownExecutions, ranAfterDrift } }
 * ```
 * Servers and tools are sorted by name; hashes by last execution, newest first; executions newest
 * first. `line` is 1-based, `offset` a 0-based byte offset in the log file.
 */
export interface HistoryReport {
  version: 1;
  query: { tool: string | null; hash: string | null; stale: boolean; limit: number | null };
  logs: HistoryLogReport[];
  servers: HistoryServerReport[];
  summary: {
    logs: number;
    lines: number;
    dispatched: number;
    skipped: number;
    malformed: number;
    torn: number;
    /** Selected (server, tool, schemaHash) entries. */
    hashes: number;
    /** Executions at the selected hashes. */
    executions: number;
    /** Executions at selected hashes that are not live: what `--stale` lists. */
    staleExecutions: number;
    /**
     * Executions with no live answer (status `unknown`, or `pinned` with `live: null`) among those
     * the tool and hash filters select, also under `--stale`, which cannot rule them in or out.
     */
    unknownExecutions: number;
    /** Sum of `ranAfterDrift` over selected hashes; null when one of them is null while not live. */
    ranAfterDrift: number | null;
  };
}

/** `fnv1a64:<hex>` for a bare 16-hex hash; anything else as given. */
export function normalizeHashQuery(hash: string): string {
  return /^[0-9a-f]{16}$/.test(hash) ? `fnv1a64:${hash}` : hash;
}

/** A selected key with its live and pin verdicts, before executions are listed. */
export interface SelectedKey {
  readonly summary: KeySummary;
  readonly pins: readonly SchemaPinRef[];
  readonly liveTool: LiveTool;
  readonly live: boolean | null;
  readonly status: HashStatus;
}

/** The keys a query selects, in report order (server, tool, then newest last execution first). */
export function selectHistory(model: HistoryModel, query: HistoryQuery, inputs: Pick<HistoryInputs, 'pins' | 'live'>): SelectedKey[] {
  const hash = query.hash !== undefined ? normalizeHashQuery(query.hash) : undefined;
  const selected: SelectedKey[] = [];
  for (const summary of model.keys()) {
    if (query.tool !== undefined && summary.tool !== query.tool) continue;
    if (hash !== undefined && summary.schemaHash !== hash) continue;
    const liveTool = liveToolOf(inputs.live, summary.server, summary.tool);
    const live = liveTool.state === 'served' ? liveTool.hash === summary.schemaHash : liveTool.state === 'not-served' ? false : null;
    if (query.staleOnly && live !== false) continue;
    const pins = pinsFor(inputs.pins, summary.server, summary.tool);
    const pinned = pins.some((pin) => pin.hash === summary.schemaHash);
    selected.push({ summary, pins, liveTool, live, status: hashStatus(pinned, live) });
  }
  return selected;
}

/** Whether the report would list more executions of a key than the model holds in memory. */
export function needsAllExecutions(key: SelectedKey, limit: number | null): boolean {
  const wanted = limit === null ? key.summary.count : Math.min(limit, key.summary.count);
  return wanted > key.summary.recent.length;
}

function seenAt(execution: { at: string; seq: number }): SeenAt {
  return { at: execution.at, seq: execution.seq };
}

/** Builds the report for a query. Pure; see {@link HistoryReport} for the shape. */
export function historyReport(model: HistoryModel, query: HistoryQuery, inputs: HistoryInputs): HistoryReport {
  const limit = query.limit === undefined ? model.recentLimit : query.limit;
  const selected = selectHistory(model, query, inputs);
  const servers: HistoryServerReport[] = [];
  let executions = 0;
  let staleExecutions = 0;
  let unknownExecutions = 0;
  let ranAfterDriftTotal: number | null = 0;

  for (const key of selected) {
    const { summary } = key;
    let server = servers[servers.length - 1];
    if (!server || server.server !== summary.server) servers.push((server = { server: summary.server, tools: [] }));
    let tool = server.tools[server.tools.length - 1];
    if (!tool || tool.tool !== summary.tool) {
      const liveHash = key.liveTool.state === 'served' ? key.liveTool.hash : null;
      const liveSummary = liveHash !== null ? model.summary({ server: summary.server, tool: summary.tool, schemaHash: liveHash }) : undefined;
      tool = {
        tool: summary.tool,
        liveState: key.liveTool.state,
        liveHash,
        liveReason: key.liveTool.state === 'unknown' ? key.liveTool.reason : null,
        liveFirstSeen: liveSummary ? seenAt(liveSummary.first) : null,
        pins: key.pins.map((pin) => ({ hash: pin.hash, blueprint: pin.blueprint, step: pin.step, file: pin.file, anyServer: pin.server === undefined })),
        hashes: [],
      };
      server.tools.push(tool);
    }

    // The moment drift became visible: the first execution at the live hash.
    const liveSummary = tool.liveHash !== null ? model.summary({ server: summary.server, tool: summary.tool, schemaHash: tool.liveHash }) : undefined;
    const driftMs = liveSummary?.first.atMs;
    const afterDrift = (execution: Execution): boolean | null => {
      if (key.live === true) return false;
      if (key.live === null) return null;
      return driftMs === undefined ? null : execution.atMs > driftMs;
    };

    const all = inputs.allExecutions?.(summary);
    const source = all && all.length >= summary.count ? sortNewestFirst([...all]) : [...summary.recent];
    const complete = source.length >= summary.count;
    const listed = limit === null ? source : source.slice(0, limit);

    let ranAfterDrift: number | null;
    if (key.live === true) ranAfterDrift = 0;
    else if (key.live === null || driftMs === undefined) ranAfterDrift = null;
    else if (summary.last.atMs <= driftMs) ranAfterDrift = 0;
    else if (summary.first.atMs > driftMs) ranAfterDrift = summary.count;
    else if (complete) ranAfterDrift = source.filter((execution) => execution.atMs > driftMs).length;
    else ranAfterDrift = null;

    tool.hashes.push({
      schemaHash: summary.schemaHash,
      status: key.status,
      pinned: key.status === 'pinned' || key.status === 'pinned+live',
      live: key.live,
      count: summary.count,
      firstSeen: seenAt(summary.first),
      lastSeen: seenAt(summary.last),
      ranAfterDrift,
      executions: listed.map((execution) => ({
        executionId: execution.executionId,
        blueprint: execution.blueprint,
        stepId: execution.stepId,
        at: execution.at,
        seq: execution.seq,
        log: execution.log,
        line: execution.line,
        ranAfterDrift: afterDrift(execution),
      })),
      executionsComplete: listed.length >= summary.count,
    });

    executions += summary.count;
    if (key.live === false) {
      staleExecutions += summary.count;
      ranAfterDriftTotal = ranAfterDriftTotal === null || ranAfterDrift === null ? null : ranAfterDriftTotal + ranAfterDrift;
    }
  }
  // Unknown executions are counted with the stale filter off: `--stale` can neither rule them in
  // nor out, so they make the answer incomplete.
  for (const key of query.staleOnly ? selectHistory(model, { ...query, staleOnly: false }, inputs) : selected) {
    if (key.live === null) unknownExecutions += key.summary.count;
  }

  // Within a tool: newest last execution first, then by hash.
  for (const server of servers) {
    for (const tool of server.tools) {
      tool.hashes.sort((a, b) => (a.lastSeen.at === b.lastSeen.at ? 0 : Date.parse(b.lastSeen.at) - Date.parse(a.lastSeen.at)) || b.lastSeen.seq - a.lastSeen.seq || (a.schemaHash < b.schemaHash ? -1 : 1));
    }
  }

  const logs = (inputs.logs ?? model.logs()).map((log): HistoryLogReport => {
    const stats = model.logStats(log);
    const listedProblems = stats.problems.filter((found) => found.reason !== 'torn').length;
    return {
      log,
      lines: stats.lines,
      blank: stats.blank,
      dispatched: stats.dispatched,
      skipped: stats.skipped,
      malformed: stats.malformed,
      torn: stats.torn,
      problems: [...stats.problems],
      problemsTruncated: listedProblems < stats.malformed,
    };
  });
  const total = (field: keyof LogCounters): number => logs.reduce((sum, log) => sum + log[field], 0);

  return {
    version: HISTORY_REPORT_VERSION,
    query: { tool: query.tool ?? null, hash: query.hash !== undefined ? normalizeHashQuery(query.hash) : null, stale: query.staleOnly === true, limit },
    logs,
    servers,
    summary: {
      logs: logs.length,
      lines: total('lines'),
      dispatched: total('dispatched'),
      skipped: total('skipped'),
      malformed: total('malformed'),
      torn: total('torn'),
      hashes: selected.length,
      executions,
      staleExecutions,
      unknownExecutions,
      ranAfterDrift: ranAfterDriftTotal,
    },
  };
}

/**
 * Exit status of `toolpin history`, consistent with `toolpin check`: 1 when a selected execution
 * ran at a hash that is not live (a finding: what `--stale` lists); otherwise 2 when something
 * could not be checked (a log could not be read, or a selected hash has no live answer); else 0.
 * Malformed and torn lines are reported but never change the status.
 */
export function historyExitStatus(report: HistoryReport, couldNotReadSomething: boolean): 0 | 1 | 2 {
  if (report.summary.staleExecutions > 0) return 1;
  if (couldNotReadSomething || report.summary.unknownExecutions > 0) return 2;
  return 0;
}
