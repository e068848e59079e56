/**
 * Dispatch history, the report: a query over the model, with pins and live status, → the report's
 * stable JSON shape (version {@link HISTORY_REPORT_VERSION}) and the exit status. See ./history.ts.
 */
import type { Execution, LineProblem } from './events';
import { HistoryKey, HistoryModel, KeySummary, LogCounters, LogStats, SeenAt, sortNewestFirst } from './model';
import { hashStatus, HashStatus, LiveSchemas, LiveTool, liveToolOf, pinsFor, SchemaPinRef } from './live';

export const HISTORY_REPORT_VERSION = 1;

// ---------------------------------------------------------------------------------------------
// Queries and the report (stable JSON shape, version 1)

/**
 * What the report reads of a model: the file model (model.ts) has these methods, and the team
 * store's model (store/storeModel.ts) answers the same from SQL, so one report serves both.
 */
export interface HistoryView {
  readonly recentLimit: number;
  keys(): KeySummary[];
  summary(key: HistoryKey): KeySummary | undefined;
  logs(): string[];
  logStats(log: string): LogStats;
}

export interface HistoryQuery {
  /** Only this tool (exact name). */
  readonly tool?: string;
  /** Only this schema hash (`fnv1a64:<hex>`; bare 16 hex digits are accepted). */
  readonly hash?: string;
  /** Only hashes that are not live (`live: false`): the stale query. */
  readonly staleOnly?: boolean;
  /** Executions listed per hash: a number, or null for all of them. Default: the model's K. */
  readonly limit?: number | null;
}

export interface HistoryInputs {
  readonly pins: readonly SchemaPinRef[];
  readonly live: LiveSchemas;
  /**
   * All executions of a key, when the caller read them (beyond the K in memory); any order.
   * Used when the query lists more executions than the model holds.
   */
  readonly allExecutions?: (key: HistoryKey) => readonly Execution[] | undefined;
  /** Logs as the caller wants them shown (default: the model's log ids), in report order. */
  readonly logs?: readonly string[];
}

export interface HistoryExecutionReport {
  executionId: string;
  blueprint: string | null;
  stepId: string | null;
  at: string;
  seq: number;
  log: string;
  /** 1-based line in the log. */
  line: number;
  /** See "ran after drift" in the module comment; null when it cannot be told. */
  ranAfterDrift: boolean | null;
}

export interface HistoryHashReport {
  schemaHash: string;
  status: HashStatus;
  pinned: boolean;
  /** True: the server serves the tool with this schema now; false: it does not; null: unknown. */
  live: boolean | null;
  /** Exact number of executions at this hash in all logs. */
  count: number;
  firstSeen: SeenAt;
  lastSeen: SeenAt;
  /** Executions that ran after drift (exact); null when it cannot be told from what was read. */
  ranAfterDrift: number | null;
  /** Newest first. */
  executions: HistoryExecutionReport[];
  /** True when `executions` holds every execution at this hash. */
  executionsComplete: boolean;
}

export interface HistoryToolReport {
  tool: string;
  /** `served`: `liveHash` is what the server serves now; `not-served`; `unknown` (`liveReason`). */
  liveState: 'served' | 'not-served' | 'unknown';
  liveHash: string | null;
  liveReason: string | null;
  /** The first execution at the live hash in the logs: the moment drift became visible. */
  liveFirstSeen: SeenAt | null;
  pins: Array<{ hash: string; blueprint: string | null; step: string | null; file: string | null; anyServer: boolean }>;
  hashes: HistoryHashReport[];
}

export interface HistoryServerReport {
  server: string;
  tools: HistoryToolReport[];
}

export interface HistoryLogReport extends LogCounters {
  log: string;
  problems: LineProblem[];
  /** True when more problems were counted than are listed. */
  problemsTruncated: boolean;
}

/**
 * The report of `toolpin history --format json`: a stable shape, `version: 1`. Fields are only
 * ever added under a version; renaming or removing one bumps it.
 *
 * ```
 * { version: 1,
 *   query:   { tool, hash, stale, limit },                         // null = not given / all
 *   logs:    [ { log, lines, blank, dispatched, skipped, malformed, torn,
 *                problems: [ { line, offset, reason, message, field? } ], problemsTruncated } ],
 *   servers: [ { server,
 *                tools: [ { tool, liveState, liveHash, liveReason, liveFirstSeen: { at, seq } | null,
 *                           pins: [ { hash, blueprint, step, file, anyServer } ],
 *                           hashes: [ { schemaHash, status, pinned, live, count,
 *                                       firstSeen: { at, seq }, lastSeen: { at, seq }, ranAfterDrift,
 *                                       executions: [ { executionId, blueprint, stepId, at, seq,
 *                                                       log, line, ranAfterDrift } ],
 *                                       executionsComplete } ] } ] } ],
 *   summary: { logs, lines, dispatched, skipped, malformed, torn, hashes, executions,
 *              staleExecutions, unknownExecutions, ranAfterDrift } }
 * ```
 * Servers and tools are sorted by name; hashes by last execution, newest first; executions newest
 * first. `line` is 1-based, `offset` a 0-based byte offset in the log file.
 */
export interface HistoryReport {
  version: 1;
  query: { tool: string | null; hash: string | null; stale: boolean; limit: number | null };
  logs: HistoryLogReport[];
  servers: HistoryServerReport[];
  summary: {
    logs: number;
    lines: number;
    dispatched: number;
    skipped: number;
    malformed: number;
    torn: number;
    /** Selected (server, tool, schemaHash) entries. */
    hashes: number;
    /** Executions at the selected hashes. */
    executions: number;
    /** Executions at selected hashes that are not live: what `--stale` lists. */
    staleExecutions: number;
    /**
     * Executions with no live answer (status `unknown`, or `pinned` with `live: null`) among those
     * the tool and hash filters select, also under `--stale`, which cannot rule them in or out.
     */
    unknownExecutions: number;
    /** Sum of `ranAfterDrift` over selected hashes; null when one of them is null while not live. */
    ranAfterDrift: number | null;
  };
}

/** `fnv1a64:<hex>` for a bare 16-hex hash; anything else as given. */
export function normalizeHashQuery(hash: string): string {
  return /^[0-9a-f]{16}$/.test(hash) ? `fnv1a64:${hash}` : hash;
}

/** A selected key with its live and pin verdicts, before executions are listed. */
export interface SelectedKey {
  readonly summary: KeySummary;
  readonly pins: readonly SchemaPinRef[];
  readonly liveTool: LiveTool;
  readonly live: boolean | null;
  readonly status: HashStatus;
}

/** The keys a query selects, in report order (server, tool, then newest last execution first). */
export function selectHistory(model: HistoryView, query: HistoryQuery, inputs: Pick<HistoryInputs, 'pins' | 'live'>): SelectedKey[] {
  const hash = query.hash !== undefined ? normalizeHashQuery(query.hash) : undefined;
  const selected: SelectedKey[] = [];
  for (const summary of model.keys()) {
    if (query.tool !== undefined && summary.tool !== query.tool) continue;
    if (hash !== undefined && summary.schemaHash !== hash) continue;
    const liveTool = liveToolOf(inputs.live, summary.server, summary.tool);
    const live = liveTool.state === 'served' ? liveTool.hash === summary.schemaHash : liveTool.state === 'not-served' ? false : null;
    if (query.staleOnly && live !== false) continue;
    const pins = pinsFor(inputs.pins, summary.server, summary.tool);
    const pinned = pins.some((pin) => pin.hash === summary.schemaHash);
    selected.push({ summary, pins, liveTool, live, status: hashStatus(pinned, live) });
  }
  return selected;
}

/** Whether the report would list more executions of a key than the model holds in memory. */
export function needsAllExecutions(key: SelectedKey, limit: number | null): boolean {
  const wanted = limit === null ? key.summary.count : Math.min(limit, key.summary.count);
  return wanted > key.summary.recent.length;
}

function seenAt(execution: { at: string; seq: number }): SeenAt {
  return { at: execution.at, seq: execution.seq };
}

/** A tool's entry of the report, as its first selected key finds it: live state, live hash, pins. */
function toolReport(model: HistoryView, key: SelectedKey): HistoryToolReport {
  const { summary } = key;
  const liveHash = key.liveTool.state === 'served' ? key.liveTool.hash : null;
  const liveSummary = liveHash !== null ? model.summary({ server: summary.server, tool: summary.tool, schemaHash: liveHash }) : undefined;
  return {
    tool: summary.tool,
    liveState: key.liveTool.state,
    liveHash,
    liveReason: key.liveTool.state === 'unknown' ? key.liveTool.reason : null,
    liveFirstSeen: liveSummary ? seenAt(liveSummary.first) : null,
    pins: key.pins.map((pin) => ({ hash: pin.hash, blueprint: pin.blueprint, step: pin.step, file: pin.file, anyServer: pin.server === undefined })),
    hashes: [],
  };
}

/**
 * One hash's entry of the report, with how many of its executions ran after drift became visible
 * (null when unknown). `liveHash` is the tool's, `limit` how many executions are listed.
 */
function hashReport(model: HistoryView, key: SelectedKey, liveHash: string | null, inputs: HistoryInputs, limit: number | null): { hash: HistoryHashReport; ranAfterDrift: number | null } {
  const { summary } = key;
  // The moment drift became visible: the first execution at the live hash.
  const liveSummary = liveHash !== null ? model.summary({ server: summary.server, tool: summary.tool, schemaHash: liveHash }) : undefined;
  const driftMs = liveSummary?.first.atMs;
  const afterDrift = (execution: Execution): boolean | null => {
    if (key.live === true) return false;
    if (key.live === null) return null;
    return driftMs === undefined ? null : execution.atMs > driftMs;
  };

  const all = inputs.allExecutions?.(summary);
  const source = all && all.length >= summary.count ? sortNewestFirst([...all]) : [...summary.recent];
  const complete = source.length >= summary.count;
  const listed = limit === null ? source : source.slice(0, limit);

  let ranAfterDrift: number | null;
  if (key.live === true) ranAfterDrift = 0;
  else if (key.live === null || driftMs === undefined) ranAfterDrift = null;
  else if (summary.last.atMs <= driftMs) ranAfterDrift = 0;
  else if (summary.first.atMs > driftMs) ranAfterDrift = summary.count;
  else if (complete) ranAfterDrift = source.filter((execution) => execution.atMs > driftMs).length;
  else ranAfterDrift = null;

  const hash: HistoryHashReport = {
    schemaHash: summary.schemaHash,
    status: key.status,
    pinned: key.status === 'pinned' || key.status === 'pinned+live',
    live: key.live,
    count: summary.count,
    firstSeen: seenAt(summary.first),
    lastSeen: seenAt(summary.last),
    ranAfterDrift,
    executions: listed.map((execution) => ({
      executionId: execution.executionId,
      blueprint: execution.blueprint,
      stepId: execution.stepId,
      at: execution.at,
      seq: execution.seq,
      log: execution.log,
      line: execution.line,
      ranAfterDrift: afterDrift(execution),
    })),
    executionsComplete: listed.length >= summary.count,
  };
  return { hash, ranAfterDrift };
}

/** One log's entry of the report: its counters and the problems it kept. */
function logReport(model: HistoryView, log: string): HistoryLogReport {
  const stats = model.logStats(log);
  const listedProblems = stats.problems.filter((found) => found.reason !== 'torn').length;
  return {
    log,
    lines: stats.lines,
    blank: stats.blank,
    dispatched: stats.dispatched,
    skipped: stats.skipped,
    malformed: stats.malformed,
    torn: stats.torn,
    problems: [...stats.problems],
    problemsTruncated: listedProblems < stats.malformed,
  };
}

/** Builds the report for a query. Pure; see {@link HistoryReport} for the shape. */
export function historyReport(model: HistoryView, query: HistoryQuery, inputs: HistoryInputs): HistoryReport {
  const limit = query.limit === undefined ? model.recentLimit : query.limit;
  const selected = selectHistory(model, query, inputs);
  const servers: HistoryServerReport[] = [];
  let executions = 0;
  let staleExecutions = 0;
  let unknownExecutions = 0;
  let ranAfterDriftTotal: number | null = 0;

  for (const key of selected) {
    const { summary } = key;
    let server = servers[servers.length - 1];
    if (!server || server.server !== summary.server) servers.push((server = { server: summary.server, tools: [] }));
    let tool = server.tools[server.tools.length - 1];
    if (!tool || tool.tool !== summary.tool) server.tools.push((tool = toolReport(model, key)));
    const { hash, ranAfterDrift } = hashReport(model, key, tool.liveHash, inputs, limit);
    tool.hashes.push(hash);

    executions += summary.count;
    if (key.live === false) {
      staleExecutions += summary.count;
      ranAfterDriftTotal = ranAfterDriftTotal === null || ranAfterDrift === null ? null : ranAfterDriftTotal + ranAfterDrift;
    }
  }
  // Unknown executions are counted with the stale filter off: `--stale` can neither rule them in
  // nor out, so they make the answer incomplete.
  for (const key of query.staleOnly ? selectHistory(model, { ...query, staleOnly: false }, inputs) : selected) {
    if (key.live === null) unknownExecutions += key.summary.count;
  }

  // Within a tool: newest last execution first, then by hash.
  for (const server of servers) {
    for (const tool of server.tools) {
      tool.hashes.sort((a, b) => (a.lastSeen.at === b.lastSeen.at ? 0 : Date.parse(b.lastSeen.at) - Date.parse(a.lastSeen.at)) || b.lastSeen.seq - a.lastSeen.seq || (a.schemaHash < b.schemaHash ? -1 : 1));
    }
  }

  const logs = (inputs.logs ?? model.logs()).map((log) => logReport(model, log));
  const total = (field: keyof LogCounters): number => logs.reduce((sum, log) => sum + log[field], 0);

  return {
    version: HISTORY_REPORT_VERSION,
    query: { tool: query.tool ?? null, hash: query.hash !== undefined ? normalizeHashQuery(query.hash) : null, stale: query.staleOnly === true, limit },
    logs,
    servers,
    summary: {
      logs: logs.length,
      lines: total('lines'),
      dispatched: total('dispatched'),
      skipped: total('skipped'),
      malformed: total('malformed'),
      torn: total('torn'),
      hashes: selected.length,
      executions,
      staleExecutions,
      unknownExecutions,
      ranAfterDrift: ranAfterDriftTotal,
    },
  };
}

/**
 * Exit status of `toolpin history`, consistent with `toolpin check`: 1 when a selected execution
 * ran at a hash that is not live (a finding: what `--stale` lists); otherwise 2 when something
 * could not be checked (a log could not be read, or a selected hash has no live answer); else 0.
 * Malformed and torn lines are reported but never change the status.
 */
export function historyExitStatus(report: HistoryReport, couldNotReadSomething: boolean): 0 | 1 | 2 {
  if (report.summary.staleExecutions > 0) return 1;
  if (couldNotReadSomething || report.summary.unknownExecutions > 0) return 2;
  return 0;
}


// ---------------------------------------------------------------------------------------------
// Sources of the history view

/** What a {@link HistorySource} is given besides the query: the pins, the live schemas, the logs shown. */
export type HistorySourceInputs = Pick<HistoryInputs, 'pins' | 'live' | 'logs'>;

/**
 * A source of the history view: what answers `toolpin history` and the editor's tree. The logs (a
 * {@link HistoryModel} fed by the reader: {@link modelHistorySource}) are one source; a database
 * the dispatches were ingested into is another. The contract is the {@link HistoryReport}: for the
 * same dispatches, pins and live schemas, every source answers every query with the same report.
 */
export interface HistorySource {
  /**
   * The servers of the executions the query selects by tool and hash (not by `staleOnly`, which
   * needs the live schemas): the servers whose listings the caller fetches for {@link report}.
   */
  selectedServers(query: HistoryQuery, pins: readonly SchemaPinRef[]): Promise<readonly string[]>;
  /** The report of `query`, given the pins and the live schemas of (at least) those servers. */
  report(query: HistoryQuery, inputs: HistorySourceInputs): Promise<HistoryReport>;
}

/**
 * The model as a {@link HistorySource}. `allExecutionsOf` re-reads every execution of one key (the
 * reader's `LogSet.streamExecutions`) when a query lists more than the K the model keeps; without
 * it, the report lists those it keeps. A failure to re-read rejects the report.
 */
export function modelHistorySource(model: HistoryModel, allExecutionsOf?: (key: HistoryKey) => Promise<readonly Execution[]>): HistorySource {
  return {
    selectedServers(query, pins) {
      const keys = selectHistory(model, { ...query, staleOnly: false }, { pins, live: new Map() });
      return Promise.resolve([...new Set(keys.map((key) => key.summary.server))]);
    },
    async report(query, inputs) {
      const all = new Map<KeySummary, readonly Execution[]>();
      if (allExecutionsOf) {
        for (const key of selectHistory(model, query, inputs)) {
          if (needsAllExecutions(key, query.limit === undefined ? model.recentLimit : query.limit)) all.set(key.summary, await allExecutionsOf(key.summary));
        }
      }
      const byKey = new Map([...all].map(([summary, executions]) => [`${summary.server}\u0000${summary.tool}\u0000${summary.schemaHash}`, executions]));
      return historyReport(model, query, { ...inputs, allExecutions: (key) => byKey.get(`${key.server}\u0000${key.tool}\u0000${key.schemaHash}`) });
    },
  };
}
