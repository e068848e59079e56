/**
 * The language server, independent of how it is connected: `startServer(connection, runtime)`.
 * The process entry (main.ts) and the LSP tests (an in-process connection) both call it.
 */
import { type Connection, type InitializeResult, TextDocuments, TextDocumentSyncKind } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { PROBLEM_CODES } from './core/problems';
import { registerDiagnostics } from './features/diagnostics';
import { DEFAULT_SETTINGS, ServerInfoRequest, type ToolpinSettings } from './protocol';
import { runSafe } from './util/runSafe';

/** What the server needs from its host, injected so tests can control time. */
export interface ServerRuntime {
  setTimeout(callback: () => void, milliseconds: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const nodeRuntime: ServerRuntime = {
  setTimeout: (callback, milliseconds) => setTimeout(callback, milliseconds),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The version the bundles were built from; esbuild does not inject it, so it is kept here. */
export const TOOLPIN_VERSION = '0.1.0';

function mergeSettings(received: unknown): ToolpinSettings {
  const section = (received ?? {}) as Partial<{ validate: Partial<ToolpinSettings['validate']> }>;
  const validate = section.validate ?? {};
  return {
    validate: {
      enable: typeof validate.enable === 'boolean' ? validate.enable : DEFAULT_SETTINGS.validate.enable,
      debounceMs:
        typeof validate.debounceMs === 'number' && validate.debounceMs >= 0
          ? Math.min(validate.debounceMs, 5000)
          : DEFAULT_SETTINGS.validate.debounceMs,
    },
  };
}

export function startServer(connection: Connection, runtime: ServerRuntime = nodeRuntime): void {
  const documents = new TextDocuments(TextDocument);
  let settings: ToolpinSettings = DEFAULT_SETTINGS;
  let canPullConfiguration = false;

  connection.onInitialize((params): InitializeResult => {
    canPullConfiguration = params.capabilities.workspace?.configuration === true;
    const options = params.initializationOptions as { settings?: unknown } | undefined;
    if (options?.settings) settings = mergeSettings(options.settings);
    return {
      capabilities: { textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental } },
      serverInfo: { name: 'toolpin', version: TOOLPIN_VERSION },
    };
  });

  const diagnostics = registerDiagnostics(connection, documents, runtime, () => settings);

  const pullSettings = async (): Promise<void> => {
    if (!canPullConfiguration) return;
    try {
      const [section] = await connection.workspace.getConfiguration([{ section: 'toolpin' }]);
      settings = mergeSettings(section);
    } catch (error) {
      connection.console.warn(`toolpin: could not read settings, using defaults: ${String(error)}`);
    }
  };

  connection.onInitialized(() => {
    void pullSettings().then(() => diagnostics.revalidateAll());
  });

  connection.onDidChangeConfiguration((change) => {
    const pushed = (change.settings as { toolpin?: unknown } | undefined)?.toolpin;
    if (pushed) settings = mergeSettings(pushed);
    void pullSettings().then(() => diagnostics.revalidateAll());
  });

  connection.onRequest(ServerInfoRequest, (token) =>
    runSafe(connection.console, 'toolpin/serverInfo', token, { version: TOOLPIN_VERSION, problemCodes: [] }, () => ({
      version: TOOLPIN_VERSION,
      problemCodes: Object.entries(PROBLEM_CODES).map(([code, info]) => ({ code, severity: info.severity, title: info.title })),
    })),
  );

  documents.listen(connection);
  connection.listen();
}
