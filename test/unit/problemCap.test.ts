/**
 * A broken multi-megabyte file reports its first MAX_PROBLEMS_PER_FILE problems and one TP106 that
 * says how many more there are, in bounded memory; and terminal text shows control and bidi
 * characters visibly.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeDocument } from '../../server/src/core/documents/documents';
import { capProblems, MAX_PROBLEMS_PER_FILE, problem } from '../../server/src/core/problems';
import { terminalSafe } from '../../server/src/core/report/terminalText';

/** About 3.6 MB of blueprint whose steps array is mostly stray characters: ~900,000 syntax errors. */
function brokenBlueprint(): string {
  return `{ "blueprint": "broken", "formatVersion": 1, "steps": [${'@ @ '.repeat(900_000).slice(0, 3_700_000)}] }`;
}

describe('the problem cap', () => {
  test('a 3.6 MB broken blueprint gives the first 1000 problems and one TP106, in bounded memory', () => {
    const text = brokenBlueprint();
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    const started = performance.now();
    const { problems } = analyzeDocument('blueprint', text);
    const elapsed = performance.now() - started;
    const growth = process.memoryUsage().heapUsed - before;
    console.log(`${text.length} characters: ${problems.length} problems in ${elapsed.toFixed(0)} ms, heap growth ${(growth / 1048576).toFixed(1)} MiB, JSON ${JSON.stringify(problems).length} bytes`);
    assert.equal(problems.length, MAX_PROBLEMS_PER_FILE + 1);
    const last = problems[problems.length - 1]!;
    assert.equal(last.code, 'TP106');
    assert.equal(last.severity, 'information');
    const omitted = last.data?.omitted as number;
    assert.ok(omitted > 800_000, `omitted ${omitted}`);
    assert.match(last.message, new RegExp(`^${omitted} more problem\\(s\\) in this file are not shown: Toolpin reports the first 1000`));
    assert.ok(last.span.offset >= problems[problems.length - 2]!.span.offset, 'positioned after the last one shown');
    assert.ok(JSON.stringify(problems).length < 1_000_000);
  });

  test('capProblems merges an earlier TP106 and keeps the first ones by position', () => {
    const many = Array.from({ length: 5 }, (_, index) => problem('TP102', { offset: 100 - index, length: 1 }, `p${index}`));
    const capped = capProblems([...many, problem('TP106', { offset: 200, length: 1 }, 'x', { data: { omitted: 7 } })], 3);
    assert.deepEqual(capped.map((found) => [found.code, found.span.offset]), [['TP102', 96], ['TP102', 97], ['TP102', 98], ['TP106', 99]]);
    assert.equal(capped[3]!.data?.omitted, 9);
    assert.deepEqual(capProblems(many.slice(0, 2), 3).map((found) => found.code), ['TP102', 'TP102']);
  });
});

describe('terminalSafe', () => {
  test('controls and bidi characters are made visible; line feeds and tabs stay', () => {
    assert.equal(terminalSafe('a\u001b[31mred\u0007\r\n\tb\u202ec\u0000\u007f\u009b\u2066'), 'a\\u{001b}[31mred\\u{0007}\\u{000d}\n\tb\\u{202e}c\\u{0000}\\u{007f}\\u{009b}\\u{2066}');
    assert.equal(terminalSafe('plain ünïcödé ✓'), 'plain ünïcödé ✓');
  });
});
