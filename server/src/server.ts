/**
 * The language server, independent of the process and transport it runs in:
 * `startServer(connection, runtime)`. server/src/main.ts (for `toolpin lsp`) calls it with a Node
 * connection and Node's runtime.
 *
 * This file holds what the server announces (its capabilities), what it learns of the client, and
 * the table of features it registers; settings are server/src/settings.ts, the trust decision
 * server/src/trustDecision.ts, the workspace and its verification server/src/engine/. Every
 * request and notification handler runs through `runSafe`: no handler exception reaches the
 * connection.
 */
import { nodeModuleAccess } from './io/sourceModules';
import * as os from 'node:os';
import {
  CodeActionKind,
  type Connection,
  DidChangeWatchedFilesNotification,
  type DidChangeWatchedFilesParams,
  FileChangeType,
  type InitializeParams,
  type InitializeResult,
  MarkupKind,
  MessageType,
  type ServerCapabilities,
  ShowMessageNotification,
  TextDocuments,
  TextDocumentSyncKind,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { PROBLEM_CODES } from './core/problems';
import type { ListingSource } from './engine/listingSource';
import { LiveWorkspace } from './engine/liveWorkspace';
import { sourceNamesFrom } from './core/documents/source/sourceNames';
import { kindOfFile, watchedFileGlobs } from './core/documents/kinds/registry';
import { FIX_ALL_KIND, registerCodeActions } from './features/codeActions';
import { registerCodeLens } from './features/codeLens';
import { registerCompletion } from './features/completion';
import { type DiagnosticsFeature, registerDiagnostics } from './features/diagnostics';
import { type HistoryFeature, registerHistory } from './features/history';
import { hoverFormatOf, registerHover } from './features/hover';
import { registerReview } from './features/review';
import { registerStatus } from './features/status';
import { registerStoreEntryWrites, WRITE_STORE_ENTRIES_COMMAND } from './features/storeEntries';
import { TrustStore, trustFilePath } from './io/trustStore';
import { chainCredentials, type CredentialResolver, environmentCredentials, Redactor } from './mcp/credentials';
import { Inventory } from './mcp/inventory';
import { ClearCacheRequest, DidChangeTrustNotification, GetCredentialRequest, RefreshRequest, ServerInfoRequest, STORE_PASSWORD_CREDENTIAL, type ToolpinInitializationOptions } from './protocol';
import { type ServerRuntime, TOOLPIN_VERSION } from './runtime';
import { overallTimeoutFor, scanBudgetOf, SettingsStore } from './settings';
import { ServerTrust } from './trustDecision';
import { notifySafely, runSafe } from './util/runSafe';
import { type WalkCut, walkCutMessage } from './io/fileFinder';
import { uriToPath } from './util/uris';

// Re-exported for the CLI, which starts the server from the same bundle.
export { nodeRuntime, type ServerRuntime, TOOLPIN_VERSION } from './runtime';

/** What the server announces in `initialize`. */
export const SERVER_CAPABILITIES: ServerCapabilities = {
  textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
  codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, FIX_ALL_KIND] },
  hoverProvider: true,
  completionProvider: { triggerCharacters: ['"', ':'] },
  codeLensProvider: { resolveProvider: false },
  workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
};


/** What the server learned of the client in `initialize`; all false until then. */
export interface ClientAbilities {
  canWatchFiles: boolean;
  canCreateFiles: boolean;
  supportsFolderChanges: boolean;
  /** The client shows reviews (experimental `toolpinReview`). */
  canReview: boolean;
  /** Completion items put the cursor before a comma they add only where the client expands snippets. */
  completionSnippets: boolean;
  canRefreshCodeLens: boolean;
  /** The client answers `toolpin/getCredential` (experimental `toolpinCredentials`). */
  holdsCredentials: boolean;
  /** Markdown when the client declares it in hover.contentFormat, else plain text (features/hover.ts). */
  hoverFormat: MarkupKind;
}

/** True when an experimental client capability is `true` (the field is any JSON). */
function experimentalFlag(experimental: unknown, name: string): boolean {
  return typeof experimental === 'object' && experimental !== null && Reflect.get(experimental, name) === true;
}

export function clientAbilitiesOf(params: InitializeParams): ClientAbilities {
  const workspace = params.capabilities.workspace;
  const edit = workspace?.workspaceEdit;
  return {
    canWatchFiles: workspace?.didChangeWatchedFiles?.dynamicRegistration === true,
    canCreateFiles: edit?.documentChanges === true && (edit.resourceOperations ?? []).includes('create'),
    supportsFolderChanges: workspace?.workspaceFolders === true,
    canReview: experimentalFlag(params.capabilities.experimental, 'toolpinReview'),
    completionSnippets: params.capabilities.textDocument?.completion?.completionItem?.snippetSupport === true,
    canRefreshCodeLens: workspace?.codeLens?.refreshSupport === true,
    holdsCredentials: experimentalFlag(params.capabilities.experimental, 'toolpinCredentials'),
    hoverFormat: hoverFormatOf(params.capabilities.textDocument?.hover?.contentFormat),
  };
}

/** The client's `initializationOptions` (any JSON) as far as they are well-typed. */
export function initializationOptionsOf(value: unknown): ToolpinInitializationOptions {
  if (typeof value !== 'object' || value === null) return {};
  const settings: unknown = Reflect.get(value, 'settings');
  const trusted: unknown = Reflect.get(value, 'trusted');
  return { ...(settings ? { settings } : {}), ...(typeof trusted === 'boolean' ? { trusted } : {}) };
}

/** The state every handler shares: settings, trust, credentials, the listing source and the workspace. */
class ServerContext {
  readonly settings: SettingsStore;
  readonly trust: ServerTrust;
  readonly redactor = new Redactor();
  readonly workspace: LiveWorkspace;
  abilities: ClientAbilities = { canWatchFiles: false, canCreateFiles: false, supportsFolderChanges: false, canReview: false, completionSnippets: false, canRefreshCodeLens: false, holdsCredentials: false, hoverFormat: MarkupKind.Markdown };
  folders: string[] = [];
  /** The listing source in use; replaced when settings it holds (timeouts, TTLs, concurrency) change. */
  listings: ListingSource;
  // Credentials: the editor's secret storage first (when the client offers it), then the environment.
  private editorCredentials: CredentialResolver = { resolve: async () => undefined };

  constructor(
    private readonly connection: Connection,
    private readonly runtime: ServerRuntime,
  ) {
    this.settings = new SettingsStore((message) => connection.console.warn(message));
    this.trust = new ServerTrust(new TrustStore(trustFilePath(runtime.env), (message) => connection.console.warn(message)), (folder) => this.workspace.isWorkspaceFolder(folder));
    this.listings = this.makeListingSource();
    this.workspace = new LiveWorkspace({
      fileSystem: runtime.fileSystem,
      inventory: () => this.listings,
      now: runtime.now,
      env: runtime.env,
      userHome: os.homedir(),
      userServers: () => this.settings.current().servers,
      liveEnabled: () => this.settings.current().verify.enable,
      sourceNamesFor: async (folder) => {
        const { names, problems } = sourceNamesFrom((await this.settings.forFolder(folder)).sources);
        for (const problem of problems) connection.console.warn(`toolpin: the setting toolpin.sources.${problem}; the entry is left out`);
        return names;
      },
      log: (line) => this.log(line),
      setTimeout: runtime.setTimeout,
      moduleAccess: (root, openText, maxFileBytes) => nodeModuleAccess({ root, openText, maxFileBytes }),
    });
  }

  log(line: string): void {
    this.connection.console.log(this.redactor.redact(line));
  }

  private readonly warned = new Set<string>();

  /**
   * A warning the user should see once per session (a bound reached): shown as a message, not a
   * diagnostic (it belongs to no file), and written to the log.
   */
  warnOnce(message: string): void {
    this.connection.console.warn(`toolpin: ${message}`);
    const key = message.replace(/\(.*?\)/g, '');
    if (this.warned.has(key)) return;
    this.warned.add(key);
    notifySafely(() => this.connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Warning, message }));
  }

  /** The editor's secret storage, asked only for names a connector's `credentialRef` gives. */
  useEditorCredentials(): void {
    this.editorCredentials = {
      resolve: async (name) => {
        try {
          const result = await this.connection.sendRequest(GetCredentialRequest, { name });
          if (result.value) this.redactor.add(result.value);
          return result.value ?? undefined;
        } catch {
          return undefined;
        }
      },
    };
  }

  /** The team store's password from the editor's secret storage, when the client holds one. */
  async storePassword(): Promise<string | undefined> {
    return this.abilities.holdsCredentials ? this.editorCredentials.resolve(STORE_PASSWORD_CREDENTIAL) : undefined;
  }

  private makeListingSource(): ListingSource {
    const verify = this.settings.current().verify;
    return (this.runtime.createListingSource ?? ((options) => new Inventory(options)))({
      credentials: chainCredentials({ resolve: (name) => this.editorCredentials.resolve(name) }, environmentCredentials(this.runtime.env)),
      redactor: this.redactor,
      log: (line) => this.log(line),
      clientVersion: TOOLPIN_VERSION,
      trust: (definition) => this.trust.decide(definition),
      keepAlive: true,
      requestTimeoutMs: verify.requestTimeoutMs,
      overallTimeoutMs: overallTimeoutFor(verify.requestTimeoutMs),
      startTimeoutMs: verify.startTimeoutMs,
      concurrency: verify.concurrency,
      minTtlMs: verify.minTtlSeconds * 1000,
      defaultTtlMs: verify.ttlSeconds * 1000,
      now: this.runtime.now,
      // The one way a listing change reaches the documents (engine/liveWorkspace.ts).
      onListingChanged: (definitions) => this.workspace.listingsChanged(definitions),
    });
  }

  /** Starts a fresh listing source (its settings changed) and ends the old one's sessions. */
  async replaceListingSource(): Promise<void> {
    const old = this.listings;
    this.listings = this.makeListingSource();
    await old.dispose();
  }

  /** Reads the trust record and scans the workspace folders for documents. */
  async scan(history: HistoryFeature): Promise<void> {
    const settings = this.settings.current();
    await this.trust.readRecorded(this.folders);
    await this.workspace.setFolders(this.folders, settings.workspaceScan.enable ? settings.workspaceScan.maxFiles : 0, {
      budget: scanBudgetOf(settings),
      onCut: (folder, cut) => this.warnOnce(walkCutMessage(folder, cut, 'blueprint and connector files')),
    });
    history.setFolders(this.folders);
  }

  /** The bound of a search of a workspace folder for dispatch logs, and its one warning. */
  logSearch(): { budget: ReturnType<typeof scanBudgetOf>; onCut: (folder: string, cut: WalkCut) => void } {
    return { budget: scanBudgetOf(this.settings.current()), onCut: (folder, cut) => this.warnOnce(walkCutMessage(folder, cut, 'dispatch logs')) };
  }
}

/** The features, registered in this order; diagnostics first, as the others follow its publications. */
function registerFeatures(connection: Connection, documents: TextDocuments<TextDocument>, context: ServerContext, runtime: ServerRuntime): { diagnostics: DiagnosticsFeature; status: { schedule(): void }; history: HistoryFeature } {
  const { workspace } = context;
  const diagnostics = registerDiagnostics(connection, documents, workspace, runtime, context.settings);
  registerCodeActions(connection, documents, workspace, () => ({ canCreateFiles: context.abilities.canCreateFiles, canReview: context.abilities.canReview }));
  registerHover(connection, documents, workspace, runtime.now, () => context.abilities.hoverFormat);
  registerCompletion(connection, documents, workspace, () => ({ snippets: context.abilities.completionSnippets }));
  registerCodeLens(connection, documents, workspace, diagnostics, { now: runtime.now, setTimeout: runtime.setTimeout, canRefresh: () => context.abilities.canRefreshCodeLens });
  registerReview(connection, documents, workspace, () => ({ canCreateFiles: context.abilities.canCreateFiles }));
  registerStoreEntryWrites(connection, workspace);
  const status = registerStatus(connection, workspace, diagnostics, runtime);
  const history = registerHistory(
    connection,
    workspace,
    context.settings,
    runtime,
    {
      trust: (what) => context.trust.decideSetting(context.folders, what),
      password: () => context.storePassword(),
    },
    () => context.logSearch(),
  );
  workspace.onDidChange(() => history.listingsChanged());
  return { diagnostics, status, history };
}

function onInitialize(connection: Connection, context: ServerContext, params: InitializeParams): InitializeResult {
  context.abilities = clientAbilitiesOf(params);
  if (params.capabilities.workspace?.configuration === true) {
    context.settings.setPull((scopeUri): Promise<unknown> => connection.workspace.getConfiguration(scopeUri === undefined ? { section: 'toolpin' } : { scopeUri, section: 'toolpin' }));
  }
  const options = initializationOptionsOf(params.initializationOptions);
  if (options.settings) context.settings.pushed(options.settings);
  if (options.trusted !== undefined) context.trust.clientSays(options.trusted);
  context.folders = (params.workspaceFolders ?? []).map((folder) => uriToPath(folder.uri));
  if (context.folders.length === 0 && params.rootUri) context.folders = [uriToPath(params.rootUri)];
  // Documents may be opened before the scan starts (it waits for settings and watcher
  // registration): announcing the folders now holds their verification back until the scan
  // has found every connector, instead of reporting their servers as unknown.
  context.workspace.announceFolders(context.folders);
  if (context.abilities.holdsCredentials) context.useEditorCredentials();
  // A client that cannot create files gets the store entries of its re-pins written by the server
  // (features/storeEntries.ts), through a command its code actions carry.
  const capabilities = context.abilities.canCreateFiles ? SERVER_CAPABILITIES : { ...SERVER_CAPABILITIES, executeCommandProvider: { commands: [WRITE_STORE_ENTRIES_COMMAND] } };
  return { capabilities, serverInfo: { name: 'toolpin', version: TOOLPIN_VERSION } };
}

/** Start-up once the client is ready: settings, file watching, the workspace scan. */
async function onInitialized(connection: Connection, context: ServerContext, features: ReturnType<typeof registerFeatures>): Promise<void> {
  try {
    await context.settings.reload();
    if (context.abilities.canWatchFiles) {
      // A client that offered the capability may still refuse the registration; the scan must
      // run all the same, or every document would wait for it forever.
      const watched = await connection.client
        .register(DidChangeWatchedFilesNotification.type, { watchers: watchedFileGlobs().map((globPattern) => ({ globPattern })) })
        .then(() => true)
        .catch((error: unknown) => {
          connection.console.warn(`toolpin: the client refused to watch files (${String(error)}); changes on disk are seen when files are opened`);
          return false;
        });
      features.history.setFilesWatched(watched);
    }
    await context.scan(features.history);
    features.diagnostics.revalidateAll();
    features.status.schedule();
  } catch (error) {
    connection.console.error(`toolpin: start-up failed: ${String(error)}`);
    // Documents held back for the scan are checked with what is known rather than never.
    await context.workspace.setFolders(context.folders, 0);
    features.diagnostics.revalidateAll();
  }
}

/** Every change is handled at once, side by side; a failure of one is logged, not thrown. */
async function onWatchedFiles(context: ServerContext, history: HistoryFeature, params: DidChangeWatchedFilesParams): Promise<void> {
  await Promise.all(
    params.changes.map((change) =>
      kindOfFile(change.uri)?.role === 'events'
        ? history.update({ rediscover: change.type !== FileChangeType.Changed, file: uriToPath(change.uri) })
        : context.workspace.fileChanged(uriToPath(change.uri), change.type === FileChangeType.Deleted),
    ),
  );
}

export function startServer(connection: Connection, runtime: ServerRuntime): void {
  const documents = new TextDocuments(TextDocument);
  const context = new ServerContext(connection, runtime);
  const { workspace } = context;
  const features = registerFeatures(connection, documents, context, runtime);
  const logger = connection.console;

  connection.onInitialize((params) => onInitialize(connection, context, params));
  connection.onInitialized(() => {
    void runSafe(logger, 'start-up', undefined, undefined, () => onInitialized(connection, context, features));
    if (context.abilities.supportsFolderChanges) {
      connection.workspace.onDidChangeWorkspaceFolders((event) => {
        void runSafe(logger, 'workspace folder change', undefined, undefined, async () => {
          const removed = new Set(event.removed.map((folder) => uriToPath(folder.uri)));
          context.folders = [...context.folders.filter((folder) => !removed.has(folder)), ...event.added.map((folder) => uriToPath(folder.uri))];
          await context.scan(features.history);
          features.diagnostics.revalidateAll();
        });
      });
    }
  });
  connection.onDidChangeConfiguration((change) => {
    const received: unknown = change.settings;
    const pushed: unknown = typeof received === 'object' && received !== null ? Reflect.get(received, 'toolpin') : undefined;
    const before = JSON.stringify(context.settings.current().verify);
    void runSafe(logger, 'settings change', undefined, undefined, async () => {
      if (pushed) context.settings.pushed(pushed);
      await context.settings.reload();
      // Timeouts, TTLs and concurrency live in the listing source: start a fresh one.
      if (JSON.stringify(context.settings.current().verify) !== before) await context.replaceListingSource();
      // Other names for the pin functions make other files documents: scan again.
      if (await workspace.readSourceNames()) await context.scan(features.history);
      workspace.settingsChanged();
      features.diagnostics.revalidateAll();
      // history.logGlobs may have changed: look for logs again.
      await features.history.settingsChanged();
    });
  });
  connection.onDidChangeWatchedFiles((params) => void runSafe(logger, 'watched files', undefined, undefined, () => onWatchedFiles(context, features.history, params)));
  connection.onNotification(DidChangeTrustNotification, (params) => {
    void runSafe(logger, 'toolpin/didChangeTrust', undefined, undefined, async () => {
      context.trust.clientSays(params.trusted);
      features.history.trustChanged();
      await workspace.trustChanged();
    });
  });
  connection.onRequest(RefreshRequest, (params, token) =>
    runSafe(logger, 'toolpin/refresh', token, undefined, async () => {
      // A refresh also re-reads the trust record, so `toolpin trust` takes effect without a restart.
      await context.trust.readRecorded(context.folders);
      features.history.trustChanged();
      await workspace.refresh(params.servers);
    }),
  );
  connection.onRequest(ClearCacheRequest, (token) => runSafe(logger, 'toolpin/clearCache', token, undefined, () => workspace.clearListings()));
  connection.onRequest(ServerInfoRequest, (token) =>
    runSafe(logger, 'toolpin/serverInfo', token, { version: TOOLPIN_VERSION, problemCodes: [] }, () => ({
      version: TOOLPIN_VERSION,
      problemCodes: Object.entries(PROBLEM_CODES).map(([code, info]) => ({ code, severity: info.severity, title: info.title })),
    })),
  );

  // Stale listings (TTL expired) are fetched again in the background, and their documents
  // re-checked, the same way as any other arrival; shutdown ends the re-check.
  const staleCheck = workspace.watchStaleListings();
  connection.onShutdown(async () => {
    staleCheck.dispose();
    features.history.dispose();
    await context.listings.dispose();
  });
  connection.onExit(() => void context.listings.dispose());

  documents.listen(connection);
  connection.listen();
}
