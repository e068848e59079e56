/**
 * The language server, independent of how it is connected: `startServer(connection, runtime)`.
 * `toolpin lsp` (server/src/cli/commands.ts, over --node-ipc or --stdio) and the LSP tests call it.
 */
import * as os from 'node:os';
import { CodeActionKind, type Connection, DidChangeWatchedFilesNotification, FileChangeType, type InitializeResult, TextDocuments, TextDocumentSyncKind } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { PROBLEM_CODES } from './core/problems';
import type { ListingSource } from './engine/listingSource';
import { LiveWorkspace } from './engine/liveWorkspace';
import { nodeRuntime, type ServerRuntime, TOOLPIN_VERSION } from './runtime';
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
import { TrustStore, trustFilePath } from './io/trustStore';
import { decideTrust, type FolderTrust, type TrustVerdict } from './core/trust';
import type { ServerDefinition } from './core/verify/registry';
import {
  ClearCacheRequest,
  DidChangeTrustNotification,
  GetCredentialRequest,
  RefreshRequest,
  ServerInfoRequest,
  type ToolpinInitializationOptions,
} from './protocol';
import { overallTimeoutFor, SettingsStore, type ToolpinSettings } from './settings';
import { runSafe } from './util/runSafe';
import { uriToPath } from './util/uris';

// Re-exported for the CLI, which starts the server from the same bundle.
export { nodeRuntime, type ServerRuntime, TOOLPIN_VERSION } from './runtime';

export function startServer(connection: Connection, runtime: ServerRuntime = nodeRuntime): void {
  // A stray rejection must never take the server down: it is logged, and the server keeps serving.
  process.on('unhandledRejection', (reason) => connection.console.error(`toolpin: unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
  const documents = new TextDocuments(TextDocument);
  const settingsStore = new SettingsStore((message) => connection.console.warn(message));
  const settings = (): ToolpinSettings => settingsStore.current();
  let canWatchFiles = false;
  /**
   * What the client said about trust: VS Code says true or false (workspace trust); other clients
   * say nothing, and then only folders recorded with `toolpin trust` are trusted.
   */
  let clientTrust: boolean | undefined;
  const trustStore = new TrustStore(trustFilePath(runtime.env), (message) => connection.console.warn(message));
  let recordedTrust = new Map<string, FolderTrust>();
  const readRecordedTrust = async (): Promise<void> => {
    const next = new Map<string, FolderTrust>();
    for (const folder of folders) next.set(folder, await trustStore.folderTrust(folder, `run \`toolpin trust ${folder}\` to trust it`));
    recordedTrust = next;
  };
  /** The trust that covers a server definition; the contract is in core/trust.ts. */
  const trustOf = (definition: ServerDefinition): TrustVerdict => {
    // The user's own setting is the user's word, not a repository's (the setting is application-scoped).
    if (definition.origin.kind === 'user-setting') return clientTrust === false ? decideTrust(definition, { kind: 'untrusted', howToTrust: 'trust the workspace in VS Code' }) : { trusted: true };
    if (!workspace.isWorkspaceFolder(definition.cwd)) {
      return decideTrust(definition, { kind: 'untrusted', howToTrust: 'a file outside every workspace folder is never trusted; open its folder and trust it' });
    }
    if (clientTrust === true) return { trusted: true };
    if (clientTrust === false) return decideTrust(definition, { kind: 'untrusted', howToTrust: 'trust the workspace in VS Code to verify its pins' });
    return decideTrust(definition, recordedTrust.get(definition.cwd) ?? { kind: 'untrusted', howToTrust: `run \`toolpin trust ${definition.cwd}\` to trust it` });
  };
  let canCreateFiles = false;
  let supportsFolderChanges = false;
  let canReview = false;
  // Completion items put the cursor before a comma they add only where the client expands snippets.
  let completionSnippets = false;
  let canRefreshCodeLens = false;
  let folders: string[] = [];

  const redactor = new Redactor();
  const log = (line: string): void => connection.console.log(redactor.redact(line));
  // Credentials: the editor's secret storage first (when the client offers it), then the environment.
  let editorCredentials: CredentialResolver = { resolve: async () => undefined };
  const credentials = chainCredentials({ resolve: (name) => editorCredentials.resolve(name) }, environmentCredentials(runtime.env));

  const makeInventory = (): ListingSource =>
    (runtime.createListingSource ?? ((options) => new Inventory(options)))({
      credentials,
      redactor,
      log,
      clientVersion: TOOLPIN_VERSION,
      trust: (definition) => trustOf(definition),
      keepAlive: true,
      requestTimeoutMs: settings().verify.requestTimeoutMs,
      overallTimeoutMs: overallTimeoutFor(settings().verify.requestTimeoutMs),
      concurrency: settings().verify.concurrency,
      minTtlMs: settings().verify.minTtlSeconds * 1000,
      defaultTtlMs: settings().verify.ttlSeconds * 1000,
      now: runtime.now,
      // The one way a listing change reaches the documents (engine/liveWorkspace.ts).
      onListingChanged: (definitions) => workspace.listingsChanged(definitions),
    });
  let inventory = makeInventory();
  // Declared after the inventory factory, whose callbacks use it only once listings arrive.
  const workspace: LiveWorkspace = new LiveWorkspace({
    fileSystem: runtime.fileSystem,
    inventory: () => inventory,
    now: runtime.now,
    env: runtime.env,
    userHome: os.homedir(),
    userServers: () => settings().servers,
    liveEnabled: () => settings().verify.enable,
    log,
    setTimeout: runtime.setTimeout,
  });

  connection.onInitialize((params): InitializeResult => {
    if (params.capabilities.workspace?.configuration === true) {
      settingsStore.setPull((scopeUri): Promise<unknown> => connection.workspace.getConfiguration(scopeUri === undefined ? { section: 'toolpin' } : { scopeUri, section: 'toolpin' }));
    }
    completionSnippets = params.capabilities.textDocument?.completion?.completionItem?.snippetSupport === true;
    canWatchFiles = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    supportsFolderChanges = params.capabilities.workspace?.workspaceFolders === true;
    const workspaceEdit = params.capabilities.workspace?.workspaceEdit;
    canCreateFiles = workspaceEdit?.documentChanges === true && (workspaceEdit.resourceOperations ?? []).includes('create');
    const options = params.initializationOptions as ToolpinInitializationOptions | undefined;
    if (options?.settings) settingsStore.pushed(options.settings);
    if (typeof options?.trusted === 'boolean') clientTrust = options.trusted;
    folders = (params.workspaceFolders ?? []).map((folder) => uriToPath(folder.uri));
    if (folders.length === 0 && params.rootUri) folders = [uriToPath(params.rootUri)];
    // Documents may be opened before the scan starts (it waits for settings and watcher
    // registration): announcing the folders now holds their verification back until the scan
    // has found every connector, instead of reporting their servers as unknown.
    workspace.announceFolders(folders);
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

  const diagnostics = registerDiagnostics(connection, documents, workspace, runtime, settingsStore);
  registerCodeActions(connection, documents, workspace, () => ({ canCreateFiles, canReview }));
  registerHover(connection, documents, workspace, runtime.now);
  registerCompletion(connection, documents, workspace, () => ({ snippets: completionSnippets }));
  registerCodeLens(connection, documents, workspace, diagnostics, { now: runtime.now, setTimeout: runtime.setTimeout, canRefresh: () => canRefreshCodeLens });
  registerReview(connection, documents, workspace, () => ({ canCreateFiles }));
  const status = registerStatus(connection, workspace, diagnostics, runtime);
  const history = registerHistory(connection, workspace, settingsStore);
  workspace.onDidChange(() => history.listingsChanged());

  const scan = async (): Promise<void> => {
    await readRecordedTrust();
    await workspace.setFolders(folders, settings().workspaceScan.enable ? settings().workspaceScan.maxFiles : 0);
    history.setFolders(folders);
  };

  connection.onInitialized(() => {
    void (async () => {
      await settingsStore.reload();
      if (canWatchFiles) {
        // A client that offered the capability may still refuse the registration; the scan must
        // run all the same, or every document would wait for it forever.
        await connection.client
          .register(DidChangeWatchedFilesNotification.type, {
            watchers: [{ globPattern: '**/*.{blueprint,connector}.{json,jsonc}' }, { globPattern: '**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs}' }, { globPattern: '**/{mcp.json,.mcp.json}' }, { globPattern: '**/*.jsonl' }, { globPattern: '**/.toolpin/policy.jsonc' }],
          })
          .catch((error: unknown) => connection.console.warn(`toolpin: the client refused to watch files (${String(error)}); changes on disk are seen when files are opened`));
      }
      await scan();
      diagnostics.revalidateAll();
      status.schedule();
    })().catch((error: unknown) => {
      connection.console.error(`toolpin: start-up failed: ${String(error)}`);
      // Documents held back for the scan are checked with what is known rather than never.
      void workspace.setFolders(folders, 0).then(() => diagnostics.revalidateAll());
    });
    if (supportsFolderChanges) connection.workspace.onDidChangeWorkspaceFolders((event) => {
      const removed = new Set(event.removed.map((folder) => uriToPath(folder.uri)));
      folders = [...folders.filter((folder) => !removed.has(folder)), ...event.added.map((folder) => uriToPath(folder.uri))];
      void scan().then(() => diagnostics.revalidateAll());
    });
  });

  connection.onDidChangeConfiguration((change) => {
    const pushed = (change.settings as { toolpin?: unknown } | undefined)?.toolpin;
    const before = JSON.stringify(settings().verify);
    void (async () => {
      if (pushed) settingsStore.pushed(pushed);
      await settingsStore.reload();
      if (JSON.stringify(settings().verify) !== before) {
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
    clientTrust = params.trusted;
    void workspace.trustChanged();
  });

  connection.onRequest(RefreshRequest, (params, token) =>
    runSafe(connection.console, 'toolpin/refresh', token, undefined, async () => {
      // A refresh also re-reads the trust record, so `toolpin trust` takes effect without a restart.
      await readRecordedTrust();
      await workspace.refresh(params.servers);
    }),
  );
  connection.onRequest(ClearCacheRequest, (token) =>
    runSafe(connection.console, 'toolpin/clearCache', token, undefined, async () => {
      await workspace.clearListings();
    }),
  );

  connection.onRequest(ServerInfoRequest, (token) =>
    runSafe(connection.console, 'toolpin/serverInfo', token, { version: TOOLPIN_VERSION, problemCodes: [] }, () => ({
      version: TOOLPIN_VERSION,
      problemCodes: Object.entries(PROBLEM_CODES).map(([code, info]) => ({ code, severity: info.severity, title: info.title })),
    })),
  );

  // Stale listings (TTL expired) are fetched again in the background, and their documents
  // re-checked, the same way as any other arrival; shutdown ends the re-check.
  const staleCheck = workspace.watchStaleListings();

  connection.onShutdown(async () => {
    staleCheck.dispose();
    history.dispose();
    await inventory.dispose();
  });
  connection.onExit(() => {
    void inventory.dispose();
  });

  documents.listen(connection);
  connection.listen();
}
