/**
 * The dispatch-history read model answered by the store: the same questions the file model
 * (core/history/history.ts, `HistoryModel`) answers, so that `historyReport` and `selectHistory`
 * build exactly the report the files give, from a few indexed queries instead of the events:
 *
 * - the keys and their exact counts: `toolpin_key`, kept by every ingest (a tiny table);
 * - per key, the first execution and the K most recent: `toolpin_dispatch_by_key` index, K + 1
 *   rows per key (`LIMIT`), never a scan of the events;
 * - all executions of one key, when a query lists more than K: one indexed range;
 * - per log (source): the counters and the first line problems of `toolpin_source`.
 *
 * "Most recent" is by time, then sequence, then log, then line, as in the file model; the file
 * model keeps the K last *read* per log, which is the same set when each log is in time order (as
 * a runtime writes it).
 */
import type * as Pg from 'pg';
import type { Execution, HistoryKey, HistoryView, KeySummary, LineProblem, LogStats } from '../core/history/history';


function keyId(server: string, tool: string, schemaHash: string): string {
  return `${server}\u0000${tool}\u0000${schemaHash}`;
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const EXECUTION_COLUMNS = `d.execution_id, d.seq, d.at, d.at_ms, d.blueprint, d.step_id, d.source, d.line, d.byte_offset`;
const NEWEST_FIRST = `d.at_ms DESC, d.seq DESC, d.source COLLATE "C" ASC, d.line DESC`;

function executionOf(row: Record<string, unknown>, key: HistoryKey): Execution {
  return {
    line: Number(row.line),
    offset: Number(row.byte_offset),
    seq: Number(row.seq),
    at: String(row.at),
    atMs: Number(row.at_ms),
    executionId: String(row.execution_id),
    blueprint: row.blueprint === null ? null : String(row.blueprint),
    stepId: row.step_id === null ? null : String(row.step_id),
    server: key.server,
    toolName: key.tool,
    schemaHash: key.schemaHash,
    log: String(row.source),
  };
}

interface StoredKey {
  readonly key: HistoryKey;
  readonly count: number;
  first?: Execution;
  recent: Execution[];
}

/** The store's answer, loaded by {@link loadStoreModel}: a snapshot, read-only. */
export class StoreModel implements HistoryView {
  private constructor(
    readonly recentLimit: number,
    private readonly stored: ReadonlyMap<string, StoredKey>,
    private readonly sources: ReadonlyMap<string, LogStats>,
  ) {}

  /**
   * Loads the keys, their counts, first and K most recent executions (`tool`: only that tool's
   * executions are loaded, every key is still listed) and the sources' counters.
   */
  static async load(client: Pg.Client, options: { readonly recentLimit: number; readonly tool?: string }): Promise<StoreModel> {
    const keys = await client.query(`SELECT server, tool, schema_hash, count FROM toolpin_key WHERE count > 0`);
    const stored = new Map<string, StoredKey>();
    for (const row of keys.rows as Array<Record<string, unknown>>) {
      const key = { server: String(row.server), tool: String(row.tool), schemaHash: String(row.schema_hash) };
      stored.set(keyId(key.server, key.tool, key.schemaHash), { key, count: Number(row.count), recent: [] });
    }
    const toolFilter = options.tool !== undefined ? 'WHERE k.tool = $2' : '';
    const parameters: unknown[] = [options.recentLimit, ...(options.tool !== undefined ? [options.tool] : [])];
    // One connection answers one query at a time: these run in turn.
    const recent = await client.query(
        `SELECT k.server, k.tool, k.schema_hash, ${EXECUTION_COLUMNS.replaceAll('d.', 'r.')} FROM toolpin_key k CROSS JOIN LATERAL (
           SELECT ${EXECUTION_COLUMNS} FROM toolpin_dispatch d
            WHERE d.key_id = k.key_id ORDER BY ${NEWEST_FIRST} LIMIT $1) r ${toolFilter}`,
        parameters,
      );
    const first = await client.query(
        `SELECT k.server, k.tool, k.schema_hash, ${EXECUTION_COLUMNS.replaceAll('d.', 'r.')} FROM toolpin_key k CROSS JOIN LATERAL (
           SELECT ${EXECUTION_COLUMNS} FROM toolpin_dispatch d
            WHERE d.key_id = k.key_id
            ORDER BY d.at_ms ASC, d.seq ASC, d.source COLLATE "C" DESC, d.line ASC LIMIT 1) r ${toolFilter.replace('$2', '$1')}`,
        options.tool !== undefined ? [options.tool] : [],
      );
    const sources = await client.query(`SELECT source, lines, blank, dispatched, skipped, malformed, torn, problems FROM toolpin_source`);
    for (const row of recent.rows as Array<Record<string, unknown>>) {
      const entry = stored.get(keyId(String(row.server), String(row.tool), String(row.schema_hash)));
      entry?.recent.push(executionOf(row, entry.key));
    }
    for (const row of first.rows as Array<Record<string, unknown>>) {
      const entry = stored.get(keyId(String(row.server), String(row.tool), String(row.schema_hash)));
      if (entry) entry.first = executionOf(row, entry.key);
    }
    const stats = new Map<string, LogStats>();
    for (const row of sources.rows as Array<Record<string, unknown>>) {
      const torn = row.torn as LineProblem | null;
      const problems = [...(row.problems as LineProblem[]), ...(torn ? [torn] : [])];
      stats.set(String(row.source), {
        log: String(row.source),
        lines: Number(row.lines),
        blank: Number(row.blank),
        dispatched: Number(row.dispatched),
        skipped: Number(row.skipped),
        malformed: Number(row.malformed),
        torn: torn ? 1 : 0,
        problems,
      });
    }
    return new StoreModel(options.recentLimit, stored, stats);
  }

  private summaryOf(entry: StoredKey): KeySummary {
    const { key, count, recent } = entry;
    const unloaded = (): never => {
      throw new Error(`the executions of ${key.tool} at ${key.schemaHash} were not loaded from the store`);
    };
    return {
      server: key.server,
      tool: key.tool,
      schemaHash: key.schemaHash,
      count,
      get first() {
        return entry.first ?? unloaded();
      },
      get last() {
        return recent[0] ?? unloaded();
      },
      get recent() {
        return recent;
      },
    };
  }

  keys(): KeySummary[] {
    return [...this.stored.values()]
      .sort((a, b) => byCodeUnits(a.key.server, b.key.server) || byCodeUnits(a.key.tool, b.key.tool) || byCodeUnits(a.key.schemaHash, b.key.schemaHash))
      .map((entry) => this.summaryOf(entry));
  }

  summary(key: HistoryKey): KeySummary | undefined {
    const entry = this.stored.get(keyId(key.server, key.tool, key.schemaHash));
    return entry ? this.summaryOf(entry) : undefined;
  }

  logs(): string[] {
    return [...this.sources.keys()].sort(byCodeUnits);
  }

  logStats(log: string): LogStats {
    return this.sources.get(log) ?? { log, lines: 0, blank: 0, dispatched: 0, skipped: 0, malformed: 0, torn: 0, problems: [] };
  }
}

/** Every execution of a key, newest first (one indexed range). */
export async function allExecutionsOf(client: Pg.Client, key: HistoryKey): Promise<Execution[]> {
  const result = await client.query(
    `SELECT ${EXECUTION_COLUMNS} FROM toolpin_dispatch d
      WHERE d.key_id = (SELECT key_id FROM toolpin_key WHERE server = $1 AND tool = $2 AND schema_hash = $3) ORDER BY ${NEWEST_FIRST}`,
    [key.server, key.tool, key.schemaHash],
  );
  return (result.rows as Array<Record<string, unknown>>).map((row) => executionOf(row, key));
}
