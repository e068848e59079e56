/**
 * The language server's process entry (`toolpin lsp`, server/src/cli/commands.ts): the transport
 * named on the command line, the console, the process-wide rejection handler and Node's runtime.
 * Everything else is `startServer` (server/src/server.ts), which takes a connection and a runtime
 * and knows nothing of the process it runs in.
 */
import { Console } from 'node:console';
import { createConnection, IPCMessageReader, IPCMessageWriter, ProposedFeatures } from 'vscode-languageserver/node';
import { nodeRuntime } from './runtime';
import { startServer } from './server';

/**
 * Starts the language server on the transport named on the command line. The transport is passed
 * to `createConnection` explicitly, not left to its own scan of `process.argv`, so what `toolpin
 * lsp` accepts is exactly what its usage says. (vscode-languageserver still reads
 * `--clientProcessId` from the command line, to exit when the editor is gone.)
 */
export function startLanguageServer(transport: 'stdio' | 'node-ipc'): void {
  if (transport === 'stdio') {
    // Standard output carries the protocol: a line some library printed with console.log would
    // corrupt it, so the console writes to standard error instead, which clients show as the log.
    const toStderr = new Console({ stdout: process.stderr, stderr: process.stderr });
    for (const method of ['log', 'info', 'debug', 'dirxml'] as const) console[method] = toStderr[method].bind(toStderr);
    console.dir = toStderr.dir.bind(toStderr);
    console.table = toStderr.table.bind(toStderr);
  }
  const connection =
    transport === 'node-ipc'
      ? createConnection(ProposedFeatures.all, new IPCMessageReader(process), new IPCMessageWriter(process))
      : createConnection(ProposedFeatures.all, process.stdin, process.stdout);
  // A stray rejection must never take the server down: it is logged, and the server keeps serving.
  process.on('unhandledRejection', (reason) => connection.console.error(`toolpin: unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
  // V8's young generation is bounded by the process's entry, dist/cli.js (cli/main.ts prepareProcess).
  startServer(connection, nodeRuntime);
}
