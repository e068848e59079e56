/**
 * core/history/byteTable.ts, the bounded table the history model finds fields in by their bytes,
 * and the model past the bounds of its tables: more distinct values than a table holds still fold
 * exactly as the string path folds them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ByteTable } from '../../server/src/core/history/byteTable';
import { HistoryModel } from '../../server/src/core/history/history';

const bytes = (text: string): Buffer => Buffer.from(text);

describe('ByteTable', () => {
  test('finds what was added, by the bytes of each part, in any buffer', () => {
    const table = new ByteTable<string>(100, 1000);
    const source = bytes('abc|xyz');
    assert.equal(table.find(source, 0, 2, 2, 3, 0, 0), -1);
    const entry = table.add(source, 0, 2, 2, 3, 0, 0, 'ab+c');
    assert.equal(entry, 0);
    // The same bytes elsewhere, in another buffer (the table keeps a copy, not the buffer).
    source.fill(0);
    const other = bytes('--ab-c');
    assert.equal(table.find(other, 2, 4, 5, 6, 0, 0), entry);
    assert.equal(table.value(entry), 'ab+c');
    // The same bytes cut into other parts are another key.
    assert.equal(table.find(bytes('abc'), 0, 1, 1, 3, 0, 0), -1);
    assert.equal(table.find(bytes('abc'), 0, 3, 0, 0, 0, 0), -1);
    assert.equal(table.add(bytes('abc'), 0, 1, 1, 3, 0, 0, 'a+bc'), 1);
    assert.equal(table.value(table.find(bytes('xabc'), 1, 3, 3, 4, 0, 0)), 'ab+c');
    assert.equal(table.value(table.find(bytes('xabc'), 1, 2, 2, 4, 0, 0)), 'a+bc');
    // The empty key is a key too.
    assert.equal(table.find(bytes(''), 0, 0, 0, 0, 0, 0), -1);
    assert.equal(table.value(table.add(bytes(''), 0, 0, 0, 0, 0, 0, 'empty')), 'empty');
    assert.equal(table.value(table.find(bytes('q'), 1, 1, 1, 1, 1, 1)), 'empty');
  });

  test('holds many keys across its growth, each with its own value', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 })), { maxLength: 300, selector: (key) => JSON.stringify(key) }), (keys) => {
        const table = new ByteTable<number>(1000, 100_000);
        const place = (key: [string, string, string]): [Buffer, number, number, number, number, number, number] => {
          const [a, b, c] = key.map(bytes);
          const all = Buffer.concat([a!, b!, c!]);
          return [all, 0, a!.length, a!.length, a!.length + b!.length, a!.length + b!.length, all.length];
        };
        keys.forEach((key, index) => {
          const [source, a0, a1, b0, b1, c0, c1] = place(key);
          // Distinct as strings may still be the same bytes (lone surrogates encode as U+FFFD).
          if (table.find(source, a0, a1, b0, b1, c0, c1) < 0) assert.equal(table.add(source, a0, a1, b0, b1, c0, c1, index), table.size - 1);
        });
        for (const key of keys) {
          const [source, a0, a1, b0, b1, c0, c1] = place(key);
          const entry = table.find(source, a0, a1, b0, b1, c0, c1);
          assert.ok(entry >= 0);
          const found = keys[table.value(entry)]!;
          assert.deepEqual(found.map((part) => bytes(part).toString('hex')), key.map((part) => bytes(part).toString('hex')));
        }
      }),
      { numRuns: 100 },
    );
  });

  test('adds nothing beyond its bounds of keys and of bytes, and keeps what it holds', () => {
    const byKeys = new ByteTable<string>(3, 1000);
    for (const text of ['a', 'b', 'c']) assert.ok(byKeys.add(bytes(text), 0, 1, 0, 0, 0, 0, text) >= 0);
    assert.equal(byKeys.add(bytes('d'), 0, 1, 0, 0, 0, 0, 'd'), -1);
    assert.equal(byKeys.find(bytes('d'), 0, 1, 0, 0, 0, 0), -1);
    assert.equal(byKeys.size, 3);
    for (const text of ['a', 'b', 'c']) assert.equal(byKeys.value(byKeys.find(bytes(text), 0, 1, 0, 0, 0, 0)), text);

    const byBytes = new ByteTable<string>(100, 10);
    assert.ok(byBytes.add(bytes('123456'), 0, 6, 0, 0, 0, 0, 'six') >= 0);
    assert.equal(byBytes.add(bytes('12345'), 0, 5, 0, 0, 0, 0, 'five'), -1);
    assert.ok(byBytes.add(bytes('1234'), 0, 4, 0, 0, 0, 0, 'four') >= 0);
    assert.equal(byBytes.add(bytes('x'), 0, 1, 0, 0, 0, 0, 'x'), -1);
    assert.equal(byBytes.value(byBytes.find(bytes('123456'), 0, 6, 0, 0, 0, 0)), 'six');
    assert.equal(byBytes.value(byBytes.find(bytes('1234'), 0, 4, 0, 0, 0, 0)), 'four');
  });
});

/** Everything a model tells about one log, as plain data. */
function picture(model: HistoryModel): unknown {
  return {
    stats: model.logStats('log'),
    keys: model.keys().map((key) => ({ server: key.server, tool: key.tool, schemaHash: key.schemaHash, count: key.count, first: key.first, last: key.last, recent: key.recent })),
  };
}

function line(index: number, tool: string, blueprint: string, step: string): string {
  const at = new Date(Date.UTC(2026, 7, 1) + index * 1000).toISOString();
  return JSON.stringify({ type: 'MCP_DISPATCHED', seq: index, at, executionId: `exec-${index}`, blueprint, stepId: step, data: { toolName: tool, server: 'demo', schemaHash: 'fnv1a64:0123456789abcdef' } });
}

/** The same log folded from its bytes and, line by line, from its text. */
function assertBothPathsAgree(lines: readonly string[], passes: number): void {
  const log = Buffer.from(`${lines.join('\n')}\n`);
  const fromBytes = new HistoryModel({ recentLimit: 1 });
  const fromText = new HistoryModel({ recentLimit: 1 });
  let position = { line: 1, offset: 0 };
  for (let pass = 0; pass < passes; pass++) {
    position = fromBytes.foldLineBytes('log', log, position);
    let offset = position.offset - log.length;
    lines.forEach((text, index) => {
      fromText.foldLine('log', text, { line: position.line - lines.length + index, offset });
      offset += Buffer.byteLength(text) + 1;
    });
  }
  assert.deepEqual(picture(fromBytes), picture(fromText));
  assert.equal(fromBytes.logStats('log').dispatched, lines.length * passes);
}

describe('HistoryModel.foldLineBytes beyond the bounds of its tables', () => {
  test('more distinct blueprint names and step ids than the model interns', () => {
    // 10,000 values are interned (names and step ids share the bound): 12,000 distinct of each.
    const lines = Array.from({ length: 12_000 }, (_, index) => line(index, `tool-${index % 7}`, `blueprint-${index}`, `step-é-${index}`));
    assertBothPathsAgree(lines, 2);
  });

  test('more distinct (server, tool, schemaHash) keys than a log finds by their bytes', () => {
    // 16,384 keys are found by their bytes; the others by their strings, in both passes.
    const lines = Array.from({ length: 17_000 }, (_, index) => line(index, `tool-${index}`, 'flow', 'step'));
    assertBothPathsAgree(lines, 2);
  });
});
