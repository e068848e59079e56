/**
 * The history model over many logs (server/src/core/history/history.ts): one state per
 * (server, tool, schemaHash) shared by all logs.
 *
 * 1. Logs in time order (as the runtime writes them), cut into any number of files and folded one
 *    after another, give exactly the summaries of the same events in one file (counts, first,
 *    last and the K most recent, all but the log name and line).
 * 2. In any order, the summaries are those of the former model, which kept each log's K last
 *    appended executions apart and merged them newest first (an oracle written here).
 * 3. The memory the model keeps does not grow with the number of logs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import fc from 'fast-check';
import { Execution, HistoryModel, historyReport, KeySummary, modelHistorySource } from '../../server/src/core/history/history';

const HASHES = ['fnv1a64:3712870629e19d1d', 'fnv1a64:9e3779b97f4a7c15'];
const AT0 = Date.UTC(2026, 7, 20, 10, 0, 0);

interface Spec {
  readonly minutes: number;
  readonly tool: number;
  readonly hash: number;
  readonly id: string;
}

const spec: fc.Arbitrary<Spec> = fc.record({
  minutes: fc.integer({ min: 0, max: 300 }),
  tool: fc.nat({ max: 2 }),
  hash: fc.nat({ max: 1 }),
  id: fc.oneof(fc.constantFrom('exec_01J8Z3', 'ÿé-latin1', '😀-astral', 'y'.repeat(65)), fc.string({ minLength: 1, maxLength: 12 })),
});

/** The event's line; `seq` is its index, so no two events tie on (time, seq). */
function lineOf(event: Spec, seq: number): string {
  return JSON.stringify({
    type: 'MCP_DISPATCHED',
    seq,
    at: new Date(AT0 + event.minutes * 60_000).toISOString(),
    executionId: event.id,
    blueprint: 'flow',
    stepId: 'step',
    data: { toolName: `tool${event.tool}`, server: 'demo', schemaHash: HASHES[event.hash] },
  });
}

/** Splits `lines` at the given cut points (indexes into it) into consecutive logs. */
function cutInto<T>(lines: readonly T[], cuts: readonly number[]): T[][] {
  const points = [...new Set(cuts.map((cut) => cut % (lines.length + 1)))].sort((a, b) => a - b);
  const parts: T[][] = [];
  let from = 0;
  for (const point of [...points, lines.length]) {
    parts.push(lines.slice(from, point));
    from = point;
  }
  return parts;
}

function foldLogs(parts: readonly string[][], recentLimit: number, byBytes: boolean): HistoryModel {
  const model = new HistoryModel({ recentLimit });
  parts.forEach((part, index) => {
    // Names sort in fold order, as the reader folds the files it found.
    const log = `run-${String(index).padStart(4, '0')}.events.jsonl`;
    const text = part.map((line) => `${line}\n`).join('');
    if (byBytes) model.foldLineBytes(log, Buffer.from(text), { line: 1, offset: 0 });
    else model.foldText(log, text, { line: 1, offset: 0 });
  });
  return model;
}

/** A summary without where its executions were read (log and line differ between the cuts). */
function content(summary: KeySummary): unknown {
  const of = (execution: Execution): unknown => [execution.executionId, execution.at, execution.seq, execution.blueprint];
  return [summary.server, summary.tool, summary.schemaHash, summary.count, of(summary.first), of(summary.last), summary.recent.map(of)];
}

describe('HistoryModel over many logs', () => {
  test('logs in time order cut into many files give the summaries of one file', () => {
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 80 }), fc.array(fc.nat(), { maxLength: 12 }), fc.integer({ min: 1, max: 4 }), fc.boolean(), (events, cuts, recentLimit, byBytes) => {
        const ordered = [...events].sort((a, b) => a.minutes - b.minutes);
        const lines = ordered.map(lineOf);
        const one = foldLogs([lines], recentLimit, byBytes).keys().map(content);
        const many = foldLogs(cutInto(lines, cuts), recentLimit, byBytes).keys().map(content);
        assert.deepEqual(many, one);
      }),
      { numRuns: 300 },
    );
  });

  test('in any order, each log keeps its K last appended and the logs merge newest first', () => {
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 80 }), fc.array(fc.nat(), { maxLength: 12 }), fc.integer({ min: 1, max: 4 }), (events, cuts, recentLimit) => {
        const parts = cutInto(events.map(lineOf), cuts);
        const model = foldLogs(parts, recentLimit, true);
        for (const summary of model.keys()) {
          // The oracle: per log, the executions at this key; its K last; all merged newest first.
          const kept: Execution[] = [];
          const all: Execution[] = [];
          for (const { executions } of executionsByLog(foldLogs(parts, 1_000, false), summary)) {
            all.push(...executions);
            kept.push(...[...executions].sort((a, b) => a.line - b.line).slice(-recentLimit));
          }
          const newest = (a: Execution, b: Execution): number => b.atMs - a.atMs || b.seq - a.seq;
          kept.sort(newest);
          all.sort(newest);
          assert.equal(summary.count, all.length);
          assert.deepEqual(summary.recent.map((execution) => [execution.log, execution.line]), kept.slice(0, recentLimit).map((execution) => [execution.log, execution.line]));
          assert.deepEqual([summary.first.log, summary.first.line], [all[all.length - 1]!.log, all[all.length - 1]!.line]);
          assert.deepEqual([summary.last.log, summary.last.line], [all[0]!.log, all[0]!.line]);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('the memory kept does not grow with the number of logs', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const events: string[] = [];
    for (let index = 0; index < 60_000; index++) events.push(lineOf({ minutes: index, tool: index % 3, hash: index % 2, id: `exec_${index.toString(36).padStart(8, '0')}` }, index));
    const heapOf = (parts: readonly string[][]): { heap: number; model: HistoryModel } => {
      gc();
      const before = process.memoryUsage().heapUsed;
      const model = foldLogs(parts, 20, true);
      gc();
      return { heap: process.memoryUsage().heapUsed - before, model };
    };
    const one = heapOf([events]);
    const parts = cutInto(events, Array.from({ length: 1_999 }, (_, index) => (index + 1) * 30));
    assert.equal(parts.length, 2_000);
    const many = heapOf(parts);
    assert.deepEqual(many.model.keys().map(content), one.model.keys().map(content));
    // 2,000 logs keep their counters and problems (a few hundred bytes each), and nothing per key.
    assert.ok(many.heap - one.heap < 2_000 * 1024, `2,000 logs kept ${Math.round((many.heap - one.heap) / 1024)} KiB more than one log`);
  });
});

/** Every execution at `key` in each log of a model kept with a K larger than any log. */
function executionsByLog(model: HistoryModel, key: KeySummary): Array<{ log: string; executions: Execution[] }> {
  const byLog = new Map<string, Execution[]>();
  for (const execution of model.summary(key)?.recent ?? []) {
    const list = byLog.get(execution.log);
    if (list) list.push(execution);
    else byLog.set(execution.log, [execution]);
  }
  return [...byLog].map(([log, executions]) => ({ log, executions }));
}

describe('modelHistorySource', () => {
  test('answers what historyReport answers, with every execution beyond K from the injected reader', async () => {
    const events: string[] = [];
    for (let index = 0; index < 30; index++) events.push(lineOf({ minutes: index, tool: index % 2, hash: index % 2, id: `exec_${index}` }, index));
    const model = foldLogs(cutInto(events, [7, 19]), 3, true);
    const logs = model.logs();
    const all = foldLogs(cutInto(events, [7, 19]), 1_000, true);
    const read: string[] = [];
    const source = modelHistorySource(model, (key) => {
      read.push(key.tool);
      return Promise.resolve(all.summary(key)!.recent);
    });
    const query = { tool: 'tool1', limit: null };
    assert.deepEqual(await source.selectedServers(query, []), ['demo']);
    const report = await source.report(query, { pins: [], live: new Map(), logs });
    assert.deepEqual(read, ['tool1']);
    assert.deepEqual(report, historyReport(model, query, { pins: [], live: new Map(), logs, allExecutions: (key) => all.summary(key)!.recent }));
    const listed = report.servers.flatMap((server) => server.tools.flatMap((tool) => tool.hashes.flatMap((hash) => hash.executions)));
    assert.equal(listed.length, 15);
    // Without the reader, the K kept.
    const kept = await modelHistorySource(model).report({}, { pins: [], live: new Map(), logs });
    assert.deepEqual(kept, historyReport(model, {}, { pins: [], live: new Map(), logs }));
  });
});
