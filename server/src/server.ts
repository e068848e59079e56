/**
 * The language server, independent of how it is connected: `startServer(connection, runtime)`.
 * The process entry (main.ts), `toolpin lsp --stdio` and the LSP tests all call it.
 */
import * as os from 'node:os';
import { CodeActionKind, type Connection, DidChangeWatchedFilesNotification, FileChangeType, type InitializeResult, TextDocuments, TextDocumentSyncKind } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { PROBLEM_CODES } from './core/problems';
import { LiveWorkspace, type WorkspaceFileSystem } from './engine/liveWorkspace';
import { nodeFileSystem } from './engine/nodeFileSystem';
import { FIX_ALL_KIND, registerCodeActions } from './features/codeActions';
import { registerCodeLens } from './features/codeLens';
import { registerCompletion } from './features/completion';
import { registerDiagnostics } from './features/diagnostics';
import { registerHistory } from './features/history';
import { registerHover } from './features/hover';
import { registerReview } from './features/review';
import { registerStatus } from './features/status';
import { chainCredentials, type CredentialResolver, environmentCredentials, Redactor } from './mcp/credentials';
import { Inventory } from './mcp/inventory';
import {
  ClearCacheRequest,
  DEFAULT_SETTINGS,
  DidChangeTrustNotification,
  GetCredentialRequest,
  RefreshRequest,
  ServerInfoRequest,
  type ToolpinInitializationOptions,
  type ToolpinSettings,
} from './protocol';
import { runSafe } from './util/runSafe';
import { uriToPath } from './util/uris';

/** What the server needs from its host, injected so tests can control time and the file system. */
export interface ServerRuntime {
  setTimeout(callback: () => void, milliseconds: number): unknown;
  clearTimeout(handle: unknown): void;
  readonly fileSystem: WorkspaceFileSystem;
  readonly env: Readonly<Record<string, string | undefined>>;
  now(): number;
}

export const nodeRuntime: ServerRuntime = {
  setTimeout: (callback, milliseconds) => setTimeout(callback, milliseconds),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  fileSystem: nodeFileSystem,
  env: process.env,
  now: () => Date.now(),
};

/** The version the bundles were built from; esbuild does not inject it, so it is kept here. */
export const TOOLPIN_VERSION = '0.1.0';

function pick<T>(value: unknown, valid: (candidate: unknown) => boolean, fallback: T): T {
  return valid(value) ? (value as T) : fallback;
}

const isBoolean = (value: unknown): boolean => typeof value === 'boolean';
const isCount = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** Merges a received `toolpin` settings section over the defaults, ignoring ill-typed values. */
export function mergeSettings(received: unknown): ToolpinSettings {
  const section = (received ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const validate = section.validate ?? {};
  const verify = section.verify ?? {};
  const scan = section.workspaceScan ?? {};
  const defaults = DEFAULT_SETTINGS;
  return {
    validate: {
      enable: pick(validate.enable, isBoolean, defaults.validate.enable),
      debounceMs: Math.min(pick(validate.debounceMs, isCount, defaults.validate.debounceMs), 5000),
    },
    verify: {
      enable: pick(verify.enable, isBoolean, defaults.verify.enable),
      requestTimeoutMs: Math.max(100, pick(verify.requestTimeoutMs, isCount, defaults.verify.requestTimeoutMs)),
      minTtlSeconds: pick(verify.minTtlSeconds, isCount, defaults.verify.minTtlSeconds),
      ttlSeconds: pick(verify.ttlSeconds, isCount, defaults.verify.ttlSeconds),
      concurrency: Math.max(1, pick(verify.concurrency, isCount, defaults.verify.concurrency)),
    },
    workspaceScan: {
      enable: pick(scan.enable, isBoolean, defaults.workspaceScan.enable),
      maxFiles: pick(scan.maxFiles, isCount, defaults.workspaceScan.maxFiles),
    },
    servers: pick(section.servers, (value) => typeof value === 'object' && value !== null && !Array.isArray(value), defaults.servers),
    history: {
      logGlobs: pick((section.history ?? {}).logGlobs, (value) => Array.isArray(value) && value.every((entry) => typeof entry === 'string'), defaults.history.logGlobs),
    },
  };
}

export function startServer(connection: Connection, runtime: ServerRuntime = nodeRuntime): void {
  // A stray rejection must never take the server down: it is logged, and the server keeps serving.
  process.on('unhandledRejection', (reason) => connection.console.error(`toolpin: unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
  const documents = new TextDocuments(TextDocument);
  let settings: ToolpinSettings = DEFAULT_SETTINGS;
  let canPullConfiguration = false;
  let canWatchFiles = false;
  let trusted = true;
  let canCreateFiles = false;
  let supportsFolderChanges = false;
  let canReview = false;
  let canRefreshCodeLens = false;
  let folders: string[] = [];

  const redactor = new Redactor();
  const log = (line: string): void => connection.console.log(redactor.redact(line));
  // Credentials: the editor's secret storage first (when the client offers it), then the environment.
  let editorCredentials: CredentialResolver = { resolve: async () => undefined };
  const credentials = chainCredentials({ resolve: (name) => editorCredentials.resolve(name) }, environmentCredentials(runtime.env));

  const makeInventory = (): Inventory =>
    new Inventory({
      credentials,
      redactor,
      log,
      clientVersion: TOOLPIN_VERSION,
      trusted: () => trusted,
      keepAlive: true,
      requestTimeoutMs: settings.verify.requestTimeoutMs,
      overallTimeoutMs: Math.max(settings.verify.requestTimeoutMs * 3, 30_000),
      concurrency: settings.verify.concurrency,
      minTtlMs: settings.verify.minTtlSeconds * 1000,
      defaultTtlMs: settings.verify.ttlSeconds * 1000,
      now: runtime.now,
      onListingChanged: (definitions) => {
        diagnostics.revalidate([...new Set(definitions.flatMap((definition) => workspace.pathsUsing(definition)))]);
        status.schedule();
      },
    });
  let inventory = makeInventory();
  // Declared after the inventory factory, whose callbacks use it only once listings arrive.
  const workspace: LiveWorkspace = new LiveWorkspace({
    fileSystem: runtime.fileSystem,
    inventory: () => inventory,
    now: runtime.now,
    env: runtime.env,
    userHome: os.homedir(),
    userServers: () => settings.servers,
    liveEnabled: () => settings.verify.enable,
    log,
  });

  connection.onInitialize((params): InitializeResult => {
    canPullConfiguration = params.capabilities.workspace?.configuration === true;
    canWatchFiles = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    supportsFolderChanges = params.capabilities.workspace?.workspaceFolders === true;
    const workspaceEdit = params.capabilities.workspace?.workspaceEdit;
    canCreateFiles = workspaceEdit?.documentChanges === true && (workspaceEdit.resourceOperations ?? []).includes('create');
    const options = params.initializationOptions as ToolpinInitializationOptions | undefined;
    if (options?.settings) settings = mergeSettings(options.settings);
    if (typeof options?.trusted === 'boolean') trusted = options.trusted;
    folders = (params.workspaceFolders ?? []).map((folder) => uriToPath(folder.uri));
    if (folders.length === 0 && params.rootUri) folders = [uriToPath(params.rootUri)];
    const experimental = (params.capabilities.experimental ?? {}) as { toolpinCredentials?: boolean; toolpinReview?: boolean };
    canReview = experimental.toolpinReview === true;
    canRefreshCodeLens = params.capabilities.workspace?.codeLens?.refreshSupport === true;
    if (experimental.toolpinCredentials) {
      editorCredentials = {
        resolve: async (name) => {
          try {
            const result = await connection.sendRequest(GetCredentialRequest, { name });
            if (result.value) redactor.add(result.value);
            return result.value ?? undefined;
          } catch {
            return undefined;
          }
        },
      };
    }
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, FIX_ALL_KIND] },
        hoverProvider: true,
        completionProvider: { triggerCharacters: ['"', ':'] },
        codeLensProvider: { resolveProvider: false },
        workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
      },
      serverInfo: { name: 'toolpin', version: TOOLPIN_VERSION },
    };
  });

  const diagnostics = registerDiagnostics(connection, documents, workspace, runtime, () => settings);
  registerCodeActions(connection, documents, workspace, () => ({ canCreateFiles, canReview }));
  registerHover(connection, documents, workspace, runtime.now);
  registerCompletion(connection, documents, workspace);
  registerCodeLens(connection, documents, workspace, diagnostics, { now: runtime.now, setTimeout: runtime.setTimeout, clearTimeout: runtime.clearTimeout, canRefresh: () => canRefreshCodeLens });
  registerReview(connection, documents, workspace, () => ({ canCreateFiles }));
  const status = registerStatus(connection, workspace, diagnostics, runtime);
  const history = registerHistory(connection, workspace, () => settings);
  workspace.onDidChange(() => history.listingsChanged());

  const pullSettings = async (): Promise<void> => {
    if (!canPullConfiguration) return;
    try {
      const [section] = await connection.workspace.getConfiguration([{ section: 'toolpin' }]);
      settings = mergeSettings(section);
    } catch (error) {
      connection.console.warn(`toolpin: could not read settings, using defaults: ${String(error)}`);
    }
  };

  const scan = async (): Promise<void> => {
    await workspace.setFolders(folders, settings.workspaceScan.enable ? settings.workspaceScan.maxFiles : 0);
    history.setFolders(folders);
  };

  connection.onInitialized(() => {
    void (async () => {
      await pullSettings();
      if (canWatchFiles) {
        await connection.client.register(DidChangeWatchedFilesNotification.type, {
          watchers: [{ globPattern: '**/*.{blueprint,connector}.{json,jsonc}' }, { globPattern: '**/{mcp.json,.mcp.json}' }, { globPattern: '**/*.jsonl' }],
        });
      }
      await scan();
      diagnostics.revalidateAll();
      status.schedule();
    })().catch((error: unknown) => connection.console.error(`toolpin: start-up failed: ${String(error)}`));
    if (supportsFolderChanges) connection.workspace.onDidChangeWorkspaceFolders((event) => {
      const removed = new Set(event.removed.map((folder) => uriToPath(folder.uri)));
      folders = [...folders.filter((folder) => !removed.has(folder)), ...event.added.map((folder) => uriToPath(folder.uri))];
      void scan().then(() => diagnostics.revalidateAll());
    });
  });

  connection.onDidChangeConfiguration((change) => {
    const pushed = (change.settings as { toolpin?: unknown } | undefined)?.toolpin;
    const before = JSON.stringify(settings.verify);
    void (async () => {
      if (pushed) settings = mergeSettings(pushed);
      await pullSettings();
      if (JSON.stringify(settings.verify) !== before) {
        // Timeouts, TTLs and concurrency live in the inventory: start a fresh one.
        const old = inventory;
        inventory = makeInventory();
        await old.dispose();
      }
      workspace.settingsChanged();
      diagnostics.revalidateAll();
    })();
  });

  connection.onDidChangeWatchedFiles((params) => {
    for (const change of params.changes) {
      if (change.uri.endsWith('.jsonl')) void history.update();
      else void workspace.fileChanged(uriToPath(change.uri), change.type === FileChangeType.Deleted);
    }
  });

  connection.onNotification(DidChangeTrustNotification, (params) => {
    trusted = params.trusted;
    void inventory.clear().then(() => workspace.refresh());
  });

  connection.onRequest(RefreshRequest, (params, token) =>
    runSafe(connection.console, 'toolpin/refresh', token, undefined, () => workspace.refresh(params.servers)),
  );
  connection.onRequest(ClearCacheRequest, (token) =>
    runSafe(connection.console, 'toolpin/clearCache', token, undefined, async () => {
      await inventory.clear();
      diagnostics.revalidateAll();
    }),
  );

  connection.onRequest(ServerInfoRequest, (token) =>
    runSafe(connection.console, 'toolpin/serverInfo', token, { version: TOOLPIN_VERSION, problemCodes: [] }, () => ({
      version: TOOLPIN_VERSION,
      problemCodes: Object.entries(PROBLEM_CODES).map(([code, info]) => ({ code, severity: info.severity, title: info.title })),
    })),
  );

  // Stale listings (TTL expired) are fetched again in the background, and their documents
  // re-checked, without anyone typing.
  const ttlTimer = setInterval(() => {
    const stale = inventory.stale();
    if (stale.length > 0 && settings.verify.enable) void inventory.ensure(stale).then(() => diagnostics.revalidate([...new Set(stale.flatMap((definition) => workspace.pathsUsing(definition)))]));
  }, 15_000);
  ttlTimer.unref();

  connection.onShutdown(async () => {
    clearInterval(ttlTimer);
    history.dispose();
    await inventory.dispose();
  });
  connection.onExit(() => {
    void inventory.dispose();
  });

  documents.listen(connection);
  connection.listen();
}
