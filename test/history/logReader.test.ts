/**
 * The incremental log reader (server/src/history/logReader.ts) on real temporary files: only the
 * appended bytes are read, a torn last line waits for its end, truncation and rotation (rename +
 * recreate, rewrite in place) rebuild the log's contribution, every execution of one hash can be
 * streamed back beyond the K kept in memory, and discovery never enters node_modules or .git.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { HistoryModel } from '../../server/src/core/history/history';
import { findLogFiles, globToRegExp, LogReader, LogSet, splitGlob } from '../../server/src/history/logReader';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-history-test-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

let counter = 0;
function tempFile(name = 'run.events.jsonl'): string {
  const folder = path.join(scratch, `case-${++counter}`);
  fs.mkdirSync(folder, { recursive: true });
  return path.join(folder, name);
}

const LIVE = 'fnv1a64:3712870629e19d1d';
const OLD = 'fnv1a64:9e3779b97f4a7c15';

function event(seq: number, options: { hash?: string; executionId?: string; blueprint?: string } = {}): string {
  return JSON.stringify({
    type: 'MCP_DISPATCHED',
    seq,
    at: new Date(Date.UTC(2026, 7, 20, 10, 0, seq)).toISOString(),
    executionId: options.executionId ?? `exec_${seq}`,
    blueprint: options.blueprint ?? 'flow',
    stepId: 'flip',
    data: { toolName: 'reverse_text', server: 'demo', schemaHash: options.hash ?? LIVE },
  });
}

function lines(from: number, to: number, options: { hash?: string } = {}): string {
  let text = '';
  for (let seq = from; seq <= to; seq++) text += `${event(seq, options)}\n`;
  return text;
}

function countOf(model: HistoryModel, hash = LIVE): number {
  return model.summary({ server: 'demo', tool: 'reverse_text', schemaHash: hash })?.count ?? 0;
}

describe('LogReader', () => {
  test('first read reads everything; an append reads only the appended bytes', async () => {
    const file = tempFile();
    fs.writeFileSync(file, lines(1, 50));
    const model = new HistoryModel();
    const reader = new LogReader(file, 'run', model);
    const first = await reader.update();
    assert.equal(first.bytesRead, fs.statSync(file).size);
    assert.equal(countOf(model), 50);

    const appended = lines(51, 60) + '{"type":"STEP_COMPLETED","seq":61}\n';
    fs.appendFileSync(file, appended);
    const second = await reader.update();
    assert.equal(second.bytesRead, Buffer.byteLength(appended));
    assert.equal(second.reset, undefined);
    assert.ok(second.headBytesRead <= 1024);
    assert.equal(countOf(model), 60);
    assert.equal(model.logStats('run').skipped, 1);

    const idle = await reader.update();
    assert.equal(idle.bytesRead, 0);
    assert.equal(countOf(model), 60);
  });

  test('a torn last line is held and reported, then folded once a later append completes it', async () => {
    const file = tempFile();
    const whole = event(2);
    fs.writeFileSync(file, `${event(1)}\n${whole.slice(0, 40)}`);
    const model = new HistoryModel();
    const reader = new LogReader(file, 'run', model);
    await reader.update();
    assert.equal(countOf(model), 1);
    let stats = model.logStats('run');
    assert.equal(stats.torn, 1);
    assert.equal(stats.malformed, 0);
    assert.deepEqual(stats.problems.map((found) => [found.reason, found.line, found.offset]), [['torn', 2, Buffer.byteLength(event(1)) + 1]]);

    fs.appendFileSync(file, whole.slice(40, 100)); // still not complete
    assert.equal((await reader.update()).bytesRead, 60);
    assert.equal(countOf(model), 1);
    assert.equal(model.logStats('run').torn, 1);

    const rest = `${whole.slice(100)}\n${event(3)}\n`;
    fs.appendFileSync(file, rest);
    const result = await reader.update();
    assert.equal(result.bytesRead, Buffer.byteLength(rest));
    assert.equal(countOf(model), 3);
    stats = model.logStats('run');
    assert.equal(stats.torn, 0);
    assert.equal(stats.malformed, 0);
    assert.equal(model.summary({ server: 'demo', tool: 'reverse_text', schemaHash: LIVE })!.last.line, 3);
  });

  test('truncation: the log is dropped and read again from byte 0', async () => {
    const file = tempFile();
    fs.writeFileSync(file, lines(1, 20));
    const model = new HistoryModel();
    const reader = new LogReader(file, 'run', model);
    await reader.update();
    assert.equal(countOf(model), 20);
    fs.truncateSync(file, 0);
    fs.appendFileSync(file, lines(100, 102, { hash: OLD }));
    const result = await reader.update();
    assert.equal(result.reset, 'truncated');
    assert.equal(result.bytesRead, fs.statSync(file).size);
    assert.equal(countOf(model), 0);
    assert.equal(countOf(model, OLD), 3);
    assert.equal(model.logStats('run').lines, 3);
  });

  test('rotation by rename + recreate: a new inode is read from the start', async () => {
    const file = tempFile();
    fs.writeFileSync(file, lines(1, 5));
    const model = new HistoryModel();
    const reader = new LogReader(file, 'run', model);
    await reader.update();
    fs.renameSync(file, `${file}.1`);
    fs.writeFileSync(file, lines(1, 8, { hash: OLD })); // larger than before: not a truncation
    const result = await reader.update();
    assert.equal(result.reset, 'rotated');
    assert.equal(countOf(model), 0);
    assert.equal(countOf(model, OLD), 8);
    // …and it keeps reading the new file incrementally.
    fs.appendFileSync(file, lines(9, 9, { hash: OLD }));
    assert.equal((await reader.update()).bytesRead, Buffer.byteLength(lines(9, 9, { hash: OLD })));
    assert.equal(countOf(model, OLD), 9);
  });

  test('rotation in place (same inode, new first bytes, grown past the old end) is detected by the head hash', async () => {
    const file = tempFile();
    fs.writeFileSync(file, lines(1, 5));
    const model = new HistoryModel();
    const reader = new LogReader(file, 'run', model);
    await reader.update();
    const inode = fs.statSync(file).ino;
    fs.writeFileSync(file, lines(1, 10, { hash: OLD }));
    assert.equal(fs.statSync(file).ino, inode);
    const result = await reader.update();
    assert.equal(result.reset, 'rotated');
    assert.equal(countOf(model), 0);
    assert.equal(countOf(model, OLD), 10);
  });

  test('a log that disappears is removed from the model', async () => {
    const file = tempFile();
    fs.writeFileSync(file, lines(1, 3));
    const model = new HistoryModel();
    const reader = new LogReader(file, 'run', model);
    await reader.update();
    fs.rmSync(file);
    const result = await reader.update();
    assert.equal(result.missing, true);
    assert.deepEqual(model.logs(), []);
  });

  test('lines spanning chunks, multi-byte characters and invalid UTF-8 keep exact byte offsets', async () => {
    const file = tempFile();
    const parts = [event(1, { blueprint: 'flüß-😀' }), 'garbage ✗', event(2), Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('latin1'), event(3)];
    const bytes = Buffer.concat([
      Buffer.from(`${parts[0]}\n${parts[1]}\n${parts[2]}\n`, 'utf8'),
      Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), // "{\xff\xfe}" – not UTF-8, not JSON
      Buffer.from(`${parts[4]}\n`, 'utf8'),
    ]);
    fs.writeFileSync(file, bytes);
    for (const chunkSize of [64, 97, 1024 * 1024]) {
      const model = new HistoryModel();
      const reader = new LogReader(file, 'run', model, { chunkSize });
      await reader.update();
      const stats = model.logStats('run');
      assert.equal(stats.dispatched, 3, `chunk ${chunkSize}`);
      const lineStarts = [0];
      for (let index = 0; index < bytes.length - 1; index++) if (bytes[index] === 10) lineStarts.push(index + 1);
      assert.deepEqual(
        stats.problems.map((found) => [found.line, found.offset, found.reason]),
        [
          [2, lineStarts[1], 'not-json'],
          [4, lineStarts[3], 'not-json'],
        ],
        `chunk ${chunkSize}`,
      );
      const last = model.summary({ server: 'demo', tool: 'reverse_text', schemaHash: LIVE })!.last;
      assert.deepEqual([last.line, last.offset], [5, lineStarts[4]]);
      assert.equal(reader.completeBytes, bytes.length);
    }
  });

  test('large reads: lines across 64 KiB decode segments and 1 MiB chunks, a line longer than a segment', async () => {
    const file = tempFile();
    const parts: string[] = [];
    for (let seq = 1; seq <= 12_000; seq++) {
      if (seq === 5000) parts.push(event(seq, { blueprint: `long-${'ü'.repeat(70_000)}` })); // > 64 KiB, multi-byte
      else if (seq % 997 === 0) parts.push('not json ✗');
      else parts.push(event(seq, { blueprint: seq % 7 === 0 ? 'flöw' : 'flow' }));
    }
    const bytes = Buffer.from(`${parts.join('\n')}\n`, 'utf8');
    fs.writeFileSync(file, bytes);
    const starts = [0];
    for (let index = 0; index < bytes.length - 1; index++) if (bytes[index] === 10) starts.push(index + 1);
    for (const chunkSize of [1024 * 1024, 4096]) {
      const model = new HistoryModel();
      const reader = new LogReader(file, 'run', model, { chunkSize });
      const result = await reader.update();
      assert.equal(result.bytesRead, bytes.length);
      const stats = model.logStats('run');
      assert.equal(stats.lines, 12_000);
      assert.equal(stats.malformed, 12);
      assert.ok(stats.problems.every((found) => found.offset === starts[found.line - 1]), `chunk ${chunkSize}`);
      const key = { server: 'demo', tool: 'reverse_text', schemaHash: LIVE };
      assert.equal(model.summary(key)!.count, 12_000 - 12);
      const streamed = [];
      for await (const execution of reader.streamExecutions(key)) streamed.push(execution);
      assert.equal(streamed.length, 12_000 - 12);
      assert.ok(streamed.every((execution) => execution.offset === starts[execution.line - 1]), `stream, chunk ${chunkSize}`);
      assert.equal(streamed.find((execution) => execution.seq === 5000)!.blueprint!.length, 5 + 70_000);
    }
  });

  test('the default chunk size: a multi-byte character and a line across the chunk boundaries', async () => {
    // Reads are 256 KiB by default (two buffers): a 4-byte character straddles the first boundary,
    // a plain line the second; both lines keep their content and exact byte offsets.
    const CHUNK = 256 * 1024;
    const parts: string[] = [];
    let bytes = 0;
    let seq = 0;
    const push = (text: string): void => {
      parts.push(text);
      bytes += Buffer.byteLength(text) + 1;
    };
    const padTo = (boundary: number): void => {
      while (bytes + 2 * Buffer.byteLength(event(seq + 1)) < boundary) push(event(++seq));
    };
    padTo(CHUNK);
    // Place the emoji so that the boundary falls after its second byte.
    const probe = event(seq + 1, { blueprint: 'x😀' });
    const emojiAt = Buffer.byteLength(probe.slice(0, probe.indexOf('😀')));
    const fill = CHUNK - 2 - bytes - emojiAt + 1;
    const straddling = event(++seq, { blueprint: `${'x'.repeat(fill)}😀` });
    assert.equal(bytes + Buffer.byteLength(straddling.slice(0, straddling.indexOf('😀'))) + 2, CHUNK);
    push(straddling);
    const emojiLine = seq;
    padTo(2 * CHUNK);
    push(event(++seq, { blueprint: 'y'.repeat(300) }));
    const spanningLine = seq;
    for (let index = 0; index < 10; index++) push(event(++seq));
    const file = tempFile();
    const content = Buffer.from(`${parts.join('\n')}\n`, 'utf8');
    fs.writeFileSync(file, content);
    const starts = [0];
    for (let index = 0; index < content.length - 1; index++) if (content[index] === 10) starts.push(index + 1);
    assert.ok(starts[spanningLine - 1]! < 2 * CHUNK && starts[spanningLine]! > 2 * CHUNK, 'a line spans the second boundary');

    const model = new HistoryModel({ recentLimit: seq });
    const result = await new LogReader(file, 'run', model).update();
    assert.equal(result.bytesRead, content.length);
    const stats = model.logStats('run');
    assert.deepEqual([stats.lines, stats.dispatched, stats.malformed], [seq, seq, 0]);
    const recent = model.summary({ server: 'demo', tool: 'reverse_text', schemaHash: LIVE })!.recent;
    assert.equal(recent.length, seq);
    for (const execution of recent) assert.equal(execution.offset, starts[execution.line - 1], `line ${execution.line}`);
    assert.equal(recent.find((execution) => execution.line === emojiLine)!.blueprint, `${'x'.repeat(fill)}😀`);
    assert.equal(recent.find((execution) => execution.line === spanningLine)!.blueprint, 'y'.repeat(300));
  });

  test('a line longer than the limit is skipped as too-long without being held', async () => {
    const file = tempFile();
    fs.writeFileSync(file, `${event(1)}\n${'x'.repeat(5000)}\n${event(3)}\n`);
    const model = new HistoryModel();
    await new LogReader(file, 'run', model, { chunkSize: 256, maxLineBytes: 1000 }).update();
    const stats = model.logStats('run');
    assert.equal(stats.dispatched, 2);
    assert.deepEqual(stats.problems.map((found) => [found.line, found.reason]), [[2, 'too-long']]);
    assert.equal(model.summary({ server: 'demo', tool: 'reverse_text', schemaHash: LIVE })!.last.line, 3);
  });

  test('streamExecutions yields every execution of one hash (N > K), in file order', async () => {
    const file = tempFile();
    let text = '';
    for (let seq = 1; seq <= 120; seq++) text += `${event(seq, { hash: seq % 3 === 0 ? OLD : LIVE })}\n`;
    fs.writeFileSync(file, `${text}${event(999).slice(0, 30)}`); // and a torn tail, which is not streamed
    const model = new HistoryModel({ recentLimit: 5 });
    const reader = new LogReader(file, 'run', model, { chunkSize: 1000 });
    await reader.update();
    const key = { server: 'demo', tool: 'reverse_text', schemaHash: OLD };
    assert.equal(model.summary(key)!.count, 40);
    assert.equal(model.summary(key)!.recent.length, 5);
    const streamed = [];
    for await (const execution of reader.streamExecutions(key)) streamed.push(execution);
    assert.equal(streamed.length, 40);
    assert.deepEqual(streamed.map((e) => e.seq), Array.from({ length: 40 }, (_, index) => (index + 1) * 3));
    assert.ok(streamed.every((e) => e.log === 'run' && e.schemaHash === OLD && e.line === e.seq));
  });

  test('streamExecutions refuses a file that changed identity since it was read', async () => {
    const file = tempFile();
    fs.writeFileSync(file, lines(1, 3));
    const reader = new LogReader(file, 'run', new HistoryModel());
    await reader.update();
    fs.renameSync(file, `${file}.1`);
    fs.writeFileSync(file, lines(1, 3));
    await assert.rejects(async () => {
      for await (const execution of reader.streamExecutions({ server: 'demo', tool: 'reverse_text', schemaHash: LIVE })) void execution;
    }, /changed since it was read/);
  });

  test('concurrent updates are serialized: nothing is folded twice', async () => {
    const file = tempFile();
    fs.writeFileSync(file, lines(1, 200));
    const model = new HistoryModel();
    const reader = new LogReader(file, 'run', model, { chunkSize: 512 });
    await Promise.all([reader.update(), reader.update(), reader.update()]);
    assert.equal(countOf(model), 200);
  });
});

describe('discovery', () => {
  test('globToRegExp: **, * and ?', () => {
    const cases: Array<[string, string, boolean]> = [
      ['**/*.events.jsonl', 'a.events.jsonl', true],
      ['**/*.events.jsonl', 'x/y/z/a.events.jsonl', true],
      ['**/*.events.jsonl', 'x/a.events.json', false],
      ['*.events.jsonl', 'deep/a.events.jsonl', false],
      ['*.events.jsonl', 'a.events.jsonl', true],
      ['logs/*.events.jsonl', 'logs/a.events.jsonl', true],
      ['logs/*.events.jsonl', 'logs/x/a.events.jsonl', false],
      ['logs/**', 'logs/x/y', true],
      ['run-?.events.jsonl', 'run-1.events.jsonl', true],
      ['run-?.events.jsonl', 'run-12.events.jsonl', false],
      ['a.b/*.jsonl', 'aXb/c.jsonl', false],
      ['(x)/*.jsonl', '(x)/c.jsonl', true],
    ];
    for (const [glob, file, expected] of cases) assert.equal(globToRegExp(glob).test(file), expected, `${glob} vs ${file}`);
    assert.deepEqual(splitGlob('logs/**/*.events.jsonl'), { base: 'logs', glob: '**/*.events.jsonl' });
    assert.deepEqual(splitGlob('*.events.jsonl'), { base: '.', glob: '*.events.jsonl' });
    assert.deepEqual(splitGlob('/var/log/*.jsonl'), { base: '/var/log', glob: '*.jsonl' });
  });

  test('findLogFiles: nested logs found, node_modules and .git never entered, other names ignored', async () => {
    const root = path.join(scratch, 'discovery');
    const files = ['a.events.jsonl', 'logs/b.events.jsonl', 'logs/deep/c.events.jsonl', 'node_modules/pkg/d.events.jsonl', '.git/e.events.jsonl', 'logs/node_modules/f.events.jsonl', 'logs/notes.jsonl', 'logs/g.events.jsonl.1'];
    for (const file of files) {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), '');
    }
    const found = (await findLogFiles(root)).map((file) => path.relative(root, file).split(path.sep).join('/'));
    assert.deepEqual(found, ['a.events.jsonl', 'logs/b.events.jsonl', 'logs/deep/c.events.jsonl']);
    const onlyLogs = (await findLogFiles(root, ['logs/*.events.jsonl'])).map((file) => path.relative(root, file).split(path.sep).join('/'));
    assert.deepEqual(onlyLogs, ['logs/b.events.jsonl']);
  });

  test('LogSet picks up new logs and drops vanished ones', async () => {
    const root = path.join(scratch, 'set');
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, 'one.events.jsonl'), lines(1, 2));
    const model = new HistoryModel();
    const set = new LogSet(model, () => findLogFiles(root), (file) => path.basename(file));
    await set.update();
    assert.equal(countOf(model), 2);
    fs.writeFileSync(path.join(root, 'two.events.jsonl'), lines(1, 3));
    let result = await set.update();
    assert.equal(result.bytesRead, Buffer.byteLength(lines(1, 3)));
    assert.equal(countOf(model), 5);
    fs.rmSync(path.join(root, 'one.events.jsonl'));
    result = await set.update();
    assert.deepEqual(result.removed, ['one.events.jsonl']);
    assert.equal(countOf(model), 3);
    assert.deepEqual(model.logs(), ['two.events.jsonl']);
  });

  test('LogSet: a log truncated after the others were read makes the model read them all again', async () => {
    // The state is per key across logs, so dropping one log's executions drops every log's
    // (HistoryModel.generation); the set reads the logs before it again in the same update.
    const root = path.join(scratch, 'set-generation');
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, 'a.events.jsonl'), lines(1, 4));
    fs.writeFileSync(path.join(root, 'b.events.jsonl'), lines(5, 9, { hash: OLD }));
    fs.writeFileSync(path.join(root, 'c.events.jsonl'), lines(10, 12));
    const model = new HistoryModel({ recentLimit: 2 });
    const set = new LogSet(model, () => findLogFiles(root), (file) => path.basename(file));
    await set.update();
    assert.deepEqual([countOf(model), countOf(model, OLD)], [7, 5]);
    const generation = model.generation;
    fs.writeFileSync(path.join(root, 'b.events.jsonl'), lines(5, 6, { hash: OLD }));
    const result = await set.update();
    assert.deepEqual(result.resets, [{ log: 'b.events.jsonl', reason: 'truncated' }]);
    assert.equal(model.generation, generation + 1);
    assert.deepEqual([countOf(model), countOf(model, OLD)], [7, 2]);
    const live = model.summary({ server: 'demo', tool: 'reverse_text', schemaHash: LIVE })!;
    assert.deepEqual(live.recent.map((execution) => `${execution.log}:${execution.executionId}`), ['c.events.jsonl:exec_12', 'c.events.jsonl:exec_11']);
    assert.deepEqual([live.first.executionId, model.logStats('a.events.jsonl').dispatched, model.logStats('c.events.jsonl').lines], ['exec_1', 4, 3]);
    // An append after the re-read is read once.
    fs.appendFileSync(path.join(root, 'a.events.jsonl'), lines(13, 13));
    await set.update();
    assert.equal(countOf(model), 8);
    assert.equal(model.generation, generation + 1);
  });
});
