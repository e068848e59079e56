/**
 * A minimal LSP client for tests: starts the real built server as a child process over stdio and
 * speaks JSON-RPC to it with vscode-languageserver-protocol. Tests wait for notifications with a
 * predicate and a timeout, never a fixed sleep.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import {
  createProtocolConnection,
  type Diagnostic,
  DidChangeConfigurationNotification,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  type ProtocolConnection,
  PublishDiagnosticsNotification,
  type PublishDiagnosticsParams,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type TextDocumentContentChangeEvent,
} from 'vscode-languageserver-protocol/node';

export function repoRoot(): string {
  // Compiled tests live in out/test/<suite>/ or out/test/support/.
  return path.resolve(__dirname, '..', '..', '..');
}

export interface TestServer {
  readonly connection: ProtocolConnection;
  readonly process: ChildProcess;
  readonly stderr: () => string;
  open(uri: string, text: string, languageId?: string): void;
  change(uri: string, version: number, changes: TextDocumentContentChangeEvent[]): void;
  close(uri: string): void;
  /** Resolves with the first publication for `uri` that satisfies `accept`, or rejects on timeout. */
  diagnostics(uri: string, accept?: (params: PublishDiagnosticsParams) => boolean, timeoutMs?: number): Promise<PublishDiagnosticsParams>;
  /** Every publication received so far, in order. */
  readonly published: PublishDiagnosticsParams[];
  stop(): Promise<void>;
}

export async function startTestServer(
  options: {
    command?: string[];
    settings?: unknown;
    configuration?: boolean;
    rootUri?: string;
    capabilities?: { workspace?: Record<string, unknown>; textDocument?: Record<string, unknown> };
    /**
     * What the client says about workspace trust, as VS Code does (default: trusted, since tests
     * run their own fixture servers); `null` says nothing, as Neovim and most clients do.
     */
    trusted?: boolean | null;
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<TestServer> {
  const command = options.command ?? [path.join(repoRoot(), 'dist', 'cli.js'), 'lsp', '--stdio'];
  const child = spawn(process.execPath, command, { stdio: ['pipe', 'pipe', 'pipe'], ...(options.env ? { env: options.env } : {}) });
  let stderrText = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderrText += chunk.toString('utf8')));
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const published: PublishDiagnosticsParams[] = [];
  const waiters: Array<{ uri: string; accept: (params: PublishDiagnosticsParams) => boolean; resolve: (params: PublishDiagnosticsParams) => void }> = [];
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
    published.push(params);
    for (const waiter of [...waiters]) {
      if (waiter.uri === params.uri && waiter.accept(params)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(params);
      }
    }
  });
  // Answer workspace/configuration with the given settings section, as an editor would.
  connection.onRequest('workspace/configuration', () => [options.settings ?? {}]);
  connection.listen();
  await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: options.rootUri ?? null,
    capabilities: {
      workspace: { configuration: options.configuration ?? false, ...options.capabilities?.workspace },
      textDocument: { publishDiagnostics: { versionSupport: true }, ...options.capabilities?.textDocument },
    },
    initializationOptions: {
      ...(options.trusted === null ? {} : { trusted: options.trusted ?? true }),
      ...(options.settings ? { settings: options.settings } : {}),
    },
  });
  await connection.sendNotification(InitializedNotification.type, {});

  return {
    connection,
    process: child,
    stderr: () => stderrText,
    published,
    open: (uri, text, languageId = 'jsonc') =>
      void connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId, version: 1, text } }),
    change: (uri, version, contentChanges) =>
      void connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version }, contentChanges }),
    close: (uri) => void connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } }),
    diagnostics: (uri, accept = () => true, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const already = published.find((params) => params.uri === uri && accept(params));
        if (already) return resolve(already);
        const timer = setTimeout(() => reject(new Error(`no matching diagnostics for ${uri} within ${timeoutMs} ms; stderr: ${stderrText}`)), timeoutMs);
        waiters.push({ uri, accept, resolve: (params) => { clearTimeout(timer); resolve(params); } });
      }),
    stop: async () => {
      try {
        await connection.sendRequest(ShutdownRequest.type);
        await connection.sendNotification(ExitNotification.type);
      } catch {
        // The process may already be gone; the kill below is the backstop.
      }
      const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
      connection.dispose();
    },
  };
}

export function notifyConfiguration(server: TestServer, settings: unknown): void {
  void server.connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { toolpin: settings } });
}

/** A compact view of diagnostics for exact assertions: code, severity and range as numbers. */
export function compact(diagnostics: Diagnostic[]): Array<[string, number, number, number, number, number]> {
  return diagnostics.map((diagnostic) => [
    String(diagnostic.code),
    diagnostic.severity ?? 0,
    diagnostic.range.start.line,
    diagnostic.range.start.character,
    diagnostic.range.end.line,
    diagnostic.range.end.character,
  ]);
}
