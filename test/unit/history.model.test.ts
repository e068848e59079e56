/**
 * The dispatch-history model's storage (server/src/core/history/history.ts) against a plain oracle:
 * execution ids kept as bytes or as strings, ring slots reused in place, and the first and last
 * execution tracked by reference until their slot is reused. Random event sequences, out of time
 * order, over a small K, so that every slot is reused many times.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { HistoryModel, parseEventLine } from '../../server/src/core/history/history';

const HASHES = ['fnv1a64:3712870629e19d1d', 'fnv1a64:9e3779b97f4a7c15'];
const AT0 = Date.UTC(2026, 7, 20, 10, 0, 0);

/** Ids of every kind the model stores differently: ASCII, Latin-1, beyond Latin-1, longer than 64. */
const executionId = fc.oneof(
  fc.constantFrom('exec_01J8Z3', 'ÿé-latin1-id', '😀-astral', 'Ω-greek', 'x'.repeat(64), 'y'.repeat(65), `ü${'z'.repeat(80)}`),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 70 }),
);

interface Spec {
  readonly seq: number;
  readonly minutes: number;
  readonly id: string;
  readonly hash: number;
  readonly canonical: boolean;
}

const spec: fc.Arbitrary<Spec> = fc.record({
  seq: fc.nat({ max: 50 }),
  minutes: fc.integer({ min: -500, max: 500 }),
  id: executionId,
  hash: fc.nat({ max: 1 }),
  canonical: fc.boolean(),
});

function lineOf(event: Spec): string {
  const date = new Date(AT0 + event.minutes * 60_000);
  // A non-canonical time (offset form) is kept as written; a canonical one is rebuilt on output.
  const at = event.canonical ? date.toISOString() : date.toISOString().replace('Z', '+00:00');
  return JSON.stringify({ type: 'MCP_DISPATCHED', seq: event.seq, at, executionId: event.id, blueprint: 'flow', stepId: 'step', data: { toolName: 'tool', server: 'demo', schemaHash: HASHES[event.hash] } });
}

describe('HistoryModel storage against an oracle', () => {
  test('count, first, last and the K most recent executions, with every kind of execution id', () => {
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 4 }), (events, recentLimit) => {
        const model = new HistoryModel({ recentLimit });
        const lines = events.map(lineOf);
        model.foldText('log', `${lines.join('\n')}\n`, { line: 1, offset: 0 });
        const parsed = lines.map((text, index) => {
          const result = parseEventLine(text, { line: index + 1, offset: 0 });
          assert.equal(result.kind, 'dispatch');
          return result.kind === 'dispatch' ? result.event : undefined;
        });
        for (const [hashIndex, schemaHash] of HASHES.entries()) {
          const mine = parsed.filter((event, index) => event !== undefined && events[index]!.hash === hashIndex);
          const summary = model.summary({ server: 'demo', tool: 'tool', schemaHash });
          if (mine.length === 0) {
            assert.equal(summary, undefined);
            continue;
          }
          assert.ok(summary);
          assert.equal(summary.count, mine.length);
          const byTime = (a: { atMs: number; seq: number }, b: { atMs: number; seq: number }): number => a.atMs - b.atMs || a.seq - b.seq;
          const sorted = [...mine].sort((a, b) => byTime(a!, b!));
          const firstExpected = sorted[0]!;
          const lastExpected = sorted[sorted.length - 1]!;
          assert.deepEqual([summary.first.atMs, summary.first.seq], [firstExpected.atMs, firstExpected.seq]);
          assert.deepEqual([summary.last.atMs, summary.last.seq], [lastExpected.atMs, lastExpected.seq]);
          // Ties on (time, seq) may be either event; the ids must belong to one of the tied events.
          const tiedFirst = mine.filter((event) => byTime(event!, firstExpected) === 0).map((event) => event!.executionId);
          const tiedLast = mine.filter((event) => byTime(event!, lastExpected) === 0).map((event) => event!.executionId);
          assert.ok(tiedFirst.includes(summary.first.executionId), 'first execution id');
          assert.ok(tiedLast.includes(summary.last.executionId), 'last execution id');
          // The K most recently appended, newest first by time: ids, times as written, lines.
          const recent = mine.slice(-recentLimit).sort((a, b) => byTime(b!, a!) || b!.line - a!.line);
          assert.deepEqual(
            summary.recent.map((execution) => [execution.executionId, execution.at, execution.line]),
            recent.map((event) => [event!.executionId, event!.at, event!.line]),
          );
        }
      }),
      { numRuns: 400 },
    );
  });
});
