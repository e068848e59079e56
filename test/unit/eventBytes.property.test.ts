/**
 * The byte path of the history model (core/history/eventBytes.ts and `HistoryModel.foldLineBytes`)
 * against the string path, which decodes each line and reads it with `JSON.parse`.
 *
 * Lines are generated as bytes: events with every field present, absent, mistyped or repeated, in
 * the runtime's layout or in another member order, with whitespace (space, tab, carriage return)
 * between tokens; strings with escapes of every kind, control characters, non-ASCII and lone
 * surrogates; numbers in every notation; then the same lines mutated (bytes deleted, inserted or
 * replaced, among them invalid UTF-8 sequences and a byte-order mark), joined by `\n` or `\r\n`.
 * Properties:
 * 1. whatever the scanner answers, the string path agrees: a dispatch is a JSON object that passes
 *    every field check, each field range decodes to exactly the parsed value; an "other" is a JSON
 *    object whose type is another string;
 * 2. the scanner answers every plain line (the fast path is taken, not only never wrong);
 * 3. a model folded with `foldLineBytes` equals the model folded line by line by the string path
 *    (`foldLine` of each decoded line at its byte offset): counters, problems (exact objects),
 *    keys, counts, first, last and recent executions; and the counters, problems and key counts
 *    also equal what `parseEventLine` says of each line (an oracle that shares no fold code);
 * 4. the same when some lines of a log are folded by one path and the rest by the other, so that
 *    each path finds the entries the other made.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { SCAN_DISPATCH, SCAN_OTHER, SCAN_UNKNOWN, ScannedEvent, scanEventBytes } from '../../server/src/core/history/eventBytes';
import { HistoryModel, type LineProblem, parseEventLine } from '../../server/src/core/history/history';

const RUNS = 2000;

/** Characters that stress a scanner: quotes, escapes, controls, non-ASCII, a lone surrogate. */
const awkward = fc.constantFrom('a', 'b', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\r', '\b', '\f', '\u0000', '\u001f', '\u007f', 'é', '€', '\ud83d\ude00', '\ud800', '\udc00', '\u2028', '\ufeff', ':', ',', '{', '}', '[', ']');
const plainChar = fc.constantFrom('a', 'b', 'Z', '0', '9', '_', '-', '.', ':', ' ', '/', 'é', '€', 'ÿ', '\ud83d\ude00', '{', '}', '[', ']', ',');
const awkwardString = fc.array(awkward, { maxLength: 12 }).map((chars) => chars.join(''));
const plainString = fc.array(plainChar, { minLength: 1, maxLength: 16 }).map((chars) => chars.join(''));
const hash = fc.array(fc.constantFrom(...'0123456789abcdef'), { minLength: 16, maxLength: 16 }).map((digits) => `fnv1a64:${digits.join('')}`);
const time = fc.integer({ min: Date.UTC(1999, 0, 1), max: Date.UTC(2099, 11, 31) }).map((ms) => new Date(ms).toISOString());
/** Times `Date.parse` reads that are not the canonical form, and some it does not read. */
const otherTime = fc.constantFrom('2026-08-20T10:15:02Z', '2026-08-20T10:15:02.118+02:00', '2026-02-29T00:00:00.000Z', '2026-08-31T23:59:59.999Z', '0099-01-01T00:00:00.000Z', 'yesterday', '2026-13-01T00:00:00.000Z', '2026-08-20T10:15:02.11Z');

/** Any JSON value, small, with strings from `strings`. */
function jsonOf(strings: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  return fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      strings,
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(strings, tie('value'), { maxKeys: 3, noNullPrototype: true }),
    ),
  })).value;
}
const anyJson = jsonOf(fc.oneof({ weight: 3, arbitrary: plainString }, { weight: 1, arbitrary: awkwardString }));
const plainJson = jsonOf(plainString);

/** A field's value: usually well typed, sometimes anything. */
function field<T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 6, arbitrary: good }, { weight: 1, arbitrary: anyJson });
}

/** A number written as JSON text, in every notation (and some that are not JSON). */
class Raw {
  constructor(readonly text: string) {}
}
const seqText = fc.oneof(
  { weight: 4, arbitrary: fc.nat().map((value) => new Raw(String(value))) },
  { weight: 2, arbitrary: fc.constantFrom('0', '-0', '1.0', '1e2', '1E+2', '2e-1', '-1', '1.5', '123456789012345', '1234567890123456', '9007199254740993', '01', '1.', '.5', '-', '1e', '+1').map((text) => new Raw(text)) },
  { weight: 1, arbitrary: fc.constant('7') },
);

/** The members of an event, in order, possibly repeated; `plain` keeps every value well typed. */
function members(plain: boolean): fc.Arbitrary<Array<[string, unknown]>> {
  const str = plain ? plainString : fc.oneof({ weight: 4, arbitrary: plainString }, { weight: 1, arbitrary: awkwardString });
  const extra = plain ? plainJson : anyJson;
  const data = fc
    .record(
      { toolName: plain ? str : field(str), server: plain ? str : field(str), schemaHash: plain ? hash : field(fc.oneof(hash, str, fc.constant('fnv1a64:XYZ'))), extra },
      { requiredKeys: plain ? ['toolName', 'server', 'schemaHash'] : [] },
    )
    .map((value) => Object.entries(value));
  const dataValue = plain ? data.map((entries) => Object.fromEntries(entries)) : fc.oneof({ weight: 5, arbitrary: data.map((entries) => Object.fromEntries(entries)) }, { weight: 1, arbitrary: anyJson });
  const type = plain ? fc.constantFrom('MCP_DISPATCHED', 'STEP_STARTED', 'EXECUTION_STARTED') : field(fc.constantFrom('MCP_DISPATCHED', 'MCP_DISPATCHED', 'STEP_STARTED', ''));
  const entry = fc.record(
    {
      type,
      seq: plain ? fc.nat().map((value) => new Raw(String(value))) : seqText,
      at: plain ? time : field(fc.oneof(time, otherTime, str, fc.constant(''))),
      executionId: plain ? str : field(fc.oneof(str, fc.constant(''), fc.constant('x'.repeat(64)), fc.constant('y'.repeat(65)))),
      blueprint: plain ? str : field(str),
      stepId: plain ? str : field(str),
      data: dataValue,
      other: extra,
    },
    { requiredKeys: plain ? ['type', 'seq', 'at', 'executionId', 'data'] : [] },
  );
  return fc.tuple(entry, fc.boolean(), fc.nat(8)).map(([record, shuffle, repeat]) => {
    const list: Array<[string, unknown]> = Object.entries(record);
    if (shuffle) list.reverse();
    // A repeated member (JSON.parse keeps the last one) in lines that may be mistyped.
    if (!plain && repeat < list.length && repeat % 3 === 0) list.push([list[repeat]![0], list[(repeat + 1) % list.length]![1]]);
    return list;
  });
}

/** How strings are written: as JSON.stringify writes them, or with escapes it never writes. */
type Style = 'plain' | 'escaped';

/** A JSON string literal of `text`; `escaped` writes some characters as `\uXXXX` or `\/`. */
function quote(text: string, style: Style): string {
  const json = JSON.stringify(text);
  if (style === 'plain') return json;
  let out = '"';
  const inner = json.slice(1, -1);
  for (let index = 0; index < inner.length; index++) {
    const char = inner[index]!;
    if (char === '\\') {
      // An escape already: keep it whole.
      const next = inner[index + 1]!;
      const length = next === 'u' ? 6 : 2;
      out += inner.slice(index, index + length);
      index += length - 1;
    } else if (char === '/') out += '\\/';
    else if (index % 3 === 0) out += `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else out += char;
  }
  return `${out}"`;
}

/** JSON text of a value, its strings written in `style`, with `gap` between tokens. */
function valueText(value: unknown, style: Style, gap: string): string {
  if (value instanceof Raw) return value.text;
  if (typeof value === 'string') return quote(value, style);
  if (Array.isArray(value)) return `[${gap}${value.map((item) => valueText(item, style, gap)).join(`${gap},${gap}`)}${gap}]`;
  if (typeof value === 'object' && value !== null) return objectText(Object.entries(value), style, gap);
  return JSON.stringify(value) ?? 'null';
}

function objectText(list: ReadonlyArray<[string, unknown]>, style: Style, gap: string): string {
  return `{${gap}${list.map(([name, item]) => `${quote(name, style)}${gap}:${gap}${valueText(item, style, gap)}`).join(`${gap},${gap}`)}${gap}}`;
}

const gap = fc.constantFrom('', '', '', ' ', '\t', '\r', ' \t\r ');
const style = fc.constantFrom<Style>('plain', 'plain', 'plain', 'escaped');

/** Byte sequences a log may hold that are not UTF-8, a byte-order mark, and bytes JSON forbids. */
const oddBytes = fc.constantFrom([0xff], [0xc0, 0x80], [0x80], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80], [0xef, 0xbb, 0xbf], [0x00], [0x1f], [0x7f], [0x5c], [0x22], [0x0d], [0x20], [0x09]);

const mutation = fc.record({ at: fc.nat(), kind: fc.constantFrom('delete', 'insert', 'replace'), bytes: fc.oneof(oddBytes, fc.constantFrom(...'"\\{}[],: 1-.extnu0'.split('').map((char) => [char.charCodeAt(0)]))) });

function mutate(bytes: Buffer, change: { at: number; kind: string; bytes: readonly number[] }): Buffer {
  const at = bytes.length === 0 ? 0 : change.at % bytes.length;
  const insert = Buffer.from(change.bytes);
  if (change.kind === 'delete') return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
  if (change.kind === 'insert') return Buffer.concat([bytes.subarray(0, at), insert, bytes.subarray(at)]);
  return Buffer.concat([bytes.subarray(0, at), insert, bytes.subarray(at + 1)]);
}

/** One line as bytes, without its line end. */
const plainLine = fc.tuple(members(true), gap).map(([list, space]) => Buffer.from(`${space}${objectText(list, 'plain', space)}${space}`));
/** The runtime's own layout: the members in the order of docs/formats.md §7, no whitespace. */
const layoutLine = fc
  .record({ seq: fc.nat(), at: fc.oneof({ weight: 4, arbitrary: time }, { weight: 1, arbitrary: otherTime }), executionId: plainString, blueprint: fc.option(plainString), stepId: fc.option(plainString), tool: plainString, server: plainString, hash, type: fc.constantFrom('MCP_DISPATCHED', 'MCP_DISPATCHED', 'STEP_STARTED') })
  .map((event) =>
    Buffer.from(
      JSON.stringify({
        type: event.type,
        seq: event.seq,
        at: event.at,
        executionId: event.executionId,
        ...(event.blueprint !== null ? { blueprint: event.blueprint } : {}),
        ...(event.stepId !== null ? { stepId: event.stepId } : {}),
        data: { toolName: event.tool, server: event.server, schemaHash: event.hash },
      }),
    ),
  );
const anyEventLine = fc.tuple(members(false), style, gap).map(([list, how, space]) => Buffer.from(objectText(list, how, space)));
const anyLine = fc.oneof(
  { weight: 2, arbitrary: layoutLine },
  { weight: 2, arbitrary: plainLine },
  { weight: 2, arbitrary: fc.tuple(fc.oneof(layoutLine, plainLine), mutation).map(([bytes, change]) => mutate(bytes, change)) },
  { weight: 4, arbitrary: anyEventLine },
  { weight: 3, arbitrary: fc.tuple(anyEventLine, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([bytes, changes]) => changes.reduce(mutate, bytes)) },
  { weight: 1, arbitrary: anyJson.map((value) => Buffer.from(JSON.stringify(value))) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('', ' ', '\t', '{}', '[]', 'null', '{"type":"MCP_DISPATCHED"}', '{"type":1}', '01', '{"a":01}', '{"a":1.}', '{"a":.5}', '{"a":-}', '{"a":1e}', '{"a":tru}', '{"a":[1,]}', '{"a":{"b":1,}}', '{,}', '{"a" "b"}', `{"type":"X","a":${'['.repeat(40)}${']'.repeat(40)}}`, `{"type":"X","a":${'['.repeat(31)}${']'.repeat(31)}}`)
      .map((text) => Buffer.from(text)),
  },
);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** What the string path makes of a line (decoded as the reader decodes it), field rules alone. */
function oracle(text: string): { kind: 'not-json' | 'not-object' | 'no-type' | 'other' | 'bad-dispatch' } | { kind: 'dispatch'; event: Record<string, unknown>; data: Record<string, unknown> } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'not-json' };
  }
  if (!isRecord(value)) return { kind: 'not-object' };
  if (typeof value.type !== 'string') return { kind: 'no-type' };
  if (value.type !== 'MCP_DISPATCHED') return { kind: 'other' };
  const { seq: number, at, executionId, blueprint, stepId, data } = value;
  const valid =
    typeof number === 'number' && Number.isInteger(number) && number >= 0 &&
    nonEmptyString(at) && nonEmptyString(executionId) &&
    (blueprint === undefined || typeof blueprint === 'string') &&
    (stepId === undefined || typeof stepId === 'string') &&
    isRecord(data) && nonEmptyString(data.toolName) && nonEmptyString(data.server) && nonEmptyString(data.schemaHash);
  return valid && isRecord(data) ? { kind: 'dispatch', event: value, data } : { kind: 'bad-dispatch' };
}

/** The line's bytes followed by a line end, as the model receives them. */
function withLineEnd(line: Buffer): Buffer {
  return Buffer.concat([line, Buffer.from('\n')]);
}

function assertAgrees(line: Buffer): number {
  const bytes = withLineEnd(line);
  const event = new ScannedEvent();
  const outcome = scanEventBytes(bytes, 0, line.length, event);
  const text = line.toString('utf8');
  const expected = oracle(text);
  const where = `line ${JSON.stringify(text)} (${line.toString('hex')})`;
  if (outcome === SCAN_OTHER) assert.equal(expected.kind, 'other', `${where}: scanned as another type`);
  if (outcome === SCAN_DISPATCH) {
    assert.equal(expected.kind, 'dispatch', `${where}: scanned as a dispatch`);
    if (expected.kind !== 'dispatch') return outcome;
    const slice = (start: number, end: number): string | undefined => (start < 0 ? undefined : bytes.toString('utf8', start, end));
    assert.deepEqual(
      {
        seq: event.seq,
        at: slice(event.atStart, event.atEnd),
        executionId: slice(event.executionIdStart, event.executionIdEnd),
        executionIdAscii: event.executionIdAscii,
        blueprint: slice(event.blueprintStart, event.blueprintEnd),
        stepId: slice(event.stepIdStart, event.stepIdEnd),
        toolName: slice(event.toolNameStart, event.toolNameEnd),
        server: slice(event.serverStart, event.serverEnd),
        schemaHash: slice(event.schemaHashStart, event.schemaHashEnd),
      },
      {
        seq: expected.event.seq,
        at: expected.event.at,
        executionId: expected.event.executionId,
        executionIdAscii: [...String(expected.event.executionId)].every((char) => char.charCodeAt(0) < 0x80),
        blueprint: expected.event.blueprint,
        stepId: expected.event.stepId,
        toolName: expected.data.toolName,
        server: expected.data.server,
        schemaHash: expected.data.schemaHash,
      },
      `${where}: the fields`,
    );
  }
  return outcome;
}

/** A log of lines as bytes, each ended by `\n` or `\r\n`; `open` leaves the last line without one. */
function logOf(lines: readonly Buffer[], crlf: readonly boolean[], open: boolean): Buffer {
  const parts: Buffer[] = [];
  lines.forEach((line, index) => {
    parts.push(line);
    if (!open || index < lines.length - 1) parts.push(Buffer.from(crlf[index % crlf.length] ? '\r\n' : '\n'));
  });
  return Buffer.concat(parts);
}

/** The log's lines as the reader cuts them: content (one `\r` before `\n` dropped), line, byte offset. */
function cut(log: Buffer): Array<{ text: string; line: number; offset: number }> {
  const lines: Array<{ text: string; line: number; offset: number }> = [];
  let from = 0;
  let line = 1;
  while (from < log.length) {
    let end = log.indexOf(10, from);
    const terminated = end >= 0;
    if (!terminated) end = log.length;
    const contentEnd = end > from && log[end - 1] === 13 ? end - 1 : end;
    lines.push({ text: log.toString('utf8', from, contentEnd), line, offset: from });
    from = terminated ? end + 1 : end;
    line++;
  }
  return lines;
}

/** Everything a model tells about one log, as plain data (summaries read through their getters). */
function picture(model: HistoryModel): unknown {
  const stats = model.logStats('log');
  return {
    stats,
    keys: model.keys().map((key) => ({ server: key.server, tool: key.tool, schemaHash: key.schemaHash, count: key.count, first: key.first, last: key.last, recent: key.recent })),
  };
}

/** Folds `log` line by line through the string path, at the lines' byte offsets. */
function foldByText(model: HistoryModel, log: Buffer): void {
  for (const { text, line, offset } of cut(log)) model.foldLine('log', text, { line, offset });
}

/** What parseEventLine says of each line: counters, problems, and the count of each key. */
function parsedPicture(log: Buffer): unknown {
  const counters = { lines: 0, blank: 0, dispatched: 0, skipped: 0, malformed: 0 };
  const problems: LineProblem[] = [];
  const counts = new Map<string, number>();
  for (const { text, line, offset } of cut(log)) {
    const parsed = parseEventLine(text, { line, offset });
    counters.lines++;
    if (parsed.kind === 'blank') counters.blank++;
    else if (parsed.kind === 'other') counters.skipped++;
    else if (parsed.kind === 'problem') {
      counters.malformed++;
      problems.push(parsed.problem);
    } else {
      counters.dispatched++;
      const key = JSON.stringify([parsed.event.server, parsed.event.toolName, parsed.event.schemaHash]);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return { counters, problems: problems.slice(0, 100), counts: [...counts].sort() };
}

function modelParsedPicture(model: HistoryModel): unknown {
  const stats = model.logStats('log');
  return {
    counters: { lines: stats.lines, blank: stats.blank, dispatched: stats.dispatched, skipped: stats.skipped, malformed: stats.malformed },
    problems: stats.problems,
    counts: model
      .keys()
      .map((key): [string, number] => [JSON.stringify([key.server, key.tool, key.schemaHash]), key.count])
      .sort(),
  };
}

const logLines = fc.array(fc.oneof({ weight: 3, arbitrary: fc.oneof(layoutLine, plainLine) }, { weight: 2, arbitrary: anyLine }), { maxLength: 40 });
/** Lines with a few repeated keys, so that the ring of recent executions is reused. */
const repeatingLog = fc.tuple(fc.array(layoutLine, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { minLength: 1, maxLength: 40 })).map(([lines, picks]) => picks.map((pick) => lines[pick % lines.length]!));

describe('the byte scanner of event lines', () => {
  test('agrees with the string path on every line it answers for', () => {
    let answered = 0;
    let total = 0;
    fc.assert(
      fc.property(anyLine, (line) => {
        // A line end inside a generated line would split it: each piece is a line of its own.
        for (const piece of cut(line)) {
          total++;
          if (assertAgrees(lineBytes(line, piece.offset)) !== SCAN_UNKNOWN) answered++;
        }
      }),
      { numRuns: RUNS },
    );
    // The generator must reach the scanner's answers too, or the property above says little.
    assert.ok(answered > total / 5, `the scanner answered ${answered} of ${total} generated lines`);
  });

  test('answers every plain line: in the runtime layout or not, spaced or not, in any member order', () => {
    fc.assert(
      fc.property(fc.oneof(layoutLine, plainLine), (line) => {
        const outcome = assertAgrees(line);
        const expected = oracle(line.toString('utf8'));
        assert.equal(outcome, expected.kind === 'dispatch' ? SCAN_DISPATCH : SCAN_OTHER, `line ${line.toString('utf8')}`);
      }),
      { numRuns: RUNS },
    );
  });

  test('leaves escapes, control bytes, repeated names, other numbers and deep nesting to the string path', () => {
    const plain = '{"type":"MCP_DISPATCHED","seq":1,"at":"2026-08-01T00:00:00.000Z","executionId":"e1","data":{"toolName":"t","server":"s","schemaHash":"fnv1a64:0123456789abcdef"}}';
    assert.equal(assertAgrees(Buffer.from(plain)), SCAN_DISPATCH);
    assert.equal(assertAgrees(Buffer.from(plain.replace('MCP_DISPATCHED', 'STEP_STARTED'))), SCAN_OTHER);
    // Escapes, whitespace and nesting in what the model does not read are read, not left.
    for (const text of [
      plain.replace('}}', '},"note":"a\\u0041\\/\\n\\"\\\\ é \\ud83d\\ude00"}'),
      plain.replace('}}', ',"more":[{"a":[1,-2.5e+3,true,false,null,{}]},[]]}}'),
      plain.replace('{"type"', ' \t\r{ "type" ').replace(',"seq":1,', ' ,\t"seq" : 1 ,'),
      plain.replace('"seq":1,', '"seq":0,"blueprint":"","stepId":"s\u00e9",'),
    ]) {
      assert.equal(assertAgrees(Buffer.from(text)), SCAN_DISPATCH, `line ${JSON.stringify(text)}`);
    }
    assert.equal(assertAgrees(Buffer.from(plain.replace('MCP_DISPATCHED', 'STEP_STARTED').replace('"e1"', '"e\\u0031"').replace('"seq":1', '"seq":-1.5'))), SCAN_OTHER);
    for (const text of [
      plain.replace('"e1"', '"e\\u0031"'),
      plain.replace('"e1"', '"e\t1"'),
      plain.replace('"type"', '"typ\\u0065"'),
      plain.replace('"toolName"', '"tool\\u004eame"'),
      plain.replace('"seq":1', '"seq":1,"seq":2'),
      plain.replace('"toolName":"t"', '"toolName":"t","toolName":"u"'),
      plain.replace('"seq":1', '"seq":1.0'),
      plain.replace('"seq":1', '"seq":1e0'),
      plain.replace('"seq":1', '"seq":-0'),
      plain.replace('"seq":1', '"seq":1234567890123456'),
      plain.replace('}}', `},"deep":${'['.repeat(40)}${']'.repeat(40)}}`),
      `\ufeff${plain}`,
    ]) {
      assert.equal(assertAgrees(Buffer.from(text)), SCAN_UNKNOWN, `line ${JSON.stringify(text)}`);
    }
    // Not a line end after the range: no answer (the scan relies on one).
    assert.equal(scanEventBytes(Buffer.from(`${plain}x`), 0, plain.length, new ScannedEvent()), SCAN_UNKNOWN);
  });
});

/** The bytes of the line starting at `offset` in `bytes`, without its line end. */
function lineBytes(bytes: Buffer, offset: number): Buffer {
  let end = bytes.indexOf(10, offset);
  if (end < 0) end = bytes.length;
  if (end > offset && bytes[end - 1] === 13) end--;
  return bytes.subarray(offset, end);
}

describe('HistoryModel.foldLineBytes', () => {
  test('folds a log exactly as the string path folds its decoded lines', () => {
    fc.assert(
      fc.property(fc.oneof(logLines, repeatingLog), fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }), fc.boolean(), fc.integer({ min: 1, max: 3 }), (lines, crlf, open, recentLimit) => {
        const log = logOf(lines, crlf, open);
        const bytes = new HistoryModel({ recentLimit });
        const end = bytes.foldLineBytes('log', log, { line: 1, offset: 0 });
        const text = new HistoryModel({ recentLimit });
        foldByText(text, log);
        assert.deepEqual(picture(bytes), picture(text));
        assert.deepEqual(modelParsedPicture(bytes), parsedPicture(log));
        assert.deepEqual(end, { line: cut(log).length + 1, offset: log.length });
      }),
      { numRuns: 400 },
    );
  });

  test('shares entries with the string path whichever of the two meets a key first', () => {
    fc.assert(
      fc.property(fc.oneof(repeatingLog, logLines), fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }), (lines, byBytes) => {
        const log = logOf(lines, [false], false);
        const mixed = new HistoryModel({ recentLimit: 2 });
        cut(log).forEach(({ text, line, offset }, index) => {
          if (byBytes[index % byBytes.length]) mixed.foldLineBytes('log', withLineEnd(lineBytes(log, offset)), { line, offset });
          else mixed.foldLine('log', text, { line, offset });
        });
        const text = new HistoryModel({ recentLimit: 2 });
        foldByText(text, log);
        assert.deepEqual(picture(mixed), picture(text));
      }),
      { numRuns: 300 },
    );
  });

  test('folds the reader’s chunks: a position carried from one buffer to the next', () => {
    fc.assert(
      fc.property(logLines, fc.array(fc.nat(), { maxLength: 6 }), (lines, cuts) => {
        const log = logOf(lines, [true, false], false);
        const model = new HistoryModel();
        // Cut at line ends only, as the reader does.
        const ends = [...new Set(cuts.map((at) => (log.length === 0 ? 0 : log.indexOf(10, at % log.length) + 1)).filter((at) => at > 0))].sort((a, b) => a - b);
        let position = { line: 1, offset: 0 };
        let from = 0;
        for (const to of [...ends, log.length]) {
          if (to <= from) continue;
          position = model.foldLineBytes('log', log.subarray(from, to), position);
          from = to;
        }
        const text = new HistoryModel();
        foldByText(text, log);
        assert.deepEqual(picture(model), picture(text));
      }),
      { numRuns: 200 },
    );
  });
});
