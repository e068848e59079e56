/**
 * Dispatch history, the events (docs/formats.md §7): one line of a `*.events.jsonl` log as text →
 * an `MCP_DISPATCHED` event, another event's type, a blank line or a positioned {@link LineProblem}.
 * Pure and never throwing. The model (./model.ts) folds lines with these checks; its byte path
 * (./eventBytes.ts) gives exactly what this text path gives. See ./history.ts for the whole module.
 */
import { isParsedPin, parsePin } from '../pins/pins';
import { daysFromCivil, isCanonicalTimeFields, timeOnDay } from './calendar';

export const DISPATCH_EVENT_TYPE = 'MCP_DISPATCHED';
/**
 * Bound of the model's two caches: distinct blueprint names and step ids shared between kept
 * executions, and schema hashes known to be well formed (beyond it, values are used as read).
 */
export const MAX_INTERNED = 10_000;

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
export class LineScratch {
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
export function checkLine(text: string, line: number, offset: number, knownHashes: Set<string> | undefined, scratch: LineScratch, checkHash = true): ParsedLine | undefined {
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
export function schemaHashProblem(schemaHash: string, line: number, offset: number, knownHashes: Set<string> | undefined): ParsedLine | undefined {
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

