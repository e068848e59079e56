/**
 * A scanner for one line of a dispatch-history event log (docs/formats.md §7), read as UTF-8 bytes
 * in place, without decoding the line and without `JSON.parse`.
 *
 * Why: building the history model reads every line of logs that run to millions of lines.
 * `JSON.parse` of each line was more than half of the build, and most of the rest went to the
 * strings it makes (the event, its `data`, every member) of which the model keeps a few fields,
 * usually the same few values again and again. Indexing a `Uint8Array` compiles to plain loads,
 * so this scan costs less than the parse, and the model looks the fields up by their bytes
 * (./byteTable.ts) instead of making a string per field (issue 13).
 *
 * Contract: {@link scanEventBytes} answers for a subset of the lines only, and only when it is
 * certain that the string path (`JSON.parse` and the field checks of history.ts `checkLine`)
 * would read the line the same way:
 * - {@link SCAN_DISPATCH}: the line is JSON (RFC 8259, as `JSON.parse` accepts it), an object
 *   whose `type` is `MCP_DISPATCHED`, `seq` a whole number ≥ 0 written as at most 15 plain digits,
 *   `at` and `executionId` non-empty strings, `blueprint` and `stepId` strings when present, and
 *   `data` an object whose `toolName`, `server` and `schemaHash` are non-empty strings. None of
 *   those members is repeated (where `JSON.parse` keeps the last one) and none of their values
 *   holds a backslash, so each value is exactly the UTF-8 decoding of its byte range, which the
 *   {@link ScannedEvent} given then holds. Whether `at` is a date-time and `schemaHash` a
 *   well-formed pin is the caller's to check.
 * - {@link SCAN_OTHER}: the line is JSON, an object whose `type` (not repeated, without escapes)
 *   is a string other than `MCP_DISPATCHED`.
 * - {@link SCAN_UNKNOWN}: anything else, including every line that is not JSON, other JSON values,
 *   a missing or mistyped field, an escape in a member name or in a value the model reads, a
 *   number in another notation, a repeated member the model reads, or nesting deeper than
 *   {@link MAX_SCANNED_DEPTH}. The caller then reads the line as text with `JSON.parse`, which
 *   decides and describes every problem, so a problem's wording never depends on this scanner.
 *
 * What it accepts is JSON by construction: objects, arrays, strings (escapes `\" \\ \/ \b \f \n
 * \r \t \uXXXX`; no byte below 0x20), numbers in JSON's grammar, `true`, `false`, `null`, and
 * space, tab and carriage return between tokens. Bytes from 0x80 up are accepted inside strings
 * only: the reader decodes invalid UTF-8 to U+FFFD, which is a valid string character, and
 * outside a string any non-ASCII character makes the line invalid JSON, which is left unanswered.
 * A property test holds every answer against the string path (test/unit/eventBytes.property.test.ts).
 *
 * Pure: no I/O, no allocation per line.
 */
import { daysFromCivil, isCanonicalTimeFields, timeOnDay } from './calendar';

/** The line is a valid `MCP_DISPATCHED` event; its fields are in the {@link ScannedEvent}. */
export const SCAN_DISPATCH = 1;
/** The line is a JSON object whose `type` is a string other than `MCP_DISPATCHED`. */
export const SCAN_OTHER = 2;
/** The scanner does not answer: read the line as text with `JSON.parse`. */
export const SCAN_UNKNOWN = 0;

export type ScanOutcome = typeof SCAN_DISPATCH | typeof SCAN_OTHER | typeof SCAN_UNKNOWN;

/** Containers nested deeper than this (the line's object counts 1) are left to `JSON.parse`. */
export const MAX_SCANNED_DEPTH = 32;

/**
 * Where the fields of a scanned dispatch are: `[start, end)` byte ranges of the line, without the
 * quotes. Reused line after line; meaningful only after {@link SCAN_DISPATCH}. An absent
 * `blueprint` or `stepId` has start -1.
 */
export class ScannedEvent {
  seq = 0;
  atStart = 0;
  atEnd = 0;
  executionIdStart = 0;
  executionIdEnd = 0;
  /** True when every byte of the execution id is below 0x80 (ASCII: each byte is one character). */
  executionIdAscii = false;
  blueprintStart = -1;
  blueprintEnd = -1;
  stepIdStart = -1;
  stepIdEnd = -1;
  toolNameStart = 0;
  toolNameEnd = 0;
  serverStart = 0;
  serverEnd = 0;
  schemaHashStart = 0;
  schemaHashEnd = 0;
}

// Byte values.
const TAB = 9;
const CARRIAGE_RETURN = 13;
const SPACE = 32;
const QUOTE = 34;
const PLUS = 43;
const COMMA = 44;
const MINUS = 45;
const DOT = 46;
const SLASH = 47;
const ZERO = 48;
const NINE = 57;
const COLON = 58;
const UPPER_E = 69;
const OPEN_BRACKET = 91;
const BACKSLASH = 92;
const CLOSE_BRACKET = 93;
const LOWER_B = 98;
const LOWER_E = 101;
const LOWER_F = 102;
const LOWER_N = 110;
const LOWER_R = 114;
const LOWER_T = 116;
const LOWER_U = 117;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** The bytes of an ASCII text. */
function bytesOf(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}

/** `MCP_DISPATCHED` as bytes. */
const DISPATCH_TYPE = bytesOf('MCP_DISPATCHED');

// Bits of what the top-level object and `data` held.
const SEEN_TYPE = 1;
const SEEN_SEQ = 2;
const SEEN_AT = 4;
const SEEN_EXECUTION_ID = 8;
const SEEN_BLUEPRINT = 16;
const SEEN_STEP_ID = 32;
const SEEN_DATA = 64;
const SEEN_TOOL_NAME = 128;
const SEEN_SERVER = 256;
const SEEN_SCHEMA_HASH = 512;
/** `data` is an object (its members were read). */
const DATA_IS_OBJECT = 1024;
/** `seq` is plain digits (at most 15), its value in `ScannedEvent.seq`. */
const SEQ_IS_PLAIN = 2048;
/**
 * Something that rules out a dispatch answer but not an "other" one: a member the model reads that
 * is repeated, mistyped or escaped, or a member name of `data` with an escape.
 */
const NOT_A_PLAIN_DISPATCH = 4096;

const DISPATCH_NEEDS = SEEN_TYPE | SEQ_IS_PLAIN | SEEN_AT | SEEN_EXECUTION_ID | DATA_IS_OBJECT | SEEN_TOOL_NAME | SEEN_SERVER | SEEN_SCHEMA_HASH;

// What the last string read held (set by stringEnd).
const HAS_ESCAPE = 0x100;
const HAS_NON_ASCII = 0x80;
/** The OR of the bytes of the last string read, plus HAS_ESCAPE when it held a backslash. */
let stringFlags = 0;

/**
 * The index after the JSON string whose opening quote is at `index`, or -1 when it is not one
 * that ends before `end`. Sets {@link stringFlags}.
 *
 * The common byte (≥ 0x20, no quote, no backslash) takes one test. A read at or past `end` gives
 * a control byte (the line end the caller guarantees, see {@link scanEventBytes}) or, past the
 * buffer, 0 (`?? 0`), both of which fail that test, so the loop needs no bound check of its own.
 */
function stringEnd(bytes: Uint8Array, index: number, end: number): number {
  let flags = 0;
  index++;
  for (;;) {
    const code = bytes[index] ?? 0;
    if (code >= SPACE && code !== QUOTE && code !== BACKSLASH) {
      flags |= code;
      index++;
      continue;
    }
    if (index >= end) return -1;
    if (code === QUOTE) {
      stringFlags = flags;
      return index + 1;
    }
    if (code !== BACKSLASH) return -1; // a control byte
    flags |= HAS_ESCAPE;
    const escaped = bytes[index + 1];
    if (index + 1 >= end) return -1;
    if (escaped === LOWER_U) {
      if (index + 6 > end || !isHex(bytes[index + 2] ?? 0) || !isHex(bytes[index + 3] ?? 0) || !isHex(bytes[index + 4] ?? 0) || !isHex(bytes[index + 5] ?? 0)) return -1;
      index += 6;
    } else if (escaped === QUOTE || escaped === BACKSLASH || escaped === SLASH || escaped === LOWER_B || escaped === LOWER_F || escaped === LOWER_N || escaped === LOWER_R || escaped === LOWER_T) {
      index += 2;
    } else {
      return -1;
    }
  }
}

function isHex(code: number): boolean {
  return (code >= ZERO && code <= NINE) || ((code | 0x20) >= 97 && (code | 0x20) <= LOWER_F);
}

function isDigit(code: number): boolean {
  return code >= ZERO && code <= NINE;
}

/** The index of the first byte at or after `index` that is not JSON whitespace (at most `end`). */
function skipSpace(bytes: Uint8Array, index: number, end: number): number {
  while (index < end) {
    const code = bytes[index];
    if (code !== SPACE && code !== TAB && code !== CARRIAGE_RETURN) break;
    index++;
  }
  return index;
}

/**
 * The index after the JSON number starting at `index`, or -1. (A read past `end` meets the line end
 * or undefined, neither a digit; an index past `end` is then rejected by the caller's next test.)
 */
function numberEnd(bytes: Uint8Array, index: number, end: number): number {
  if (bytes[index] === MINUS) index++;
  let code = bytes[index] ?? 0;
  if (code === ZERO) {
    index++;
  } else if (code > ZERO && code <= NINE) {
    do index++;
    while (isDigit(bytes[index] ?? 0));
  } else {
    return -1;
  }
  if (bytes[index] === DOT) {
    index++;
    if (!isDigit(bytes[index] ?? 0)) return -1;
    do index++;
    while (isDigit(bytes[index] ?? 0));
  }
  code = bytes[index] ?? 0;
  if (code === LOWER_E || code === UPPER_E) {
    index++;
    code = bytes[index] ?? 0;
    if (code === PLUS || code === MINUS) index++;
    if (!isDigit(bytes[index] ?? 0)) return -1;
    do index++;
    while (isDigit(bytes[index] ?? 0));
  }
  return index <= end ? index : -1;
}

/** The index after `true`, `false` or `null` at `index`, or -1. */
function literalEnd(bytes: Uint8Array, index: number, end: number): number {
  const first = bytes[index];
  let length: number;
  if (first === LOWER_T) length = bytes[index + 1] === LOWER_R && bytes[index + 2] === LOWER_U && bytes[index + 3] === LOWER_E ? 4 : 0;
  else if (first === LOWER_F) length = bytes[index + 1] === 97 && bytes[index + 2] === 108 && bytes[index + 3] === 115 && bytes[index + 4] === LOWER_E ? 5 : 0;
  else if (first === LOWER_N) length = bytes[index + 1] === LOWER_U && bytes[index + 2] === 108 && bytes[index + 3] === 108 ? 4 : 0;
  else length = 0;
  return length > 0 && index + length <= end ? index + length : -1;
}

/** The index after a scalar (string, number, literal) at `index`, or -1. */
function scalarEnd(bytes: Uint8Array, index: number, end: number): number {
  const code = bytes[index] ?? 0;
  if (code === QUOTE) return stringEnd(bytes, index, end);
  if (code === MINUS || isDigit(code)) return numberEnd(bytes, index, end);
  return literalEnd(bytes, index, end);
}

/**
 * At an object member's name (`"name" : value`): the index of its value, or -1. The name may hold
 * escapes (members skipped unread need not be known).
 */
function memberValue(bytes: Uint8Array, index: number, end: number): number {
  if (bytes[index] !== QUOTE) return -1;
  index = stringEnd(bytes, index, end);
  if (index < 0) return -1;
  index = skipSpace(bytes, index, end);
  if (bytes[index] !== COLON || index >= end) return -1;
  return skipSpace(bytes, index + 1, end);
}

/**
 * The index after the JSON value at `index` (no whitespace before it), read only to check it, or
 * -1. `depth` is how many containers hold the value. Containers are walked without recursion, with
 * the open ones as a stack of bits (1: an object, 0: an array), which {@link MAX_SCANNED_DEPTH}
 * keeps within 32 bits.
 */
function valueEnd(bytes: Uint8Array, index: number, end: number, depth: number): number {
  let open = 0;
  let level = 0;
  for (;;) {
    const code = bytes[index];
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (depth + level >= MAX_SCANNED_DEPTH) return -1;
      const isObject = code === OPEN_BRACE;
      open = (open << 1) | (isObject ? 1 : 0);
      level++;
      index = skipSpace(bytes, index + 1, end);
      if (index < end && bytes[index] === (isObject ? CLOSE_BRACE : CLOSE_BRACKET)) {
        // Empty: closed at once.
        open >>>= 1;
        level--;
        index++;
      } else {
        if (isObject) {
          index = memberValue(bytes, index, end);
          if (index < 0) return -1;
        }
        continue; // at the first value of the new container
      }
    } else {
      index = scalarEnd(bytes, index, end);
      if (index < 0) return -1;
    }
    // After a value: the next of its container, or the container's end (maybe of several).
    for (;;) {
      if (level === 0) return index;
      index = skipSpace(bytes, index, end);
      if (index >= end) return -1;
      const next = bytes[index];
      const isObject = (open & 1) === 1;
      if (next === COMMA) {
        index = skipSpace(bytes, index + 1, end);
        if (isObject) {
          index = memberValue(bytes, index, end);
          if (index < 0) return -1;
        }
        break;
      }
      if (next !== (isObject ? CLOSE_BRACE : CLOSE_BRACKET)) return -1;
      open >>>= 1;
      level--;
      index++;
    }
  }
}

/** True when `bytes[start, end)` are the bytes of `name`. */
function isName(bytes: Uint8Array, start: number, end: number, name: Uint8Array): boolean {
  if (end - start !== name.length) return false;
  for (let index = 0; index < name.length; index++) if (bytes[start + index] !== name[index]) return false;
  return true;
}

/**
 * Which member of the event the name `bytes[start, end)` is (0 for a member the model does not
 * read): by length first, then by bytes.
 */
function eventMember(bytes: Uint8Array, start: number, end: number): number {
  const first = bytes[start];
  switch (end - start) {
    case 2: // at
      return first === 97 && bytes[start + 1] === LOWER_T ? SEEN_AT : 0;
    case 3: // seq
      return first === 115 && bytes[start + 1] === LOWER_E && bytes[start + 2] === 113 ? SEEN_SEQ : 0;
    case 4: // type, data
      if (first === LOWER_T) return bytes[start + 1] === 121 && bytes[start + 2] === 112 && bytes[start + 3] === LOWER_E ? SEEN_TYPE : 0;
      return first === 100 && bytes[start + 1] === 97 && bytes[start + 2] === LOWER_T && bytes[start + 3] === 97 ? SEEN_DATA : 0;
    case 6: // stepId
      return first === 115 && isName(bytes, start, end, STEP_ID) ? SEEN_STEP_ID : 0;
    case 9: // blueprint
      return first === LOWER_B && isName(bytes, start, end, BLUEPRINT) ? SEEN_BLUEPRINT : 0;
    case 11: // executionId
      return first === LOWER_E && isName(bytes, start, end, EXECUTION_ID) ? SEEN_EXECUTION_ID : 0;
    default:
      return 0;
  }
}

const STEP_ID = bytesOf('stepId');
const BLUEPRINT = bytesOf('blueprint');
const EXECUTION_ID = bytesOf('executionId');
const TOOL_NAME = bytesOf('toolName');
const SERVER = bytesOf('server');
const SCHEMA_HASH = bytesOf('schemaHash');

/** Which member of `data` the name `bytes[start, end)` is (0 for one the model does not read). */
function dataMember(bytes: Uint8Array, start: number, end: number): number {
  switch (end - start) {
    case 6:
      return isName(bytes, start, end, SERVER) ? SEEN_SERVER : 0;
    case 8:
      return isName(bytes, start, end, TOOL_NAME) ? SEEN_TOOL_NAME : 0;
    case 10:
      return isName(bytes, start, end, SCHEMA_HASH) ? SEEN_SCHEMA_HASH : 0;
    default:
      return 0;
  }
}

/** Where {@link scanData} ended (the index after `data`'s closing brace), or -1. */
let dataEnd = -1;

/**
 * Reads the `data` object opening at `index`: returns the bits of what it held and sets
 * {@link dataEnd}; the ranges of `toolName`, `server` and `schemaHash` go into `event`.
 */
function scanData(bytes: Uint8Array, index: number, end: number, event: ScannedEvent): number {
  let seen = DATA_IS_OBJECT;
  dataEnd = -1;
  index = skipSpace(bytes, index + 1, end);
  if (index < end && bytes[index] === CLOSE_BRACE) {
    dataEnd = index + 1;
    return seen;
  }
  for (;;) {
    if (bytes[index] !== QUOTE) return seen;
    const nameStart = index + 1;
    index = stringEnd(bytes, index, end);
    if (index < 0) return seen;
    const nameEnd = index - 1;
    // An escaped name may spell a member the model reads: no dispatch answer then.
    const bit = (stringFlags & HAS_ESCAPE) !== 0 ? NOT_A_PLAIN_DISPATCH : dataMember(bytes, nameStart, nameEnd);
    index = skipSpace(bytes, index, end);
    if (bytes[index] !== COLON || index >= end) return seen;
    index = skipSpace(bytes, index + 1, end);
    if ((seen & bit & ~NOT_A_PLAIN_DISPATCH) !== 0) seen |= NOT_A_PLAIN_DISPATCH;
    seen |= bit;
    if (bit === SEEN_TOOL_NAME || bit === SEEN_SERVER || bit === SEEN_SCHEMA_HASH) {
      const valueStart = index;
      if (bytes[index] === QUOTE) {
        index = stringEnd(bytes, index, end);
        if (index < 0) return seen;
        if ((stringFlags & HAS_ESCAPE) !== 0 || index - valueStart === 2) seen |= NOT_A_PLAIN_DISPATCH;
        if (bit === SEEN_TOOL_NAME) {
          event.toolNameStart = valueStart + 1;
          event.toolNameEnd = index - 1;
        } else if (bit === SEEN_SERVER) {
          event.serverStart = valueStart + 1;
          event.serverEnd = index - 1;
        } else {
          event.schemaHashStart = valueStart + 1;
          event.schemaHashEnd = index - 1;
        }
      } else {
        seen |= NOT_A_PLAIN_DISPATCH;
        index = valueEnd(bytes, index, end, 2);
        if (index < 0) return seen;
      }
    } else {
      index = valueEnd(bytes, index, end, 2);
      if (index < 0) return seen;
    }
    index = skipSpace(bytes, index, end);
    if (index >= end) return seen;
    const code = bytes[index];
    if (code === CLOSE_BRACE) {
      dataEnd = index + 1;
      return seen;
    }
    if (code !== COMMA) return seen;
    index = skipSpace(bytes, index + 1, end);
  }
}

/**
 * Scans the line `bytes[start, end)` (without its line end). See the module comment for what
 * each outcome promises; `event` is written only in part unless the outcome is
 * {@link SCAN_DISPATCH}.
 *
 * The byte at `end`, when there is one, must be a control byte: the `\n` (or the `\r` before it)
 * that ends the line, as it is in a buffer of whole lines. The scan relies on it to stop a string
 * without a bound check per byte; for anything else there it does not answer.
 *
 * Two ways, the same grammar: lines in the layout of docs/formats.md §7 (the members in its order,
 * no whitespace: what the runtime writes) are matched against that layout
 * ({@link scanCommonLayout}), which skips finding out which member each name is; any other line
 * is scanned member by member ({@link scanMembers}).
 */
export function scanEventBytes(bytes: Uint8Array, start: number, end: number, event: ScannedEvent): ScanOutcome {
  if (start < 0 || end > bytes.length || start >= end || (end < bytes.length && (bytes[end] ?? 0) >= SPACE)) return SCAN_UNKNOWN;
  event.blueprintStart = -1;
  event.blueprintEnd = -1;
  event.stepIdStart = -1;
  event.stepIdEnd = -1;
  const common = scanCommonLayout(bytes, start, end, event);
  if (common !== SCAN_UNKNOWN) return common;
  event.blueprintStart = -1;
  event.blueprintEnd = -1;
  event.stepIdStart = -1;
  event.stepIdEnd = -1;
  const index = skipSpace(bytes, start, end);
  if (bytes[index] !== OPEN_BRACE || index >= end) return SCAN_UNKNOWN;
  return scanMembers(bytes, skipSpace(bytes, index + 1, end), end, event, 0, 0, 0);
}

/**
 * Scans the members of the line's object from `index` (the opening quote of a member's name, or
 * whatever is there instead) to the end of the line, and answers for the line. `seen`, `typeStart`
 * and `typeEnd` are what the members before `index` held (none, or only a plain `type`).
 */
function scanMembers(bytes: Uint8Array, index: number, end: number, event: ScannedEvent, seen: number, typeStart: number, typeEnd: number): ScanOutcome {
  for (;;) {
    // A member: its name (an escaped one could spell any member, so the scan stops), then its value.
    if (bytes[index] !== QUOTE) return SCAN_UNKNOWN;
    const nameStart = index + 1;
    index = stringEnd(bytes, index, end);
    if (index < 0 || (stringFlags & HAS_ESCAPE) !== 0) return SCAN_UNKNOWN;
    const bit = eventMember(bytes, nameStart, index - 1);
    index = skipSpace(bytes, index, end);
    if (bytes[index] !== COLON || index >= end) return SCAN_UNKNOWN;
    index = skipSpace(bytes, index + 1, end);
    if ((seen & bit) !== 0) {
      // Repeated: `JSON.parse` keeps the last one. A repeated type decides the answer, so none.
      if (bit === SEEN_TYPE) return SCAN_UNKNOWN;
      seen |= NOT_A_PLAIN_DISPATCH;
    }
    seen |= bit;
    const valueStart = index;
    const code = bytes[index];
    if (bit === 0) {
      index = valueEnd(bytes, index, end, 1);
    } else if (bit === SEEN_SEQ) {
      index = numberEnd(bytes, index, end);
      if (index < 0) {
        // Not a number: a mistyped seq, if the value is JSON at all.
        seen |= NOT_A_PLAIN_DISPATCH;
        index = valueEnd(bytes, valueStart, end, 1);
      } else {
        const seq = plainWholeNumber(bytes, valueStart, index);
        if (seq >= 0) {
          event.seq = seq;
          seen |= SEQ_IS_PLAIN;
        }
      }
    } else if (bit === SEEN_DATA) {
      if (code === OPEN_BRACE) {
        seen |= scanData(bytes, index, end, event);
        index = dataEnd;
      } else {
        seen |= NOT_A_PLAIN_DISPATCH;
        index = valueEnd(bytes, index, end, 1);
      }
    } else if (code !== QUOTE) {
      // A string member the model reads, with a value of another type.
      if (bit === SEEN_TYPE) return SCAN_UNKNOWN;
      seen |= NOT_A_PLAIN_DISPATCH;
      index = valueEnd(bytes, index, end, 1);
    } else {
      index = stringEnd(bytes, index, end);
      if (index < 0) return SCAN_UNKNOWN;
      const flags = stringFlags;
      if ((flags & HAS_ESCAPE) !== 0) {
        if (bit === SEEN_TYPE) return SCAN_UNKNOWN;
        seen |= NOT_A_PLAIN_DISPATCH;
      }
      const from = valueStart + 1;
      const to = index - 1;
      if (bit === SEEN_TYPE) {
        typeStart = from;
        typeEnd = to;
      } else if (bit === SEEN_AT) {
        event.atStart = from;
        event.atEnd = to;
        if (from === to) seen |= NOT_A_PLAIN_DISPATCH;
      } else if (bit === SEEN_EXECUTION_ID) {
        event.executionIdStart = from;
        event.executionIdEnd = to;
        event.executionIdAscii = (flags & HAS_NON_ASCII) === 0;
        if (from === to) seen |= NOT_A_PLAIN_DISPATCH;
      } else if (bit === SEEN_BLUEPRINT) {
        event.blueprintStart = from;
        event.blueprintEnd = to;
      } else {
        event.stepIdStart = from;
        event.stepIdEnd = to;
      }
    }
    if (index < 0) return SCAN_UNKNOWN;
    index = skipSpace(bytes, index, end);
    if (index >= end) return SCAN_UNKNOWN;
    const next = bytes[index];
    if (next === CLOSE_BRACE) break;
    if (next !== COMMA) return SCAN_UNKNOWN;
    index = skipSpace(bytes, index + 1, end);
  }
  if (skipSpace(bytes, index + 1, end) !== end || (seen & SEEN_TYPE) === 0) return SCAN_UNKNOWN;
  if (!isName(bytes, typeStart, typeEnd, DISPATCH_TYPE)) return SCAN_OTHER;
  return (seen & DISPATCH_NEEDS) === DISPATCH_NEEDS && (seen & NOT_A_PLAIN_DISPATCH) === 0 ? SCAN_DISPATCH : SCAN_UNKNOWN;
}

/**
 * `bytes[start, end)`, a JSON number, as a whole number when it is plain digits (at most 15, so
 * the value is exact), else -1 (negative, a fraction, an exponent, longer): `JSON.parse` reads those.
 */
function plainWholeNumber(bytes: Uint8Array, start: number, end: number): number {
  if (end - start > 15) return -1;
  let value = 0;
  for (let index = start; index < end; index++) {
    const digit = (bytes[index] ?? 0) - ZERO;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

// The common layout, in the pieces between values.
const LAYOUT_TYPE = bytesOf('{"type":"');
const LAYOUT_SEQ = bytesOf('","seq":');
const LAYOUT_AT = bytesOf(',"at":"');
const LAYOUT_END = bytesOf('"}}');

/**
 * The string fields after `at`, in the layout's order: the piece before each (from the closing
 * quote of the field before), and whether it may be absent (`blueprint`, `stepId`). One loop over
 * this table, rather than the same few lines written out per field, keeps the function small,
 * which gets it optimized sooner and compiled faster.
 */
const FIELD_EXECUTION_ID = 0;
const FIELD_BLUEPRINT = 1;
const FIELD_STEP_ID = 2;
const FIELD_TOOL_NAME = 3;
const FIELD_SERVER = 4;
const FIELD_SCHEMA_HASH = 5;
const LAYOUT_FIELDS = [bytesOf('","executionId":"'), bytesOf('","blueprint":"'), bytesOf('","stepId":"'), bytesOf('","data":{"toolName":"'), bytesOf('","server":"'), bytesOf('","schemaHash":"')];

/**
 * The index after `piece` when the bytes at `index` are exactly it, else -1. A read at `end` meets
 * the line end (a control byte, never in a piece), so the comparison stops there by itself.
 */
function matchPiece(bytes: Uint8Array, index: number, piece: Uint8Array): number {
  const length = piece.length;
  for (let at = 0; at < length; at++) if (bytes[index + at] !== piece[at]) return -1;
  return index + length;
}

/**
 * The index of the closing quote of the string whose characters start at `index`, when it holds
 * no escape (nor a control byte, which JSON forbids), else -1; sets {@link stringFlags}. The line
 * end stops the loop (see {@link stringEnd}).
 */
function plainStringEnd(bytes: Uint8Array, index: number): number {
  let flags = 0;
  for (;;) {
    const code = bytes[index] ?? 0;
    if (code >= SPACE && code !== QUOTE && code !== BACKSLASH) {
      flags |= code;
      index++;
      continue;
    }
    stringFlags = flags;
    return code === QUOTE ? index : -1;
  }
}

/**
 * A line in the layout of docs/formats.md §7, matched piece by piece: `{"type":"MCP_DISPATCHED",
 * "seq":N,"at":"…","executionId":"…"`, then `"blueprint":"…"` and `"stepId":"…"` when present,
 * then `"data":{"toolName":"…","server":"…","schemaHash":"…"}}` and nothing after it. Every piece
 * is JSON and every value a plain string (or plain digits), so a match is the answer
 * {@link SCAN_DISPATCH} of the module comment. A line whose type is another plain string goes on
 * to {@link scanMembers} after it; anything else is {@link SCAN_UNKNOWN} here, and the caller
 * scans the line member by member.
 */
function scanCommonLayout(bytes: Uint8Array, start: number, end: number, event: ScannedEvent): ScanOutcome {
  let index = matchPiece(bytes, start, LAYOUT_TYPE);
  if (index < 0) return SCAN_UNKNOWN;
  const typeStart = index;
  let close = plainStringEnd(bytes, index);
  if (close < 0) return SCAN_UNKNOWN;
  if (!isName(bytes, typeStart, close, DISPATCH_TYPE)) {
    if (bytes[close + 1] !== COMMA) return SCAN_UNKNOWN;
    return scanMembers(bytes, skipSpace(bytes, close + 2, end), end, event, SEEN_TYPE, typeStart, close);
  }
  index = matchPiece(bytes, close, LAYOUT_SEQ);
  if (index < 0) return SCAN_UNKNOWN;
  // seq: 0, or 1 to 15 digits without a leading zero (JSON has none).
  const seqStart = index;
  let seq = (bytes[index] ?? 0) - ZERO;
  if (!(seq >= 0 && seq <= 9)) return SCAN_UNKNOWN;
  index++;
  if (seq !== 0) {
    for (;;) {
      const digit = (bytes[index] ?? 0) - ZERO;
      if (!(digit >= 0 && digit <= 9)) break;
      seq = seq * 10 + digit;
      index++;
    }
    if (index - seqStart > 15) return SCAN_UNKNOWN;
  }
  event.seq = seq;
  index = matchPiece(bytes, index, LAYOUT_AT);
  if (index < 0) return SCAN_UNKNOWN;
  close = plainStringEnd(bytes, index);
  if (close <= index) return SCAN_UNKNOWN; // not plain, or empty
  event.atStart = index;
  event.atEnd = close;
  for (let field = FIELD_EXECUTION_ID; field <= FIELD_SCHEMA_HASH; field++) {
    const piece = LAYOUT_FIELDS[field];
    if (piece === undefined) return SCAN_UNKNOWN; // never: the loop runs over the table's indices
    index = matchPiece(bytes, close, piece);
    if (index < 0) {
      // An optional field that is not there: the next piece must match at the same place.
      if (field === FIELD_BLUEPRINT || field === FIELD_STEP_ID) continue;
      return SCAN_UNKNOWN;
    }
    const valueEnd = plainStringEnd(bytes, index);
    // Not plain, or empty where the field must not be.
    if (valueEnd < 0 || (valueEnd === index && field !== FIELD_BLUEPRINT && field !== FIELD_STEP_ID)) return SCAN_UNKNOWN;
    switch (field) {
      case FIELD_EXECUTION_ID:
        event.executionIdStart = index;
        event.executionIdEnd = valueEnd;
        event.executionIdAscii = (stringFlags & HAS_NON_ASCII) === 0;
        break;
      case FIELD_BLUEPRINT:
        event.blueprintStart = index;
        event.blueprintEnd = valueEnd;
        break;
      case FIELD_STEP_ID:
        event.stepIdStart = index;
        event.stepIdEnd = valueEnd;
        break;
      case FIELD_TOOL_NAME:
        event.toolNameStart = index;
        event.toolNameEnd = valueEnd;
        break;
      case FIELD_SERVER:
        event.serverStart = index;
        event.serverEnd = valueEnd;
        break;
      default:
        event.schemaHashStart = index;
        event.schemaHashEnd = valueEnd;
    }
    close = valueEnd;
  }
  index = matchPiece(bytes, close, LAYOUT_END);
  return index >= 0 && skipSpace(bytes, index, end) === end ? SCAN_DISPATCH : SCAN_UNKNOWN;
}

/**
 * The two decimal digits at `bytes[index, index + 2)` as a number, or -1000 when either is not a
 * digit (far enough below every bound checked that any sum containing it fails the check).
 */
function twoDigitsAt(bytes: Uint8Array, index: number): number {
  const tens = (bytes[index] ?? 0) - ZERO;
  const ones = (bytes[index + 1] ?? 0) - ZERO;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1000;
}

/**
 * The time of `bytes[start, end)` when it is `YYYY-MM-DDTHH:mm:ss.sssZ` with a day up to the 28th
 * and a year from 100 (the form history.ts `parseCanonicalTimeAt` reads, ported to bytes), in
 * milliseconds; NaN for anything else, which the caller decodes and gives to `Date.parse`. When it
 * is not NaN, `new Date(result).toISOString()` gives the same characters back.
 */
export function parseCanonicalTimeBytes(bytes: Uint8Array, start: number, end: number): number {
  if (end - start !== 24 || bytes[start + 23] !== 90 || bytes[start + 4] !== MINUS || bytes[start + 7] !== MINUS || bytes[start + 10] !== 84) return NaN;
  if (bytes[start + 13] !== COLON || bytes[start + 16] !== COLON || bytes[start + 19] !== DOT) return NaN;
  const century = twoDigitsAt(bytes, start);
  const yearOfCentury = twoDigitsAt(bytes, start + 2);
  const year = century * 100 + yearOfCentury;
  const month = twoDigitsAt(bytes, start + 5);
  const day = twoDigitsAt(bytes, start + 8);
  const hour = twoDigitsAt(bytes, start + 11);
  const minute = twoDigitsAt(bytes, start + 14);
  const second = twoDigitsAt(bytes, start + 17);
  const lastDigit = (bytes[start + 22] ?? 0) - ZERO;
  const millisecond = lastDigit >= 0 && lastDigit <= 9 ? twoDigitsAt(bytes, start + 20) * 10 + lastDigit : -1;
  if (!isCanonicalTimeFields(century, yearOfCentury, month, day, hour, minute, second, millisecond)) return NaN;
  const yearMonth = year * 16 + month;
  if (yearMonth !== cachedYearMonth) {
    cachedMonthStart = daysFromCivil(year, month, 1);
    cachedYearMonth = yearMonth;
  }
  return timeOnDay(cachedMonthStart + day - 1, hour, minute, second, millisecond);
}

/**
 * The first day of the month of the last time read, in days since 1970-01-01: a log's times fall in
 * a few months, and before the optimizing compiler runs every division of the calendar arithmetic
 * makes a heap number.
 */
let cachedYearMonth = -1;
let cachedMonthStart = 0;

