/**
 * Dispatch history in the editor: the read model over the workspace's `*.events.jsonl` logs
 * (docs/formats.md §7), kept up to date incrementally (only appended bytes are read; truncation and
 * rotation handled), served to the client's tree view by `toolpin/history`, with a change
 * notification when a log grows or a listing changes.
 *
 * Pins come from the workspace's blueprints, live hashes from the same inventory that verifies
 * pins; a server without a listing yet is asked for one and its hashes are "unknown" until then.
 *
 * With `toolpin.history.store` set, the tree reads that team store instead of the logs (which are
 * then not read at all): features/historyStore.ts, whose NOTIFYs become the change notification.
 */
import * as path from 'node:path';
import type { Connection } from 'vscode-languageserver';
import type { BlueprintModel } from '../core/documents/blueprint';
import { blueprintOf } from '../core/documents/documents';
import { kindOfFile } from '../core/documents/kinds/registry';
import {
  type Execution,
  HistoryModel,
  type HistoryView,
  historyReport,
  type LiveServer,
  liveServerFromListing,
  schemaPinsOf,
} from '../core/history/history';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import { findLogFiles, LogSet } from '../history/logReader';
import type { WalkBudget, WalkCut } from '../io/fileFinder';
import { HistoryChangedNotification, HistoryExecutionsRequest, HistoryRequest, type HistoryViewReport, LocateStepRequest } from '../protocol';
import type { ServerRuntime } from '../runtime';
import type { SettingsView } from '../settings';
import { logSafely, notifySafely, runSafe } from '../util/runSafe';
import { spanToRange } from '../util/toLsp';
import { pathToUri } from '../util/uris';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { type StoreAccess, StoreHistory } from './historyStore';

/** How often logs are looked at when no file watcher reports them (see `pollIfUnwatched`). */
const POLL_MS = 2000;
/** Every how many polls the folders are walked for new logs (the rest only read known logs). */
const REDISCOVER_EVERY = 15;

export interface HistoryFeature {
  /**
   * Reads what the logs gained and notifies the client when anything changed. A watched log that
   * changed needs no walk of the folders (`rediscover: false`); a created or deleted one does.
   */
  update(options?: { readonly rediscover?: boolean; readonly file?: string }): Promise<void>;
  /** Whether the client watches `**\/*.jsonl` for the server (decided once the registration is answered). */
  setFilesWatched(watched: boolean): void;
  /** The folders changed: logs are discovered again. */
  setFolders(folders: readonly string[]): void;
  /** Listings changed: live statuses may differ. */
  listingsChanged(): void;
  /** Settings changed: `history.logGlobs` may name other logs, and a glob a watcher misses needs the poll. */
  settingsChanged(): Promise<void>;
  /** Trust changed (the client's word, or a `toolpin trust` record): a store refused before may be read now. */
  trustChanged(): void;
  dispose(): void;
}

/** The bound of one search of a workspace folder for logs, and who hears that it was reached. */
export type LogSearchBound = () => { readonly budget: WalkBudget; readonly onCut: (folder: string, cut: WalkCut) => void };

export function registerHistory(
  connection: Connection,
  workspace: LiveWorkspace,
  settings: SettingsView,
  runtime: Pick<ServerRuntime, 'setTimeout'>,
  storeAccess: Omit<StoreAccess, 'changed' | 'log'>,
  logSearch?: LogSearchBound,
): HistoryFeature {
  let folders: string[] = [];
  const model = new HistoryModel();
  const store = new StoreHistory({ ...storeAccess, changed: () => notify(), log: (line) => logSafely(connection.console, line) });
  /** Takes `toolpin.history.store` (window-scoped: one value for the server); true when it changed. */
  const configureStore = (): boolean => store.configure(settings.current().history.store);
  const discover = (): Promise<string[]> => discoverLogs(folders, settings, logSearch);
  const idOf = (file: string): string => {
    const folder = folders.find((candidate) => !path.relative(candidate, file).startsWith('..'));
    return folder ? path.relative(folder, file).split(path.sep).join('/') : file;
  };
  const logs = new LogSet(model, discover, idOf);
  let rediscoverNext = true;

  const notify = (): void => notifySafely(() => connection.sendNotification(HistoryChangedNotification, { logs: logs.files().length }));

  /** One read of the logs (with a walk of the folders first when one was asked for). */
  const readOnce = async (): Promise<void> => {
    // A store answers instead of the logs: they are not read.
    configureStore();
    if (store.configured) return;
    const rediscover = rediscoverNext;
    rediscoverNext = false;
    const before = logs.files().length;
    const result = await logs.update({ rediscover });
    if (result.bytesRead > 0 || result.resets.length > 0 || result.removed.length > 0 || logs.files().length !== before) notify();
  };

  /**
   * Reads the logs; a call while a read runs gets one more read after it (which sees whatever that
   * call was for), shared by every call that arrives meanwhile.
   */
  const readSerially = oneAtATime(() => readOnce().catch((error: unknown) => logSafely(connection.console, `toolpin: reading dispatch logs failed: ${String(error)}`)));
  const update = (options: { readonly rediscover?: boolean; readonly file?: string } = {}): Promise<void> => {
    // A change to a file that is not a known log may be a log created before the last walk.
    if (options.rediscover !== false || (options.file !== undefined && !logs.files().includes(options.file))) rediscoverNext = true;
    return readSerially();
  };

  // File events, not polling: where the client watches `**/*.jsonl` and every configured glob
  // names .jsonl files, the logs are read only when an event says so. Otherwise (a client that
  // cannot or will not watch, a glob a watcher does not cover) one re-armed runtime timer reads
  // the known logs every 2 s and walks the folders for new ones every 30 s; it never keeps the
  // process alive and ends on dispose.
  let filesWatched = false;
  let disposed = false;
  let timer: { dispose(): void } | undefined;
  let polls = 0;
  const pollIfUnwatched = async (): Promise<void> => {
    // A store is followed by LISTEN/NOTIFY, never polled.
    if (timer || disposed || store.configured) return;
    const globs = (await Promise.all(folders.map(async (folder) => (await settings.forFolder(folder)).history.logGlobs))).flat();
    if (filesWatched && globs.every((glob) => kindOfFile(glob)?.role === 'events')) return;
    timer = runtime.setTimeout(function poll() {
      polls++;
      void update({ rediscover: polls % REDISCOVER_EVERY === 0 }).finally(() => {
        if (!disposed) timer = runtime.setTimeout(poll, POLL_MS);
      });
    }, POLL_MS);
  };

  registerHistoryRequests(connection, { workspace, model, logs, folders: () => folders, idOf, update, store, configureStore });

  return {
    update,
    setFilesWatched: (watched) => {
      filesWatched = watched;
    },
    setFolders: (next) => {
      folders = [...next];
      void update().then(() => pollIfUnwatched());
    },
    listingsChanged: notify,
    settingsChanged: async () => {
      // Another store, or none: the tree asks again.
      if (configureStore()) notify();
      await update();
      await pollIfUnwatched();
    },
    trustChanged: () => {
      if (!store.configured) return;
      store.drop();
      notify();
    },
    dispose: () => {
      disposed = true;
      timer?.dispose();
      store.dispose();
    },
  };
}

/** The dispatch logs of the folders, each searched with its own `history.logGlobs` (resource-scoped) within the search bound. */
async function discoverLogs(folders: readonly string[], settings: SettingsView, logSearch: LogSearchBound | undefined): Promise<string[]> {
  const found: string[] = [];
  for (const folder of folders) {
    const bound = logSearch?.();
    const walk = bound ? { budget: bound.budget, onCut: (cut: WalkCut) => bound.onCut(folder, cut) } : undefined;
    found.push(...(await findLogFiles(folder, (await settings.forFolder(folder)).history.logGlobs, walk)));
  }
  return found;
}

/**
 * Runs `run` one at a time: a call while a run is under way gets one more run after it, which
 * sees whatever that call was for, shared by every call that arrives meanwhile.
 */
function oneAtATime(run: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let following: Promise<void> | undefined;
  const start = (): Promise<void> => {
    if (running) {
      following ??= running.then(() => {
        following = undefined;
        return start();
      });
      return following;
    }
    running = run().finally(() => {
      running = undefined;
    });
    return running;
  };
  return start;
}

/** What the history's requests read of the feature's state. */
interface HistoryRequestContext {
  readonly workspace: LiveWorkspace;
  readonly model: HistoryModel;
  readonly logs: LogSet;
  readonly folders: () => readonly string[];
  readonly idOf: (file: string) => string;
  readonly update: (options?: { readonly rediscover?: boolean }) => Promise<void>;
  /** The team store, read instead of the logs when `toolpin.history.store` is set. */
  readonly store: StoreHistory;
  readonly configureStore: () => boolean;
}

/** The history view's requests: the report, one hash's executions, and a step's place in its blueprint. */
function registerHistoryRequests(connection: Connection, { workspace, model, logs, folders, idOf, update, store, configureStore }: HistoryRequestContext): void {
  connection.onRequest(HistoryRequest, (params, token) =>
    runSafe<HistoryViewReport | null>(connection.console, 'toolpin/history', token, null, async () => {
      const query = { staleOnly: params.staleOnly === true };
      configureStore();
      if (store.configured) {
        const answer = await store.read(model.recentLimit);
        // Without an answer, an empty report (nothing from the logs) carries the reason.
        const view = answer.model ?? new HistoryModel();
        const report = historyReport(view, query, { pins: schemaPinsOf(blueprints(workspace)), live: await liveSchemas(workspace, view, folders()), logs: view.logs() });
        return { ...report, store: { url: answer.url, problem: answer.problem } };
      }
      await update({ rediscover: false });
      const pins = schemaPinsOf(blueprints(workspace));
      return historyReport(model, query, { pins, live: await liveSchemas(workspace, model, folders()), logs: logs.files().map(idOf) });
    }),
  );

  connection.onRequest(HistoryExecutionsRequest, (params, token) =>
    runSafe(connection.console, 'toolpin/historyExecutions', token, [], async () => {
      const executions: Execution[] = [];
      configureStore();
      let view: HistoryView = model;
      if (store.configured) {
        const answer = await store.read(model.recentLimit);
        if (!answer.model) return [];
        view = answer.model;
        executions.push(...(await store.allExecutions({ server: params.server, tool: params.tool, schemaHash: params.schemaHash })));
      } else {
        for await (const execution of logs.streamExecutions(params)) executions.push(execution);
      }
      const pins = schemaPinsOf(blueprints(workspace));
      const report = historyReport(view, { tool: params.tool, hash: params.schemaHash, limit: null }, {
        pins,
        live: await liveSchemas(workspace, view, folders()),
        allExecutions: (key) => (key.server === params.server && key.tool === params.tool && key.schemaHash === params.schemaHash ? executions : undefined),
      });
      return report.servers.find((server) => server.server === params.server)?.tools.find((tool) => tool.tool === params.tool)?.hashes.find((hash) => hash.schemaHash === params.schemaHash)?.executions ?? [];
    }),
  );

  connection.onRequest(LocateStepRequest, (params, token) =>
    runSafe(connection.console, 'toolpin/locateStep', token, null, () => {
      for (const { model: blueprint, file } of blueprints(workspace)) {
        // A source module's mcpInvoke$ steps belong to no named blueprint: only their ids must match.
        if (blueprint.name !== undefined && blueprint.name.value !== params.blueprint) continue;
        const step = blueprint.steps.find((candidate) => candidate.id?.value === params.stepId);
        if (!step?.id) continue;
        const text = workspace.text(file) ?? '';
        const document = TextDocument.create(pathToUri(file), 'jsonc', 0, text);
        return { uri: document.uri, range: spanToRange(document, step.id.span) };
      }
      return null;
    }),
  );
}

/** Blueprints of the workspace, for pins and for locating steps. */
function blueprints(workspace: LiveWorkspace): Array<{ model: BlueprintModel; file: string }> {
  return workspace.paths().flatMap((file) => {
    const analysis = workspace.analysis(file);
    const model = analysis ? blueprintOf(analysis) : undefined;
    return model ? [{ model, file }] : [];
  });
}

/** Live schema hashes of the servers the logs name, from the inventory (asking for missing ones). */
async function liveSchemas(workspace: LiveWorkspace, model: HistoryView, folders: readonly string[]): Promise<Map<string, LiveServer>> {
  const live = new Map<string, LiveServer>();
  const names = new Set(model.keys().map((key) => key.server));
  const anyFile = workspace.paths()[0] ?? path.join(folders[0] ?? '.', 'any-file');
  for (const { definition, listing } of await workspace.servers(anyFile)) {
    if (!names.has(definition.name)) continue;
    if (listing?.status === 'listed') live.set(definition.name, liveServerFromListing(listing.listing));
    else if (listing?.status === 'unavailable') live.set(definition.name, { state: 'unavailable', reason: listing.message });
    else workspace.requestListings([definition]);
  }
  return live;
}
