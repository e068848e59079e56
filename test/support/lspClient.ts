/**
 * A minimal LSP client for tests: starts the real built server as a child process over stdio and
 * speaks JSON-RPC to it with vscode-languageserver-protocol, through the session API every LSP test
 * shares (test/support/lspSession.ts). Tests wait for notifications with a predicate and a timeout,
 * never a fixed sleep.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import {
  createProtocolConnection,
  type Diagnostic,
  DidChangeConfigurationNotification,
  ExitNotification,
  type ProtocolConnection,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { type ClientOptions, createSession, initializeClient, type LspSession } from './lspSession';

export function repoRoot(): string {
  // Compiled tests live in out/test/<suite>/ or out/test/support/.
  return path.resolve(__dirname, '..', '..', '..');
}

export interface TestServer extends LspSession {
  readonly process: ChildProcess;
  readonly stderr: () => string;
  stop(): Promise<void>;
}

export async function startTestServer(
  options: ClientOptions & {
    command?: string[];
    env?: NodeJS.ProcessEnv;
    /** The server process's current folder (clients such as Neovim start it in the project). */
    cwd?: string;
  } = {},
): Promise<TestServer> {
  const command = options.command ?? [path.join(repoRoot(), 'dist', 'cli.js'), 'lsp', '--stdio'];
  const child = spawn(process.execPath, command, { stdio: ['pipe', 'pipe', 'pipe'], ...(options.env ? { env: options.env } : {}), ...(options.cwd ? { cwd: options.cwd } : {}) });
  let stderrText = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderrText += chunk.toString('utf8')));
  const connection: ProtocolConnection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const session = createSession(connection, () => `; stderr: ${stderrText}`);
  connection.listen();
  // The server watches this process: it exits when the test process is gone.
  await initializeClient(connection, options, process.pid);

  return {
    ...session,
    process: child,
    stderr: () => stderrText,
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

export function notifyConfiguration(server: Pick<LspSession, 'connection'>, settings: unknown): void {
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
