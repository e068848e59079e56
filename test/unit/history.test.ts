/**
 * The dispatch-history read model (server/src/core/history/history.ts): line parsing with positioned
 * problems, folding, K-bounded recent executions with exact counts, hash status (pinned, live,
 * stale, unknown), the stale query, "ran after drift", and the stable JSON shape of the report.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeBlueprint } from '../../server/src/core/documents/blueprint';
import {
  type Execution,
  forEachLine,
  hashStatus,
  historyExitStatus,
  HistoryModel,
  historyReport,
  type LiveSchemas,
  type LiveServer,
  liveServerFromListing,
  liveToolOf,
  type LinePosition,
  normalizeHashQuery,
  parseEventLine,
  parseTime,
  schemaPinsOf,
  selectHistory,
  utf8Length,
} from '../../server/src/core/history/history';
import type { CollectedListing } from '../../server/src/core/verify/listing';

const LIVE = 'fnv1a64:3712870629e19d1d';
const PINNED = 'fnv1a64:5c1f0e9b7a3d2e41';
const OLD = 'fnv1a64:9e3779b97f4a7c15';
const AT0 = Date.parse('2026-08-20T10:00:00.000Z');

interface EventSpec {
  seq?: number;
  at?: string | number;
  executionId?: string;
  blueprint?: unknown;
  stepId?: unknown;
  tool?: string;
  server?: string;
  hash?: string;
  type?: string;
}

/** One event line; `at` as a number is minutes after AT0. */
function line(spec: EventSpec = {}): string {
  const at = typeof spec.at === 'number' ? new Date(AT0 + spec.at * 60_000).toISOString() : (spec.at ?? '2026-08-20T10:15:02.118Z');
  return JSON.stringify({
    type: spec.type ?? 'MCP_DISPATCHED',
    seq: spec.seq ?? 1,
    at,
    executionId: spec.executionId ?? 'exec_1',
    blueprint: spec.blueprint ?? 'triage',
    stepId: spec.stepId ?? 'open-issue',
    data: { toolName: spec.tool ?? 'reverse_text', server: spec.server ?? 'demo', schemaHash: spec.hash ?? LIVE },
  });
}

const P: LinePosition = { line: 7, offset: 1234 };

function problemOf(text: string): { reason: string; field?: string; line: number; offset: number; message: string } {
  const parsed = parseEventLine(text, P);
  assert.equal(parsed.kind, 'problem', `expected a problem for ${text}`);
  return (parsed as Extract<typeof parsed, { kind: 'problem' }>).problem;
}

function listed(tools: Record<string, string | undefined>, complete = true): LiveServer {
  return { state: 'listed', tools: new Map(Object.entries(tools)), complete };
}

describe('parseEventLine', () => {
  test('reads an MCP_DISPATCHED event of §7 with its position', () => {
    const text =
      '{"type":"MCP_DISPATCHED","seq":1842,"at":"2026-08-20T10:15:02.118Z","executionId":"exec_01J5Z6","blueprint":"triage-inbound-issue","stepId":"open-issue","data":{"toolName":"create_issue","server":"github_tools","schemaHash":"fnv1a64:8465e642361d6375"}}';
    const parsed = parseEventLine(text, P);
    assert.equal(parsed.kind, 'dispatch');
    assert.deepEqual((parsed as Extract<typeof parsed, { kind: 'dispatch' }>).event, {
      line: 7,
      offset: 1234,
      seq: 1842,
      at: '2026-08-20T10:15:02.118Z',
      atMs: Date.parse('2026-08-20T10:15:02.118Z'),
      executionId: 'exec_01J5Z6',
      blueprint: 'triage-inbound-issue',
      stepId: 'open-issue',
      server: 'github_tools',
      toolName: 'create_issue',
      schemaHash: 'fnv1a64:8465e642361d6375',
    });
  });

  test('other and unknown types are skipped unread, even when they are not dispatch-shaped', () => {
    assert.deepEqual(parseEventLine('{"type":"STEP_STARTED","seq":3}', P), { kind: 'other', type: 'STEP_STARTED' });
    assert.deepEqual(parseEventLine('{"type":"SOMETHING_NEW_IN_2027"}', P), { kind: 'other', type: 'SOMETHING_NEW_IN_2027' });
    assert.deepEqual(parseEventLine('{"type":"mcp_dispatched","data":7}', P), { kind: 'other', type: 'mcp_dispatched' });
  });

  test('blank lines are neither events nor problems', () => {
    assert.deepEqual(parseEventLine('', P), { kind: 'blank' });
    assert.deepEqual(parseEventLine('   \t', P), { kind: 'blank' });
  });

  test('blueprint and stepId are optional', () => {
    const parsed = parseEventLine('{"type":"MCP_DISPATCHED","seq":0,"at":"2026-08-20T10:00:00Z","executionId":"e","data":{"toolName":"t","server":"s","schemaHash":"fnv1a64:0000000000000000"}}', P);
    assert.equal(parsed.kind, 'dispatch');
    const event = (parsed as Extract<typeof parsed, { kind: 'dispatch' }>).event;
    assert.equal(event.blueprint, null);
    assert.equal(event.stepId, null);
  });

  const cases: Array<[string, string, string, string | undefined]> = [
    ['not JSON', '{"type":"MCP_DISPATCHED","seq":1,', 'not-json', undefined],
    ['garbage', 'hello', 'not-json', undefined],
    ['an array', '[1,2]', 'not-an-object', undefined],
    ['a string', '"MCP_DISPATCHED"', 'not-an-object', undefined],
    ['null', 'null', 'not-an-object', undefined],
    ['no type', '{"seq":1}', 'no-type', 'type'],
    ['numeric type', '{"type":7}', 'no-type', 'type'],
    ['no seq', line().replace('"seq":1,', ''), 'missing-field', 'seq'],
    ['negative seq', line({ seq: -1 }), 'mistyped-field', 'seq'],
    ['fractional seq', line().replace('"seq":1', '"seq":1.5'), 'mistyped-field', 'seq'],
    ['string seq', line().replace('"seq":1', '"seq":"1"'), 'mistyped-field', 'seq'],
    ['no at', line().replace(/"at":"[^"]*",/, ''), 'missing-field', 'at'],
    ['at not a date', line({ at: 'yesterday' }), 'mistyped-field', 'at'],
    ['no executionId', line().replace('"executionId":"exec_1",', ''), 'missing-field', 'executionId'],
    ['empty executionId', line({ executionId: '' }), 'mistyped-field', 'executionId'],
    ['numeric blueprint', line({ blueprint: 3 }), 'mistyped-field', 'blueprint'],
    ['object stepId', line({ stepId: {} }), 'mistyped-field', 'stepId'],
    ['no data', '{"type":"MCP_DISPATCHED","seq":1,"at":"2026-08-20T10:00:00Z","executionId":"e"}', 'missing-field', 'data'],
    ['data an array', '{"type":"MCP_DISPATCHED","seq":1,"at":"2026-08-20T10:00:00Z","executionId":"e","data":[]}', 'mistyped-field', 'data'],
    ['no server', line().replace('"server":"demo",', ''), 'missing-field', 'data.server'],
    ['no toolName', line().replace('"toolName":"reverse_text",', ''), 'missing-field', 'data.toolName'],
    ['numeric server', line().replace('"server":"demo"', '"server":1'), 'mistyped-field', 'data.server'],
    ['no schemaHash', line().replace(/,"schemaHash":"[^"]*"/, ''), 'missing-field', 'data.schemaHash'],
    ['uppercase hash', line({ hash: 'fnv1a64:3712870629E19D1D' }), 'malformed-schema-hash', 'data.schemaHash'],
    ['short hash', line({ hash: 'fnv1a64:3712' }), 'malformed-schema-hash', 'data.schemaHash'],
    ['bare hash', line({ hash: '3712870629e19d1d' }), 'malformed-schema-hash', 'data.schemaHash'],
    ['tool pin instead', line({ hash: `sha256:${'a'.repeat(64)}` }), 'malformed-schema-hash', 'data.schemaHash'],
  ];
  for (const [name, text, reason, field] of cases) {
    test(`problem: ${name} → ${reason}`, () => {
      const found = problemOf(text);
      assert.equal(found.reason, reason);
      assert.equal(found.field, field);
      assert.equal(found.line, 7);
      assert.equal(found.offset, 1234);
      assert.ok(found.message.length > 10, found.message);
    });
  }

  test('the hash cache accepts a hash once validated and never a malformed one', () => {
    const cache = new Set<string>();
    assert.equal(parseEventLine(line(), P, cache).kind, 'dispatch');
    assert.ok(cache.has(LIVE));
    assert.equal(parseEventLine(line({ hash: 'fnv1a64:XYZ' }), P, cache).kind, 'problem');
    assert.equal(cache.size, 1);
  });

  test('never throws on garbage', () => {
    for (const text of ['{', '}', '\u0000', '{"type":"MCP_DISPATCHED","data":null}', '{"__proto__":{"type":"x"}}', '1e999999', '{"type":"MCP_DISPATCHED","seq":1e400}']) {
      assert.doesNotThrow(() => parseEventLine(text, P));
    }
  });
});

describe('parseTime', () => {
  test('agrees with Date.parse on the fast path and off it', () => {
    const samples = [
      '2026-08-20T10:15:02.118Z',
      '1999-12-31T23:59:59.999Z',
      '2026-02-28T00:00:00.000Z',
      '2026-02-29T00:00:00.000Z',
      '2024-02-29T12:00:00.000Z',
      '2026-01-31T23:00:00.000Z',
      '2026-13-01T00:00:00.000Z',
      '2026-00-10T00:00:00.000Z',
      '2026-08-20T24:00:00.000Z',
      '2026-08-20T10:60:00.000Z',
      '2026-08-2xT10:15:02.118Z',
      '2026-08-20 10:15:02.118Z',
      '2026-08-20T10:15:02Z',
      '2026-08-20T10:15:02.118+02:00',
      '2026-08-20',
      'yesterday',
    ];
    for (const sample of samples) assert.deepEqual(parseTime(sample), Date.parse(sample), sample);
    for (let index = 0; index < 2000; index++) {
      const text = new Date(Date.UTC(1970, 0, 1) + index * 987_654_321_7).toISOString();
      assert.equal(parseTime(text), Date.parse(text), text);
    }
  });

  test('a non-digit in any digit position of the canonical form is never read as a time', () => {
    // The fast path folds each pair of digits into a number and marks a non-digit by a negative
    // value; every position, with the characters on either side of the digits, must fail it.
    const canonical = '2026-08-20T10:15:02.118Z';
    const digitPositions = [...canonical].flatMap((char, index) => (/[0-9]/.test(char) ? [index] : []));
    assert.equal(digitPositions.length, 17);
    for (const index of digitPositions) {
      for (const replacement of ['/', ':', 'x', ' ', '\u0660']) {
        const text = canonical.slice(0, index) + replacement + canonical.slice(index + 1);
        assert.deepEqual(parseTime(text), Date.parse(text), JSON.stringify(text));
      }
    }
  });
});

describe('forEachLine and byte offsets', () => {
  test('ASCII: offsets are character indexes; CR before LF is dropped', () => {
    const seen: Array<[string, number, number]> = [];
    const end = forEachLine('ab\r\ncd\n\nefg\n', { line: 10, offset: 100 }, (text, number, offset) => seen.push([text, number, offset]));
    assert.deepEqual(seen, [
      ['ab', 10, 100],
      ['cd', 11, 104],
      ['', 12, 107],
      ['efg', 13, 108],
    ]);
    assert.deepEqual(end, { line: 14, offset: 112 });
  });

  test('non-ASCII: offsets count UTF-8 bytes', () => {
    const text = 'é\n€x\n😀\nz';
    const seen: number[] = [];
    const end = forEachLine(text, { line: 1, offset: 0 }, (_text, _number, offset) => seen.push(offset));
    assert.deepEqual(seen, [0, 3, 8, 13]);
    assert.equal(end.offset, Buffer.byteLength(text));
    assert.equal(utf8Length(text), Buffer.byteLength(text));
    assert.equal(utf8Length('\ud800'), 3); // a lone surrogate is written as U+FFFD
  });
});

describe('HistoryModel folding', () => {
  test('folds dispatch events by (server, tool, hash), skips other types, counts problems with positions', () => {
    const model = new HistoryModel();
    const text = [
      line({ seq: 1, at: 0, executionId: 'a' }),
      '{"type":"STEP_STARTED","seq":2}',
      'not json',
      line({ seq: 3, at: 5, executionId: 'b' }),
      '',
      line({ seq: 4, at: 1, executionId: 'c', hash: PINNED }),
      line({ seq: 5, at: 2, executionId: 'd', server: 'other' }),
      '[]',
    ].join('\n') + '\n';
    const end = model.foldText('log-a', text, { line: 1, offset: 0 });
    assert.equal(end.line, 9);
    assert.equal(end.offset, Buffer.byteLength(text));
    const stats = model.logStats('log-a');
    assert.deepEqual({ ...stats, problems: undefined }, { log: 'log-a', lines: 8, blank: 1, dispatched: 4, skipped: 1, malformed: 2, torn: 0, problems: undefined });
    const lines = text.split('\n');
    const offsetOfLine = (n: number): number => lines.slice(0, n - 1).reduce((sum, l) => sum + Buffer.byteLength(l) + 1, 0);
    assert.deepEqual(
      stats.problems.map((found) => [found.line, found.offset, found.reason]),
      [
        [3, offsetOfLine(3), 'not-json'],
        [8, offsetOfLine(8), 'not-an-object'],
      ],
    );
    const keys = model.keys().map((key) => `${key.server}|${key.tool}|${key.schemaHash}|${key.count}|${key.recent.map((e) => e.executionId).join(',')}`);
    assert.deepEqual(keys, [`demo|reverse_text|${LIVE}|2|b,a`, `demo|reverse_text|${PINNED}|1|c`, `other|reverse_text|${LIVE}|1|d`]);
    const live = model.summary({ server: 'demo', tool: 'reverse_text', schemaHash: LIVE })!;
    assert.equal(live.first.executionId, 'a');
    assert.equal(live.last.executionId, 'b');
    assert.equal(live.first.log, 'log-a');
    assert.equal(live.first.line, 1);
    assert.equal(live.recent[0]!.line, 4);
  });

  test('K bounds the executions in memory; counts, first and last stay exact', () => {
    const model = new HistoryModel({ recentLimit: 3 });
    for (let index = 0; index < 1000; index++) model.foldLine('log', line({ seq: index, at: index, executionId: `e${index}` }), { line: index + 1, offset: index * 10 });
    const [key] = model.keys();
    assert.equal(key!.count, 1000);
    assert.deepEqual(key!.recent.map((e) => e.executionId), ['e999', 'e998', 'e997']);
    assert.equal(key!.first.executionId, 'e0');
    assert.equal(key!.last.executionId, 'e999');
  });

  test('first and last are by time, then sequence, not by append order', () => {
    const model = new HistoryModel();
    model.foldLine('log', line({ seq: 5, at: 10, executionId: 'late' }), { line: 1, offset: 0 });
    model.foldLine('log', line({ seq: 6, at: -10, executionId: 'early' }), { line: 2, offset: 100 });
    model.foldLine('log', line({ seq: 7, at: 10, executionId: 'late-higher-seq' }), { line: 3, offset: 200 });
    const [key] = model.keys();
    assert.equal(key!.first.executionId, 'early');
    assert.equal(key!.last.executionId, 'late-higher-seq');
  });

  test('logs merge; a reset or removed log takes its contribution with it', () => {
    const model = new HistoryModel({ recentLimit: 2 });
    model.foldText('a', `${line({ at: 1, executionId: 'a1' })}\n${line({ at: 3, executionId: 'a3' })}\n`, { line: 1, offset: 0 });
    model.foldText('b', `${line({ at: 2, executionId: 'b2' })}\n${line({ at: 4, executionId: 'b4' })}\n`, { line: 1, offset: 0 });
    let [key] = model.keys();
    assert.equal(key!.count, 4);
    assert.deepEqual(key!.recent.map((e) => `${e.log}:${e.executionId}`), ['b:b4', 'a:a3']);
    assert.equal(key!.first.executionId, 'a1');
    // The state is per key across logs: dropping b drops every log's executions and advances the
    // generation, and the reader folds the remaining logs again.
    const generation = model.generation;
    model.resetLog('b');
    assert.equal(model.generation, generation + 1);
    assert.deepEqual(model.keys(), []);
    assert.equal(model.logStats('a').lines, 0);
    model.foldText('a', `${line({ at: 1, executionId: 'a1' })}\n${line({ at: 3, executionId: 'a3' })}\n`, { line: 1, offset: 0 });
    [key] = model.keys();
    assert.equal(key!.count, 2);
    assert.deepEqual(key!.recent.map((e) => `${e.log}:${e.executionId}`), ['a:a3', 'a:a1']);
    assert.equal(model.logStats('b').lines, 0);
    // b contributed nothing since: removing it drops nothing else.
    model.removeLog('b');
    assert.equal(model.generation, generation + 1);
    assert.equal(model.keys()[0]!.count, 2);
    model.removeLog('a');
    assert.deepEqual(model.keys(), []);
    assert.deepEqual(model.logs(), []);
  });

  test('a summary is a snapshot: folds after keys() change neither an unread nor a read summary', () => {
    // Summaries build their executions on first access; the model must copy the slots an unread
    // summary would read before a fold reuses them (ring reuse, new first and last).
    const model = new HistoryModel({ recentLimit: 2 });
    const fold = (from: number, to: number, at: (index: number) => number): void => {
      for (let index = from; index < to; index++) model.foldLine('log', line({ seq: index, at: at(index), executionId: `e${index}`, blueprint: `b${index}` }), { line: index + 1, offset: index * 10 });
    };
    fold(0, 5, (index) => index);
    const expected = (summary: ReturnType<HistoryModel['keys']>[number]): string[] => [
      `count ${summary.count}`,
      `first ${summary.first.executionId} ${summary.first.at} ${summary.first.line}`,
      `last ${summary.last.executionId} ${summary.last.at} ${summary.last.line}`,
      ...summary.recent.map((execution) => `recent ${execution.executionId} ${execution.blueprint} ${execution.at} ${execution.line} ${execution.offset}`),
    ];
    const [unread] = model.keys();
    const [read] = model.keys();
    const readBefore = expected(read!);
    const snapshot = expected(model.keys()[0]!);
    assert.deepEqual(snapshot, ['count 5', `first e0 ${new Date(AT0).toISOString()} 1`, `last e4 ${new Date(AT0 + 4 * 60_000).toISOString()} 5`, `recent e4 b4 ${new Date(AT0 + 4 * 60_000).toISOString()} 5 40`, `recent e3 b3 ${new Date(AT0 + 3 * 60_000).toISOString()} 4 30`]);
    // Earlier and later events than any before: the ring, first and last all change.
    fold(5, 9, (index) => (index % 2 === 0 ? -100 - index : 100 + index));
    assert.deepEqual(expected(unread!), snapshot, 'unread summary');
    assert.deepEqual(expected(read!), readBefore, 'read summary');
    const [now] = model.keys();
    assert.deepEqual(expected(now!).slice(0, 3), ['count 9', `first e8 ${new Date(AT0 - 108 * 60_000).toISOString()} 9`, `last e7 ${new Date(AT0 + 107 * 60_000).toISOString()} 8`]);
  });

  test('summaries are plain objects with enumerable fields', () => {
    const model = new HistoryModel({ recentLimit: 1 });
    for (let index = 0; index < 3; index++) model.foldLine('log', line({ seq: index, at: index, executionId: `e${index}`, tool: `t${index}` }), { line: index + 1, offset: index });
    const [summary] = model.keys();
    assert.deepEqual(Object.keys(summary!), ['server', 'tool', 'schemaHash', 'count', 'first', 'last', 'recent']);
    assert.equal(JSON.parse(JSON.stringify(summary)).recent[0].executionId, 'e0');
  });

  test('summaries taken between folds each keep their moment, with long and non-Latin-1 ids', () => {
    // Copy on write: every fold after a summary writes detached copies of the slots it reads, more
    // than once per slot when summaries are taken again in between.
    const model = new HistoryModel({ recentLimit: 3 });
    const id = (index: number): string => (index % 3 === 0 ? `ид-${index}` : index % 3 === 1 ? `e${index}-${'z'.repeat(70)}` : `e${index}`);
    const render = (summary: ReturnType<HistoryModel['keys']>[number]): string =>
      `${summary.count} ${summary.first.executionId} ${summary.last.executionId} ${summary.recent.map((execution) => `${execution.executionId}@${execution.line}`).join(',')}`;
    const taken: Array<{ summary: ReturnType<HistoryModel['keys']>[number]; expected: string }> = [];
    for (let index = 0; index < 40; index++) {
      // Times go back and forth, so first and last move too.
      model.foldLine('log', line({ seq: index, at: (index % 2 === 0 ? 1 : -1) * index, executionId: id(index) }), { line: index + 1, offset: index * 100 });
      if (index % 4 === 3) {
        const [unread] = model.keys();
        const [read] = model.keys();
        taken.push({ summary: unread!, expected: render(read!) });
      }
    }
    for (const [index, { summary, expected }] of taken.entries()) assert.equal(render(summary), expected, `summary ${index}`);
    // The last three appended, newest first by time: 38 (at +38), 37 (at -37), 39 (at -39).
    assert.equal(taken[taken.length - 1]!.expected, `40 ${id(39)} ${id(38)} ${id(38)}@39,${id(37)}@38,${id(39)}@40`);
  });

  test('execution ids stay exact across many id pages, and a malformed hash never makes an entry', () => {
    const model = new HistoryModel({ recentLimit: 2 });
    const id = (tool: number, index: number): string => `exec_${tool}_${index}_${'x'.repeat((tool * 7 + index) % 50)}`;
    let lineNumber = 0;
    for (let tool = 0; tool < 300; tool++) {
      for (let index = 0; index < 3; index++) model.foldLine('log', line({ seq: lineNumber, at: lineNumber, executionId: id(tool, index), tool: `t${tool}` }), { line: ++lineNumber, offset: lineNumber });
    }
    const keys = model.keys();
    assert.equal(keys.length, 300);
    for (const key of keys) {
      const tool = Number(key.tool.slice(1));
      assert.deepEqual([key.first.executionId, key.last.executionId, ...key.recent.map((e) => e.executionId)], [id(tool, 0), id(tool, 2), id(tool, 2), id(tool, 1)], key.tool);
    }
    const before = model.logStats('log').dispatched;
    for (let index = 0; index < 2; index++) model.foldLine('log', line({ tool: 'bad', hash: 'fnv1a64:NOT-HEX' }), { line: ++lineNumber, offset: lineNumber });
    const stats = model.logStats('log');
    assert.equal(stats.dispatched, before);
    assert.deepEqual(stats.problems.map((found) => found.reason), ['malformed-schema-hash', 'malformed-schema-hash']);
    assert.equal(model.keys().length, 300);
    assert.equal(model.summary({ server: 'demo', tool: 'bad', schemaHash: 'fnv1a64:NOT-HEX' }), undefined);
  });

  test('a torn line is reported, not folded, and cleared once completed', () => {
    const model = new HistoryModel();
    model.setTorn('log', { line: 3, offset: 400 });
    const stats = model.logStats('log');
    assert.equal(stats.torn, 1);
    assert.equal(stats.malformed, 0);
    assert.deepEqual(stats.problems.map((found) => [found.reason, found.line, found.offset]), [['torn', 3, 400]]);
    model.setTorn('log', undefined);
    assert.equal(model.logStats('log').torn, 0);
    assert.deepEqual(model.logStats('log').problems, []);
  });

  test('problems kept per log are capped, all are counted', () => {
    const model = new HistoryModel({ maxProblemsPerLog: 5 });
    for (let index = 0; index < 50; index++) model.foldLine('log', 'garbage', { line: index + 1, offset: index * 8 });
    const stats = model.logStats('log');
    assert.equal(stats.malformed, 50);
    assert.equal(stats.problems.length, 5);
  });
});

describe('hash status', () => {
  test('the five statuses', () => {
    assert.equal(hashStatus(true, true), 'pinned+live');
    assert.equal(hashStatus(false, true), 'live');
    assert.equal(hashStatus(true, false), 'pinned');
    assert.equal(hashStatus(false, false), 'stale');
    assert.equal(hashStatus(true, null), 'pinned');
    assert.equal(hashStatus(false, null), 'unknown');
  });

  test('live knowledge: unknown unless a complete listing proves it', () => {
    const live: LiveSchemas = new Map<string, LiveServer>([
      ['demo', listed({ reverse_text: LIVE, weird: undefined })],
      ['partial', listed({ other: LIVE }, false)],
      ['down', { state: 'unavailable', reason: 'HTTP 401: the credential was rejected' }],
    ]);
    assert.deepEqual(liveToolOf(live, 'demo', 'reverse_text'), { state: 'served', hash: LIVE });
    assert.deepEqual(liveToolOf(live, 'demo', 'gone'), { state: 'not-served' });
    assert.equal(liveToolOf(live, 'demo', 'weird').state, 'unknown');
    assert.equal(liveToolOf(live, 'partial', 'gone').state, 'unknown');
    assert.deepEqual(liveToolOf(live, 'down', 'x'), { state: 'unknown', reason: 'HTTP 401: the credential was rejected' });
    assert.equal(liveToolOf(live, 'never-listed', 'x').state, 'unknown');
  });

  test('liveServerFromListing hashes inputSchema with the schema pin; odd tools are unknown', () => {
    const listing: CollectedListing = {
      tools: [
        { name: 'echo_upper', inputSchema: { type: 'object', properties: { text: { type: 'string', description: 'Text to upper-case' } }, required: ['text'] }, raw: {} },
        { name: 'no_schema', raw: {} },
        { name: 'odd', inputSchema: {}, unpinnable: 'its "description" is number', raw: {} },
        { name: 'twice', inputSchema: { a: 1 }, raw: {} },
        { name: 'twice', inputSchema: { a: 2 }, raw: {} },
      ],
      malformedEntries: [],
      duplicateNames: ['twice'],
      pages: 1,
      incomplete: undefined,
      ttlMs: undefined,
    };
    const server = liveServerFromListing(listing);
    assert.equal(server.state, 'listed');
    if (server.state !== 'listed') return;
    assert.equal(server.tools.get('echo_upper'), 'fnv1a64:a76fe8d6d023fca0');
    assert.equal(server.tools.get('no_schema'), undefined);
    assert.ok(server.tools.has('no_schema'));
    assert.equal(server.tools.get('odd'), undefined);
    assert.equal(server.tools.get('twice'), undefined);
    assert.equal(server.complete, true);
    const withGarbage = liveServerFromListing({ ...listing, malformedEntries: ['page 1, entry 3: an entry without a string "name"'] });
    assert.equal(withGarbage.state === 'listed' && withGarbage.complete, false);
  });

  test('schema pins of blueprints: a step without server pins the tool on every server', () => {
    const { model } = analyzeBlueprint(`{
      "blueprint": "flow", "formatVersion": 1,
      "steps": [
        { "id": "a", "effect": "mcp.invoke", "input": { "toolName": "reverse_text", "server": "demo", "expectedSchemaHash": "${PINNED}" } },
        { "id": "b", "effect": "mcp.invoke", "input": { "toolName": "add_numbers", "expectedSchemaHash": "fnv1a64:d21cac35ccab9a0e" } },
        { "id": "c", "effect": "mcp.invoke", "input": { "toolName": "bad", "expectedSchemaHash": "fnv1a64:NOPE" } },
        { "id": "d", "effect": "mcp.invoke", "input": { "toolName": "unpinned" } }
      ]
    }`);
    const pins = schemaPinsOf([{ model, file: 'flow.blueprint.json' }]);
    assert.deepEqual(pins, [
      { tool: 'reverse_text', server: 'demo', hash: PINNED, blueprint: 'flow', step: 'a', file: 'flow.blueprint.json' },
      { tool: 'add_numbers', server: undefined, hash: 'fnv1a64:d21cac35ccab9a0e', blueprint: 'flow', step: 'b', file: 'flow.blueprint.json' },
    ]);
    const history = new HistoryModel();
    history.foldLine('log', line({ server: 'elsewhere', tool: 'add_numbers', hash: 'fnv1a64:d21cac35ccab9a0e' }), P);
    history.foldLine('log', line({ server: 'elsewhere', tool: 'reverse_text', hash: PINNED }), P);
    const selected = selectHistory(history, {}, { pins, live: new Map() });
    assert.deepEqual(selected.map((key) => `${key.summary.tool}:${key.status}`), ['add_numbers:pinned', 'reverse_text:unknown']);
  });
});

/** A small history of reverse_text on demo: old, pinned-but-drifted and live hashes. */
function driftHistory(recentLimit = 20): HistoryModel {
  const model = new HistoryModel({ recentLimit });
  const lines = [
    line({ seq: 1, at: -300, executionId: 'old-1', hash: OLD }),
    line({ seq: 2, at: -120, executionId: 'pin-before', hash: PINNED }),
    line({ seq: 3, at: 0, executionId: 'live-first', hash: LIVE }),
    line({ seq: 4, at: 30, executionId: 'pin-after', hash: PINNED }),
    line({ seq: 5, at: 60, executionId: 'live-2', hash: LIVE }),
    line({ seq: 6, at: 90, executionId: 'ghost-1', server: 'ghost', tool: 'lookup', hash: OLD }),
    '{"type":"STEP_STARTED","seq":7}',
    'torn garbage',
  ];
  model.foldText('runtime.events.jsonl', `${lines.join('\n')}\n`, { line: 1, offset: 0 });
  return model;
}

const DRIFT_INPUTS = {
  pins: [{ tool: 'reverse_text', server: 'demo', hash: PINNED, blueprint: 'flow', step: 'flip', file: 'flow.blueprint.json' }],
  live: new Map<string, LiveServer>([['demo', listed({ reverse_text: LIVE })]]),
};

describe('historyReport', () => {
  test('statuses, the stale query and "ran after drift"', () => {
    const report = historyReport(driftHistory(), {}, DRIFT_INPUTS);
    const demo = report.servers.find((server) => server.server === 'demo')!;
    const tool = demo.tools[0]!;
    assert.equal(tool.liveHash, LIVE);
    assert.deepEqual(tool.liveFirstSeen, { at: new Date(AT0).toISOString(), seq: 3 });
    assert.deepEqual(
      tool.hashes.map((hash) => [hash.schemaHash, hash.status, hash.live, hash.count, hash.ranAfterDrift]),
      [
        [LIVE, 'live', true, 2, 0],
        [PINNED, 'pinned', false, 2, 1],
        [OLD, 'stale', false, 1, 0],
      ],
    );
    const pinned = tool.hashes[1]!;
    assert.deepEqual(pinned.executions.map((e) => [e.executionId, e.ranAfterDrift]), [
      ['pin-after', true],
      ['pin-before', false],
    ]);
    const ghost = report.servers.find((server) => server.server === 'ghost')!.tools[0]!;
    assert.equal(ghost.liveState, 'unknown');
    assert.deepEqual(ghost.hashes.map((hash) => [hash.status, hash.live, hash.ranAfterDrift]), [['unknown', null, null]]);
    assert.equal(report.summary.staleExecutions, 3);
    assert.equal(report.summary.unknownExecutions, 1);
    assert.equal(report.summary.ranAfterDrift, 1);
    assert.equal(historyExitStatus(report, false), 1);

    const stale = historyReport(driftHistory(), { staleOnly: true, limit: null }, DRIFT_INPUTS);
    const ids = stale.servers.flatMap((server) => server.tools.flatMap((t) => t.hashes.flatMap((hash) => hash.executions.map((e) => e.executionId))));
    assert.deepEqual(ids.sort(), ['old-1', 'pin-after', 'pin-before']);
    assert.equal(stale.query.stale, true);
  });

  test('without a live listing nothing is stale, and the exit status says "could not check"', () => {
    const report = historyReport(driftHistory(), { staleOnly: true }, { pins: DRIFT_INPUTS.pins, live: new Map() });
    assert.deepEqual(report.servers, []);
    const all = historyReport(driftHistory(), {}, { pins: DRIFT_INPUTS.pins, live: new Map() });
    const statuses = all.servers.flatMap((server) => server.tools.flatMap((t) => t.hashes.map((hash) => `${t.tool}@${hash.schemaHash}:${hash.status}`)));
    assert.deepEqual(statuses.sort(), [`lookup@${OLD}:unknown`, `reverse_text@${LIVE}:unknown`, `reverse_text@${OLD}:unknown`, `reverse_text@${PINNED}:pinned`].sort());
    assert.equal(all.summary.staleExecutions, 0);
    assert.equal(historyExitStatus(all, false), 2);
  });

  test('a tool the server no longer serves: every hash is not live, drift moment unknown', () => {
    const live = new Map<string, LiveServer>([['demo', listed({ something_else: LIVE })]]);
    const report = historyReport(driftHistory(), { tool: 'reverse_text' }, { pins: [], live });
    const tool = report.servers[0]!.tools[0]!;
    assert.equal(tool.liveState, 'not-served');
    assert.ok(tool.hashes.every((hash) => hash.status === 'stale' && hash.live === false && hash.ranAfterDrift === null));
    assert.equal(report.summary.ranAfterDrift, null);
  });

  test('queries by tool and by hash (bare hex accepted)', () => {
    const byHash = historyReport(driftHistory(), { hash: PINNED.slice('fnv1a64:'.length) }, DRIFT_INPUTS);
    assert.equal(byHash.query.hash, PINNED);
    assert.deepEqual(byHash.servers.map((s) => s.tools.map((t) => t.hashes.map((h) => h.schemaHash))), [[[PINNED]]]);
    const byTool = historyReport(driftHistory(), { tool: 'lookup' }, DRIFT_INPUTS);
    assert.deepEqual(byTool.servers.map((s) => s.server), ['ghost']);
    assert.equal(normalizeHashQuery('fnv1a64:abc'), 'fnv1a64:abc');
  });

  test('more executions than K: counts exact, listing marked incomplete until all are supplied', () => {
    const model = new HistoryModel({ recentLimit: 3 });
    const all: Execution[] = [];
    for (let index = 0; index < 10; index++) {
      const text = line({ seq: index, at: index, executionId: `e${index}`, hash: OLD });
      model.foldLine('log', text, { line: index + 1, offset: index * 300 });
      const parsed = parseEventLine(text, { line: index + 1, offset: index * 300 });
      if (parsed.kind === 'dispatch') all.push({ ...parsed.event, log: 'log' });
    }
    const inputs = { pins: [], live: new Map<string, LiveServer>([['demo', listed({ reverse_text: LIVE })]]) };
    const partial = historyReport(model, { staleOnly: true, limit: null }, inputs);
    let hash = partial.servers[0]!.tools[0]!.hashes[0]!;
    assert.equal(hash.count, 10);
    assert.equal(hash.executions.length, 3);
    assert.equal(hash.executionsComplete, false);
    const complete = historyReport(model, { staleOnly: true, limit: null }, { ...inputs, allExecutions: () => all });
    hash = complete.servers[0]!.tools[0]!.hashes[0]!;
    assert.deepEqual(hash.executions.map((e) => e.executionId), ['e9', 'e8', 'e7', 'e6', 'e5', 'e4', 'e3', 'e2', 'e1', 'e0']);
    assert.equal(hash.executionsComplete, true);
    const limited = historyReport(model, { limit: 2 }, inputs);
    assert.deepEqual(limited.servers[0]!.tools[0]!.hashes[0]!.executions.map((e) => e.executionId), ['e9', 'e8']);
    assert.equal(limited.query.limit, 2);
  });

  test('"ran after drift" is exact from memory when the drift moment falls outside a hash\'s span, else needs all executions', () => {
    const model = new HistoryModel({ recentLimit: 2 });
    const texts = [
      line({ seq: 1, at: 0, executionId: 'p0', hash: PINNED }),
      line({ seq: 2, at: 1, executionId: 'p1', hash: PINNED }),
      line({ seq: 3, at: 2, executionId: 'live', hash: LIVE }),
      line({ seq: 4, at: 3, executionId: 'p3', hash: PINNED }),
      line({ seq: 5, at: 4, executionId: 'p4', hash: PINNED }),
      line({ seq: 6, at: 5, executionId: 'p5', hash: PINNED }),
    ];
    texts.forEach((text, index) => model.foldLine('log', text, { line: index + 1, offset: index * 300 }));
    const partial = historyReport(model, {}, DRIFT_INPUTS);
    const pinned = partial.servers[0]!.tools[0]!.hashes.find((hash) => hash.schemaHash === PINNED)!;
    assert.equal(pinned.ranAfterDrift, null); // 5 executions, 2 in memory, the boundary inside
    const all = texts.map((text, index) => parseEventLine(text, { line: index + 1, offset: index * 300 })).flatMap((parsed) => (parsed.kind === 'dispatch' ? [{ ...parsed.event, log: 'log' }] : []));
    const exact = historyReport(model, { limit: null }, { ...DRIFT_INPUTS, allExecutions: (key) => all.filter((e) => e.schemaHash === key.schemaHash) });
    assert.equal(exact.servers[0]!.tools[0]!.hashes.find((hash) => hash.schemaHash === PINNED)!.ranAfterDrift, 3);
  });

  test('the JSON shape is stable (version 1, exact keys)', () => {
    const report = historyReport(driftHistory(), {}, DRIFT_INPUTS);
    const json = JSON.parse(JSON.stringify(report));
    assert.deepEqual(Object.keys(json), ['version', 'query', 'logs', 'servers', 'summary']);
    assert.equal(json.version, 1);
    assert.deepEqual(json.query, { tool: null, hash: null, stale: false, limit: 20 });
    assert.deepEqual(Object.keys(json.summary), ['logs', 'lines', 'dispatched', 'skipped', 'malformed', 'torn', 'hashes', 'executions', 'staleExecutions', 'unknownExecutions', 'ranAfterDrift']);
    assert.deepEqual(Object.keys(json.logs[0]).sort(), ['blank', 'dispatched', 'lines', 'log', 'malformed', 'problems', 'problemsTruncated', 'skipped', 'torn'].sort());
    assert.deepEqual(Object.keys(json.logs[0].problems[0]), ['line', 'offset', 'reason', 'message']);
    assert.deepEqual(Object.keys(json.servers[0]), ['server', 'tools']);
    assert.deepEqual(Object.keys(json.servers[0].tools[0]), ['tool', 'liveState', 'liveHash', 'liveReason', 'liveFirstSeen', 'pins', 'hashes']);
    assert.deepEqual(Object.keys(json.servers[0].tools[0].pins[0]), ['hash', 'blueprint', 'step', 'file', 'anyServer']);
    assert.deepEqual(Object.keys(json.servers[0].tools[0].hashes[0]), ['schemaHash', 'status', 'pinned', 'live', 'count', 'firstSeen', 'lastSeen', 'ranAfterDrift', 'executions', 'executionsComplete']);
    assert.deepEqual(Object.keys(json.servers[0].tools[0].hashes[0].executions[0]), ['executionId', 'blueprint', 'stepId', 'at', 'seq', 'log', 'line', 'ranAfterDrift']);
    assert.deepEqual(json.summary, {
      logs: 1,
      lines: 8,
      dispatched: 6,
      skipped: 1,
      malformed: 1,
      torn: 0,
      hashes: 4,
      executions: 6,
      staleExecutions: 3,
      unknownExecutions: 1,
      ranAfterDrift: 1,
    });
  });

  test('exit status: 0 clean, 1 a finding, 2 could not check', () => {
    const clean = historyReport(driftHistory(), { hash: LIVE, tool: 'reverse_text' }, DRIFT_INPUTS);
    assert.equal(historyExitStatus(clean, false), 0);
    assert.equal(historyExitStatus(clean, true), 2);
  });
});
