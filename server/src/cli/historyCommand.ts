/**
 * `toolpin history [--tool NAME] [--hash H] [--stale] [--limit N|all] [--format text|json]
 *                  [--workspace DIR] [--offline] [logs…]`
 *
 * The dispatch-history read model (docs/formats.md §7) at the command line: which executions called
 * which tool at which schema hash, and whether each hash is pinned, live or stale.
 *
 * - Logs: each argument is a file, a folder (searched for `**\/*.events.jsonl`) or a glob (braces
 *   included); without arguments, `**\/*.events.jsonl` under the workspace. The folders the one file
 *   finder skips (server/src/io/fileFinder.ts: `node_modules`, `.git`, `.cache`, `dist`, …) are
 *   never searched.
 * - Pinned hashes: the schema pins of the workspace's blueprint files (connector tool pins are
 *   another pin kind and are never compared with a schema hash).
 * - Live hashes: the same live listing as `toolpin check` (the workspace's server registry, one
 *   short-lived session per server), for the servers the selected executions name;
 *   `schemaPin(inputSchema)` of each listed tool. `--offline` contacts no server: statuses are
 *   then `pinned` or `unknown`, never `stale`.
 * - `--stale` lists only executions at hashes that are not live (`stale` hashes and `pinned`
 *   hashes whose pin has drifted; see server/src/core/history/history.ts for "stale" and "ran after
 *   drift"). `--hash` accepts `fnv1a64:<hex>` or the bare 16 hex digits.
 * - Executions listed per hash: `--limit N` or `--limit all`; the default is all with `--stale` or
 *   `--hash`, else the 20 most recent (counts are always exact; more than the 20 kept in memory
 *   are re-read from the logs).
 * - Output: text (server → tool → hash → executions; malformed and torn line counts on standard
 *   error), or `--format json`: the `HistoryReport` of core/history/history.ts, `version: 1`.
 *
 * Exit status (as `toolpin check`): 0 no selected execution ran at a hash that is not live and
 * everything could be checked; 1 some did (a finding: what `--stale` lists); 2 none did, but
 * something could not be checked (a log could not be read, or a hash has no live answer —
 * always the case with `--offline` when there are executions), `--tool` or `--hash` selected no
 * execution (said on standard error, with the tools or hashes the logs hold), or a usage error
 * (e.g. a malformed `--hash`). Malformed and torn lines never change the status. No logs at all is not
 * an error (0, with a note on standard error) unless log arguments were given and match nothing.
 */
import { stat } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BlueprintModel } from '../core/documents/blueprint';
import { blueprintOf } from '../core/documents/documents';
import {
  type Execution,
  type HistoryKey,
  HistoryModel,
  type HistoryReport,
  type HistoryView,
  historyExitStatus,
  historyReport,
  type LiveServer,
  liveServerFromListing,
  needsAllExecutions,
  normalizeHashQuery,
  schemaPinsOf,
  selectHistory,
} from '../core/history/history';
import { isParsedPin, parsePin } from '../core/pins/pins';
import type { ServerDefinition } from '../core/verify/registry';
import { ensureListings, readDocuments, registryOfFolder } from '../engine/workspaceCheck';
import { fileKind, findLogFiles, isGlob, LogSet, splitGlob } from '../history/logReader';
import { errorCode, errorMessage } from '../core/json/values';
import { createCliInventory } from './checkCommand';
import { cliTrust } from './trust';
import { type CliIo, readIfPresent } from './io';
import { historyIngestCommand, historyPruneCommand, openStoreModel, type StoreAnswer } from './historyStoreCommand';

export interface HistoryArgs {
  /** Log files, folders or globs (default: `**\/*.events.jsonl` under the workspace). */
  logs: string[];
  tool?: string;
  hash?: string;
  stale?: boolean;
  format: 'text' | 'json';
  /** Executions listed per hash; null for all. Default: all with stale/hash, else 20. */
  limit?: number | null;
  /** The folder blueprints, connectors and mcp.json files are read from (default: cwd). */
  workspace?: string;
  /** Contact no server. */
  offline?: boolean;
  requestTimeoutMs?: number;
  overallTimeoutMs?: number;
  startTimeoutMs?: number;
  concurrency?: number;
  env?: Readonly<Record<string, string | undefined>>;
  /** Trust the workspace folder for this run (`--trust`; `TOOLPIN_TRUST=1` does the same). */
  trust?: boolean;
  /**
   * The team store (`--store URL`, docs/history-store.md): the model is read from it instead of
   * logs; with `ingest LOG…` or `prune --before DATE` as the arguments, those subcommands run.
   */
  store?: string;
  /** `prune --before DATE`. */
  before?: string;
}

const RECENT_LIMIT = 20;
const PROBLEMS_SHOWN_PER_LOG = 10;

function display(cwd: string, file: string): string {
  return path.relative(cwd, file).split(path.sep).join('/') || '.';
}

/** Resolves log arguments to files; arguments that match nothing are reported. */
async function resolveLogs(io: CliIo, args: HistoryArgs, workspaceFolder: string): Promise<{ files: string[]; unreadable: string[] }> {
  if (args.logs.length === 0) return { files: await findLogFiles(workspaceFolder), unreadable: [] };
  const files = new Set<string>();
  const unreadable: string[] = [];
  for (const given of args.logs) {
    if (isGlob(given)) {
      const { base, glob } = splitGlob(given);
      const found = await findLogFiles(path.resolve(io.cwd, base), [glob]);
      if (found.length === 0) unreadable.push(`${given}: no file matches`);
      for (const file of found) files.add(file);
      continue;
    }
    const target = path.resolve(io.cwd, given);
    const { files: documents, unreadable: missing } = await statTarget(target);
    if (missing) unreadable.push(`${given}: ${missing}`);
    for (const file of documents) files.add(file);
  }
  return { files: [...files].sort(), unreadable };
}

async function statTarget(target: string): Promise<{ files: string[]; unreadable?: string }> {
  try {
    const info = await stat(target);
    if (info.isDirectory()) return { files: await findLogFiles(target) };
    // Only regular files are read: a named pipe would wait for a writer forever, a device never ends.
    if (!info.isFile()) return { files: [], unreadable: `not a regular file (${fileKind(info)}); skipped` };
    return { files: [target] };
  } catch (error) {
    return { files: [], unreadable: String(errorCode(error) ?? error) };
  }
}

function keyId(key: HistoryKey): string {
  return `${key.server}\u0000${key.tool}\u0000${key.schemaHash}`;
}

export async function historyCommand(io: CliIo, args: HistoryArgs): Promise<number> {
  const subcommand = args.logs[0];
  if (subcommand === 'ingest' || subcommand === 'prune') {
    if (args.store === undefined) {
      io.stderr(`toolpin history ${subcommand}: give the store: --store postgres://[user@]host[:port]/database\n`);
      return 2;
    }
    return subcommand === 'ingest' ? historyIngestCommand(io, { store: args.store, logs: args.logs.slice(1) }) : historyPruneCommand(io, { store: args.store, before: args.before });
  }
  if (args.store !== undefined && args.logs.length > 0) {
    io.stderr('toolpin history: --store reads the store, not logs (ingest them with: toolpin history ingest --store URL LOG…)\n');
    return 2;
  }
  if (args.store !== undefined) {
    const answer = await openStoreModel(io, args.store, { recentLimit: RECENT_LIMIT, ...(args.tool !== undefined ? { tool: args.tool } : {}) });
    if (!answer) return 2;
    try {
      return await historyReportCommand(io, args, answer);
    } finally {
      await answer.close();
    }
  }
  return historyReportCommand(io, args, undefined);
}

/** The report, from the logs or (with `store`) from the store. */
async function historyReportCommand(io: CliIo, args: HistoryArgs, store: StoreAnswer | undefined): Promise<number> {
  if (args.hash !== undefined) {
    const parsed = parsePin(normalizeHashQuery(args.hash), 'fnv1a64');
    if (!isParsedPin(parsed)) {
      io.stderr(`toolpin history: --hash ${JSON.stringify(args.hash)}: ${parsed.message}\n`);
      return 2;
    }
  }
  const workspaceFolder = path.resolve(io.cwd, args.workspace ?? '.');
  const workspaceName = display(io.cwd, workspaceFolder) === '.' ? 'the workspace (the current folder)' : `the workspace ${display(io.cwd, workspaceFolder)}`;
  let couldNotRead = false;

  // 1. The logs.
  const { files, unreadable } = store ? { files: store.model.logs(), unreadable: [] } : await resolveLogs(io, args, workspaceFolder);
  for (const problem of unreadable) {
    io.stderr(`toolpin history: cannot read ${problem}\n`);
    couldNotRead = true;
  }
  if (files.length === 0 && args.logs.length === 0 && !store) {
    io.stderr(`toolpin history: no event logs (**/*.events.jsonl) under ${display(io.cwd, workspaceFolder)}\n`);
  }
  // The store answers from SQL; the file model is read from the logs (an empty one with a store).
  const fileModel = new HistoryModel({ recentLimit: RECENT_LIMIT });
  const model: HistoryView = store ? store.model : fileModel;
  const logIds = new Map(files.map((file) => [file, store ? file : display(io.cwd, file)]));
  const logs = new LogSet(fileModel, async () => (store ? [] : files), (file) => logIds.get(file) ?? file);
  const read = await logs.update();
  for (const failed of read.unreadable) {
    io.stderr(`toolpin history: cannot read ${display(io.cwd, failed.file)}: ${failed.reason}\n`);
    couldNotRead = true;
  }

  // 2. The pins: blueprints (schema pins) and connectors (servers) of the workspace.
  const { documents, issues } = await readDocuments([workspaceFolder], io);
  for (const issue of issues) {
    // Folders the finder could not search were never reported here; a document that cannot be read is.
    if (issue.kind !== 'read-failed') continue;
    io.stderr(`toolpin history: cannot read ${display(io.cwd, issue.path)}: ${issue.message}\n`);
    couldNotRead = true;
  }
  const blueprints: Array<{ model: BlueprintModel; file: string }> = documents.flatMap((document) => {
    const blueprint = blueprintOf(document);
    return blueprint && (document.kind === 'blueprint' || blueprint.steps.length > 0) ? [{ model: blueprint, file: display(io.cwd, document.path) }] : [];
  });
  const pins = schemaPinsOf(blueprints);

  // 3. The live hashes of the servers the selected executions name.
  const query = {
    ...(args.tool !== undefined ? { tool: args.tool } : {}),
    ...(args.hash !== undefined ? { hash: normalizeHashQuery(args.hash) } : {}),
    staleOnly: args.stale === true,
    limit: args.limit !== undefined ? args.limit : args.stale || args.hash !== undefined ? null : RECENT_LIMIT,
  };
  const selectedKeys = selectHistory(model, { ...query, staleOnly: false }, { pins, live: new Map() });
  if (selectedKeys.length === 0 && (args.tool !== undefined || args.hash !== undefined)) {
    // A filter that selects nothing is most often a typo: say so, and do not pass (exit 2).
    io.stderr(`toolpin history: ${emptySelectionMessage(model, args, files.length)}\n`);
    couldNotRead = true;
  }
  const serverNames = [...new Set(selectedKeys.map((key) => key.summary.server))];
  const { live, unconfigured } = await liveHashes(io, args, { folder: workspaceFolder, name: workspaceName, documents }, serverNames);

  // 4. Executions beyond the K in memory, re-read from the logs when the query lists them.
  const all = new Map<string, Execution[]>();
  for (const key of selectHistory(model, query, { pins, live })) {
    if (!needsAllExecutions(key, query.limit)) continue;
    const executions: Execution[] = [];
    try {
      if (store) executions.push(...(await store.allExecutions(key.summary)));
      else for await (const execution of logs.streamExecutions(key.summary)) executions.push(execution);
      all.set(keyId(key.summary), executions);
    } catch (error) {
      io.stderr(`toolpin history: cannot re-read executions of ${key.summary.tool} at ${key.summary.schemaHash}: ${errorMessage(error)}\n`);
      couldNotRead = true;
    }
  }

  const report = historyReport(model, query, {
    pins,
    live,
    allExecutions: (key) => all.get(keyId(key)),
    logs: files.map((file) => logIds.get(file)!).filter((log) => model.logs().includes(log)),
  });
  const status = historyExitStatus(report, couldNotRead);

  if (args.format === 'json') {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    io.stdout(renderText(report, args.offline === true));
    io.stderr(renderLineProblems(report));
  }
  if (args.format === 'text' && unconfigured.length > 0 && report.summary.unknownExecutions > 0) io.stderr(unconfiguredNote(unconfigured, workspaceName, args));
  return status;
}

/** Why a --tool or --hash filter selected nothing, with what the logs do hold. */
function emptySelectionMessage(model: HistoryView, args: HistoryArgs, logCount: number): string {
  const keys = model.keys();
  const tools = [...new Set(keys.map((key) => key.tool))].sort();
  const filter = [args.tool !== undefined ? `called tool "${args.tool}"` : '', args.hash !== undefined ? `ran at schema hash ${normalizeHashQuery(args.hash)}` : ''].filter(Boolean).join(' and ');
  const known =
    keys.length === 0
      ? `the logs hold no executions (${plural(logCount, 'log')} read)`
      : args.tool !== undefined && !tools.includes(args.tool)
        ? `tools in the logs: ${tools.join(', ')}`
        : `hashes of ${args.tool ?? 'the tools'} in the logs: ${[...new Set(keys.filter((key) => args.tool === undefined || key.tool === args.tool).map((key) => key.schemaHash))].sort().join(', ')}`;
  return `no execution ${filter}; ${known}`;
}

/** The workspace a history run reads its pins and servers from. */
interface HistoryWorkspace {
  readonly folder: string;
  /** How messages name it: `the workspace (the current folder)` or `the workspace <path>`. */
  readonly name: string;
  readonly documents: Awaited<ReturnType<typeof readDocuments>>['documents'];
}

/**
 * The live schema hashes of the named servers (listed unless --offline), and the names no connector
 * or mcp.json of the workspace configures (their status is unknown, with the reason).
 */
async function liveHashes(io: CliIo, args: HistoryArgs, workspace: HistoryWorkspace, serverNames: readonly string[]): Promise<{ live: Map<string, LiveServer>; unconfigured: string[] }> {
  const env = args.env ?? process.env;
  const unconfigured: string[] = [];
  const live = new Map<string, LiveServer>();
  if (args.offline) {
    for (const name of serverNames) live.set(name, { state: 'unavailable', reason: 'offline (--offline): no server was contacted' });
  } else if (serverNames.length > 0) {
    // The documents read are the whole folder's: no second walk for its connectors.
    const registry = await registryOfFolder(workspace.folder, workspace.documents, { readIfPresent: (file) => readIfPresent(io, file) }, { env, userHome: os.homedir() }, { scanFolder: false });
    const needed = new Map<string, ServerDefinition>();
    for (const name of serverNames) {
      const definition = registry.get(name);
      if (definition) needed.set(name, definition);
      else {
        const known = registry.names();
        unconfigured.push(name);
        live.set(name, {
          state: 'unavailable',
          reason: `no server named "${name}" is configured for ${workspace.name} (${known.length > 0 ? `known: ${known.join(', ')}` : 'it configures none'})`,
        });
      }
    }
    const { decide } = await cliTrust(workspace.folder, args.trust, env, io);
    const inventory = createCliInventory(args, env, decide);
    try {
      await ensureListings(inventory, [...needed.values()]);
    } finally {
      await inventory.dispose();
    }
    for (const [name, definition] of needed) {
      const listing = inventory.listing(definition);
      if (listing?.status === 'listed') live.set(name, liveServerFromListing(listing.listing));
      else live.set(name, { state: 'unavailable', reason: listing?.status === 'unavailable' ? listing.message : 'the server was not listed' });
    }
  }
  return { live, unconfigured };
}

/**
 * Why the live status is unknown, with where it looked: the servers come from the workspace's
 * connectors, .vscode/mcp.json and .mcp.json, so running outside it finds none of them.
 */
function unconfiguredNote(unconfigured: readonly string[], workspaceName: string, args: HistoryArgs): string {
  return (
    `toolpin history: the live status of ${plural(unconfigured.length, 'server')} is unknown: ${unconfigured.map((name) => `"${name}"`).join(', ')} ` +
    `${unconfigured.length === 1 ? 'is' : 'are'} not configured for ${workspaceName} ` +
    `(its connector files, .vscode/mcp.json and .mcp.json${args.workspace === undefined ? '; the workspace is the current folder unless --workspace DIR names it' : ''})\n`
  );
}

function statusLabel(hash: HistoryReport['servers'][number]['tools'][number]['hashes'][number]): string {
  switch (hash.status) {
    case 'pinned+live':
      return 'pinned+live';
    case 'live':
      return 'live';
    case 'pinned':
      return hash.live === false ? 'pinned, NOT LIVE' : 'pinned (live unknown)';
    case 'stale':
      return 'STALE';
    case 'unknown':
      return 'unknown';
  }
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** The text report: server → tool → hash → executions. */
export function renderText(report: HistoryReport, offline: boolean): string {
  const out: string[] = [];
  for (const server of report.servers) {
    out.push(server.server);
    for (const tool of server.tools) {
      const live =
        tool.liveState === 'served'
          ? `live ${tool.liveHash}${tool.liveFirstSeen ? ` (first seen ${tool.liveFirstSeen.at})` : ' (never seen in the logs)'}`
          : tool.liveState === 'not-served'
            ? 'NOT SERVED any more'
            : `live unknown: ${tool.liveReason}`;
      out.push(`  ${tool.tool}   ${live}`);
      for (const hash of tool.hashes) {
        const drift = hash.live === false ? (hash.ranAfterDrift === null ? ', ran after drift: unknown' : `, ${hash.ranAfterDrift} ran after drift`) : '';
        out.push(`    ${hash.schemaHash}  ${statusLabel(hash).padEnd(21)}  ${plural(hash.count, 'execution')}${drift}, last ${hash.lastSeen.at} (seq ${hash.lastSeen.seq})`);
        for (const execution of hash.executions) {
          const where = [execution.blueprint, execution.stepId].filter((part) => part !== null).join('/');
          out.push(`      ${execution.at}  ${execution.executionId}  ${where || '-'}  seq ${execution.seq}  ${execution.log}:${execution.line}${execution.ranAfterDrift ? '  (after drift)' : ''}`);
        }
        const more = hash.count - hash.executions.length;
        if (more > 0) out.push(`      … ${plural(more, 'more execution')} (--limit all lists them)`);
      }
    }
  }
  if (report.servers.length > 0) out.push('');
  const s = report.summary;
  const after = s.staleExecutions > 0 ? ` (${s.ranAfterDrift === null ? 'unknown how many' : s.ranAfterDrift} ran after drift)` : '';
  out.push(
    `${plural(s.hashes, 'hash', 'hashes')}, ${plural(s.executions, 'execution')}: ${s.staleExecutions} at hashes that are not live${after}, ${s.unknownExecutions} with live status unknown${offline ? ' (offline)' : ''}; ` +
      `${plural(s.logs, 'log')}, ${plural(s.dispatched, 'dispatch event')}, ${s.skipped} other event(s) skipped`,
  );
  return `${out.join('\n')}\n`;
}

/** Malformed and torn lines, for standard error (text format). */
export function renderLineProblems(report: HistoryReport): string {
  const out: string[] = [];
  for (const log of report.logs) {
    const shown = log.problems.filter((found) => found.reason !== 'torn').slice(0, PROBLEMS_SHOWN_PER_LOG);
    for (const found of shown) out.push(`toolpin history: ${log.log}:${found.line} (byte ${found.offset}): ${found.reason}: ${found.message}`);
    if (log.malformed > shown.length) out.push(`toolpin history: ${log.log}: … ${log.malformed - shown.length} more malformed line(s)`);
    const torn = log.problems.find((found) => found.reason === 'torn');
    if (torn) out.push(`toolpin history: ${log.log}:${torn.line} (byte ${torn.offset}): torn: ${torn.message}`);
  }
  if (report.summary.malformed > 0 || report.summary.torn > 0) {
    out.push(`toolpin history: ${plural(report.summary.malformed, 'malformed line')} and ${plural(report.summary.torn, 'torn line')} skipped in ${plural(report.logs.length, 'log')}`);
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}
