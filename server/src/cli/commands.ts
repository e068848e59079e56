/**
 * The commands that need the engine, the MCP client or the language server: everything of the CLI
 * but `hash`, `--version` and the help. The build bundles this module into dist/commands.js, which
 * dist/cli.js loads only when one of these commands runs (server/src/cli/main.ts), so that
 * `toolpin hash` starts about as fast as Node itself. dist/commands.js is also the editor's
 * language server: VS Code starts `dist/cli.js lsp --node-ipc`, other editors `toolpin lsp --stdio`.
 */
import { Console } from 'node:console';
import { createConnection, IPCMessageReader, IPCMessageWriter, ProposedFeatures } from 'vscode-languageserver/node';
import { startServer } from '../server';

export { checkCommand, checkWorkspaceFolder } from './checkCommand';
export { historyCommand } from './historyCommand';
export { pinCommand } from './pinCommand';
export { trustCommand } from './trustCommand';
export { useWorkspaceSourceNames } from '../io/sourceNamesFile';

/**
 * Starts the language server on the transport named on the command line. The transport is passed
 * to `createConnection` explicitly, not left to its own scan of `process.argv`, so what `toolpin
 * lsp` accepts is exactly what its usage says. (vscode-languageserver still reads
 * `--clientProcessId` from the command line, to exit when the editor is gone.)
 */
export function startLanguageServer(transport: 'stdio' | 'node-ipc'): void {
  if (transport === 'node-ipc') {
    startServer(createConnection(ProposedFeatures.all, new IPCMessageReader(process), new IPCMessageWriter(process)));
    return;
  }
  // Standard output carries the protocol: a line some library printed with console.log would
  // corrupt it, so the console writes to standard error instead, which clients show as the log.
  const toStderr = new Console({ stdout: process.stderr, stderr: process.stderr });
  for (const method of ['log', 'info', 'debug', 'dir', 'dirxml', 'table'] as const) {
    (console as unknown as Record<string, unknown>)[method] = toStderr[method].bind(toStderr);
  }
  startServer(createConnection(ProposedFeatures.all, process.stdin, process.stdout));
}
export { endProcessTreesOnSignals } from '../mcp/processTree';
